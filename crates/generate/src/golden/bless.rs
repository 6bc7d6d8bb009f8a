//! Blessing: unused goldens removed, each sweep switched to its new goldens under the lock.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::fault::Step;
use super::manifest::{
    entry_file, file_name_of, read_manifest, Entry, GoldenId, Manifest, SweepKey,
};
use super::store::{discard, name_of, sorted_dirs, sorted_entries, staged_path, write_new};
use super::{GoldenError, GoldenErrorKind, GoldenStore};
use opspec::ops::Op;

/// A golden file or manifest entry that no generated case uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unused {
    /// A short stable name: `<op>/<stem>/<key or file>` or `<op>/<stem>.json`.
    pub name: String,
    pub message: String,
    removal: Removal,
}

impl Unused {
    /// Whether blessing removes it: an orphan of a loaded sweep. A manifest of a sweep that was
    /// not loaded is only reported.
    pub fn removable(&self) -> bool {
        !matches!(self.removal, Removal::Manifest(..) | Removal::Folder)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Removal {
    /// The whole manifest and its folder, of a sweep not loaded: never removed by blessing.
    Manifest(String, String),
    /// One manifest entry (and its file).
    Entry(String, String, String),
    /// One file no entry names (removed only if the final manifest does not name it either).
    File(PathBuf),
    /// A folder where a golden or a manifest belongs: reported, never removed.
    Folder,
}

/// What a blessing run changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlessSummary {
    /// Goldens (manifest entries) written.
    pub written: usize,
    /// Unused goldens removed: manifest entries, files no entry named.
    pub removed: usize,
    pub manifests: Vec<PathBuf>,
    /// One line per removal: the file, or the entry that had none.
    pub removals: Vec<String>,
    /// One line per manifest kept although no loaded sweep uses it.
    pub kept: Vec<String>,
}

impl GoldenStore {
    /// The manifests, entries and files that no generated case uses, given every generated
    /// case's id (all of them: a partial list would report the rest as unused). The files of a
    /// manifest that is missing or cannot be read are not listed: nothing shows them unused.
    pub fn unused(&self, used: &BTreeSet<GoldenId>) -> Vec<Unused> {
        let mut sweeps: BTreeMap<SweepKey, BTreeSet<&str>> = BTreeMap::new();
        for id in used {
            sweeps
                .entry((id.op.name().to_owned(), id.stem.clone()))
                .or_default()
                .insert(id.key.as_str());
        }
        let mut unused = Vec::new();
        for op_dir in sorted_dirs(&self.root) {
            let op = name_of(&op_dir);
            let mut stems = BTreeSet::new();
            for path in sorted_entries(&op_dir) {
                let name = name_of(&path);
                if path.is_dir() && name.ends_with(".json") {
                    // A manifest's name taken by a folder: blessing removes no folder.
                    let message = format!(
                        "{} is a folder where a manifest file belongs; remove it by hand (blessing removes no folder)",
                        self.shown(&format!("{op}/{name}"))
                    );
                    unused.push(Unused {
                        name: format!("{op}/{name}"),
                        message,
                        removal: Removal::Folder,
                    });
                } else if path.is_dir() {
                    stems.insert(name);
                } else if let Some(stem) = name.strip_suffix(".json") {
                    stems.insert(stem.to_owned());
                } else {
                    unused.push(Unused {
                        name: format!("{op}/{name}"),
                        message: format!(
                            "{} is not a golden manifest or folder; remove it",
                            self.shown(&format!("{op}/{name}"))
                        ),
                        removal: Removal::File(path.clone()),
                    });
                }
            }
            for stem in stems {
                let key = (op.clone(), stem.clone());
                let Some(keys) = sweeps.get(&key) else {
                    let message = format!(
                        "{} and {} belong to no sweep loaded in this run (no {op}/{stem}.yaml in the sweep folders): if the sweep is gone, delete them (blessing removes only goldens of the sweeps it loads); if they belong to another sweeps folder, give this one its own golden folder (`OPSPEC_GOLDEN`)",
                        self.shown(&format!("{op}/{stem}.json")),
                        self.shown(&format!("{op}/{stem}/"))
                    );
                    unused.push(Unused {
                        name: format!("{op}/{stem}.json"),
                        message,
                        removal: Removal::Manifest(op.clone(), stem.clone()),
                    });
                    continue;
                };
                let manifest = self.manifest(&op, &stem);
                let named: BTreeSet<String> = match manifest.as_ref() {
                    Ok(Some(m)) => m.cases.iter().map(|(k, e)| entry_file(k, e)).collect(),
                    _ => continue,
                };
                let entries: BTreeSet<String> = match manifest.as_ref() {
                    Ok(Some(m)) => m.cases.keys().cloned().collect(),
                    // Every case of the sweep fails on the manifest itself; its files are
                    // neither shown unused nor removed.
                    _ => continue,
                };
                for entry in &entries {
                    if !keys.contains(entry.as_str()) {
                        let message = format!(
                            "the golden of `{entry}` in {} is not used by any generated case (the case was removed or renamed): run `OPSPEC_BLESS=1 cargo test` to remove it",
                            self.shown(&format!("{op}/{stem}.json"))
                        );
                        unused.push(Unused {
                            name: format!("{op}/{stem}/{entry}"),
                            message,
                            removal: Removal::Entry(op.clone(), stem.clone(), entry.clone()),
                        });
                    }
                }
                let files = named;
                for path in sorted_entries(&self.root.join(&op).join(&stem)) {
                    let name = name_of(&path);
                    if path.is_dir() {
                        let message = format!(
                            "{} is a folder inside a sweep's golden folder, which holds only .npy files; remove it by hand (blessing removes no folder)",
                            self.shown(&format!("{op}/{stem}/{name}"))
                        );
                        unused.push(Unused {
                            name: format!("{op}/{stem}/{name}"),
                            message,
                            removal: Removal::Folder,
                        });
                    } else if !files.contains(&name) {
                        let message = format!(
                            "{} is not named by {}: no generated case uses it; remove it, or run `OPSPEC_BLESS=1 cargo test`",
                            self.shown(&format!("{op}/{stem}/{name}")),
                            self.shown(&format!("{op}/{stem}.json"))
                        );
                        unused.push(Unused {
                            name: format!("{op}/{stem}/{name}"),
                            message,
                            removal: Removal::File(path),
                        });
                    }
                }
            }
        }
        unused
    }

    /// Schedules the removal of an unused golden (blessing only), done at [`Self::finish`];
    /// a manifest of a sweep not loaded is only listed as kept.
    pub fn remove(&self, unused: &Unused) {
        match &unused.removal {
            Removal::Manifest(op, stem) => {
                self.kept
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert((op.clone(), stem.clone()));
            }
            Removal::Entry(op, stem, key) => {
                let file = match self.manifest(op, stem).as_ref() {
                    Ok(Some(m)) => m.cases.get(key).map(|e| entry_file(key, e)),
                    _ => None,
                }
                .unwrap_or_else(|| file_name_of(key));
                self.updates
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry((op.clone(), stem.clone()))
                    .or_default()
                    .insert(key.clone(), None);
                self.removals
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(self.root.join(op).join(stem).join(file), false);
            }
            Removal::Folder => {}
            Removal::File(path) => {
                self.removals
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(path.clone(), true);
            }
        }
    }

    /// Switches every sweep that changed to its new goldens, each all or nothing, then removes
    /// what was scheduled for removal and that the final manifests do not name.
    ///
    /// Per sweep: the new goldens are already staged beside the old under names of this run's
    /// own. (1) The manifest is replaced, by a rename, with one that names the staged files
    /// (`file`): the one step that switches the sweep; before it nothing the old manifest names
    /// has changed, after it everything the new one names is in place. (2) Each new golden is
    /// linked to its usual name, replacing the old file by a rename; (3) the manifest is
    /// replaced again with the usual names; (4) the staged names go. A bless stopped anywhere
    /// leaves a manifest whose files are all there and right, and at most files of its own,
    /// which the next bless reports and removes. Blesses of one golden folder take turns
    /// (the bless lock).
    pub fn finish(&self) -> Result<BlessSummary, GoldenError> {
        let write = |message: String| GoldenError::new(GoldenErrorKind::Write, message);
        let mut summary = BlessSummary::default();
        let updates = std::mem::take(&mut *self.updates.lock().unwrap_or_else(|p| p.into_inner()));
        let mut staged =
            std::mem::take(&mut *self.staged.lock().unwrap_or_else(|p| p.into_inner()));
        let failed = std::mem::take(&mut *self.failed.lock().unwrap_or_else(|p| p.into_inner()));
        let _lock = match BlessLock::take(&self.root) {
            Some(Ok((lock, taken_over))) => {
                summary.removals.extend(taken_over);
                Some(lock)
            }
            Some(Err(message)) => {
                discard(staged.into_values());
                return Err(write(message));
            }
            None => None,
        };
        summary
            .removals
            .extend(self.clear_leftovers(&staged.values().cloned().collect()));
        let mut finals: HashMap<SweepKey, Manifest> = HashMap::new();
        let mut errors = Vec::new();
        for ((op, stem), changes) in updates {
            let dir = self.root.join(&op).join(&stem);
            let ours: Vec<(PathBuf, PathBuf)> = changes
                .keys()
                .filter_map(|key| {
                    let path = dir.join(file_name_of(key));
                    staged.remove(&path).map(|staged| (path, staged))
                })
                .collect();
            if failed.contains(&(op.clone(), stem.clone())) {
                discard(ours.into_iter().map(|(_, staged)| staged));
                errors.push(format!(
                    "{} was left as it was: one of its goldens could not be written",
                    self.shown(&format!("{op}/{stem}.json"))
                ));
                continue;
            }
            match self.switch(&op, &stem, changes, &ours, &mut summary) {
                Ok(manifest) => {
                    summary.manifests.push(self.manifest_path(&op, &stem));
                    finals.insert((op, stem), manifest);
                }
                Err(SwitchFailure { switched, message }) => {
                    if !switched {
                        discard(ours.into_iter().map(|(_, staged)| staged));
                    }
                    errors.push(message);
                }
            }
        }
        // A staged golden whose entry was not written (none today) is not kept half-done.
        discard(staged.into_values());
        if !errors.is_empty() {
            return Err(write(errors.join("\n")));
        }
        let removals =
            std::mem::take(&mut *self.removals.lock().unwrap_or_else(|p| p.into_inner()));
        for (path, counts) in removals {
            if self.named_by_final_manifest(&path, &finals) {
                continue;
            }
            if std::fs::remove_file(&path).is_ok() {
                if counts {
                    summary.removed += 1;
                }
                let relative = path.strip_prefix(&self.root).unwrap_or(&path);
                summary.removals.push(format!(
                    "removed: {}",
                    self.shown(&relative.to_string_lossy())
                ));
            }
        }
        let kept = std::mem::take(&mut *self.kept.lock().unwrap_or_else(|p| p.into_inner()));
        for (op, stem) in kept {
            summary.kept.push(format!(
                "kept: {} and {} (no sweep loaded in this run uses them; delete them by hand if their sweep is gone)",
                self.shown(&format!("{op}/{stem}.json")),
                self.shown(&format!("{op}/{stem}/"))
            ));
        }
        // Folders left empty go too.
        for op_dir in sorted_dirs(&self.root) {
            for dir in sorted_dirs(&op_dir) {
                let _ = std::fs::remove_dir(dir);
            }
            let _ = std::fs::remove_dir(op_dir);
        }
        Ok(summary)
    }

    /// Switches one sweep (see [`GoldenStore::finish`]); the error says whether the manifest
    /// had switched when it failed.
    fn switch(
        &self,
        op: &str,
        stem: &str,
        changes: BTreeMap<String, Option<Entry>>,
        ours: &[(PathBuf, PathBuf)],
        summary: &mut BlessSummary,
    ) -> Result<Manifest, SwitchFailure> {
        let before = |e: std::io::Error| SwitchFailure::before(e.to_string());
        let op_value =
            Op::from_name(op).ok_or_else(|| SwitchFailure::before(format!("unknown op {op}")))?;
        let old = match self.manifest(op, stem).as_ref() {
            Ok(Some(m)) => Some(m.clone()),
            _ => None,
        };
        let mut manifest = old.clone().unwrap_or_else(|| Manifest::new(op_value, stem));
        let dir = self.root.join(op).join(stem);
        for (key, change) in changes {
            // The file the old manifest names for the entry goes once nothing names it.
            if let Some(entry) = old.as_ref().and_then(|m| m.cases.get(&key)) {
                if entry.sha256.is_some() {
                    self.removals
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(dir.join(entry_file(&key, entry)))
                        .or_insert(false);
                }
            }
            match change {
                Some(entry) => {
                    summary.written += 1;
                    manifest.cases.insert(key, entry);
                }
                None => {
                    summary.removed += 1;
                    if manifest
                        .cases
                        .remove(&key)
                        .is_some_and(|e| e.sha256.is_none())
                    {
                        summary.removals.push(format!(
                            "removed: entry `{key}` of {}",
                            self.shown(&format!("{op}/{stem}.json"))
                        ));
                    }
                }
            }
        }
        let path = self.manifest_path(op, stem);
        let shown = path.display().to_string();
        // (1) The switch: a manifest naming the staged files.
        let mut switching = manifest.clone();
        for (final_path, staged) in ours {
            let key = switching
                .cases
                .iter()
                .find(|(k, _)| dir.join(file_name_of(k)) == *final_path)
                .map(|(k, _)| k.clone());
            if let Some(entry) = key.and_then(|k| switching.cases.get_mut(&k)) {
                entry.file = Some(name_of(staged));
            }
        }
        std::fs::create_dir_all(self.root.join(op)).map_err(before)?;
        let staged_manifest = staged_path(&path);
        self.fault(Step::Manifest)
            .and_then(|()| write_new(&staged_manifest, switching.to_json().as_bytes()))
            .map_err(|e| {
                let _ = std::fs::remove_file(&staged_manifest);
                SwitchFailure::before(format!("cannot write {}: {e}", staged_manifest.display()))
            })?;
        self.fault(Step::Switch)
            .and_then(|()| std::fs::rename(&staged_manifest, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&staged_manifest);
                SwitchFailure::before(format!("cannot switch {shown} to the new goldens: {e}"))
            })?;
        // Switched: what follows only renames the new files to their usual names.
        let after = |e: std::io::Error| {
            let message = format!(
                "{shown} switched to the new goldens, but their usual names are not all in place ({e}); the next bless finishes it"
            );
            SwitchFailure {
                switched: true,
                message,
            }
        };
        for (final_path, staged) in ours {
            let link = staged_path(final_path);
            self.fault(Step::Link)
                .and_then(|()| {
                    std::fs::hard_link(staged, &link)
                        .or_else(|_| std::fs::copy(staged, &link).map(|_| ()))
                })
                .and_then(|()| std::fs::rename(&link, final_path))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&link);
                    after(e)
                })?;
        }
        let staged_manifest = staged_path(&path);
        self.fault(Step::Rename)
            .and_then(|()| write_new(&staged_manifest, manifest.to_json().as_bytes()))
            .and_then(|()| std::fs::rename(&staged_manifest, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&staged_manifest);
                after(e)
            })?;
        self.fault(Step::Cleanup).map_err(after)?;
        discard(ours.iter().map(|(_, staged)| staged.clone()));
        Ok(manifest)
    }

    /// The files an interrupted or failed bless left (see [`GoldenStore::finish`]), each as
    /// a line naming it, for a run that does not bless: the next bless removes them.
    pub fn leftovers(&self) -> Vec<String> {
        (self.leftover_files(&BTreeSet::new()).iter())
            .map(|path| {
                let relative = path.strip_prefix(&self.root).unwrap_or(path);
                format!(
                    "{} was left by a bless that was stopped or failed; the next bless removes it",
                    self.shown(&relative.to_string_lossy())
                )
            })
            .collect()
    }

    /// The hidden staged files of a bless that is gone, not named by their manifest: those
    /// of a process no longer alive, of this process but not staged by it (an earlier process
    /// had its pid, as happens in a fresh container), or older than the live process that now
    /// has the pid.
    fn leftover_files(&self, ours: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for op_dir in sorted_dirs(&self.root) {
            let mut folders = vec![op_dir.clone()];
            folders.extend(sorted_dirs(&op_dir));
            for dir in folders {
                let mut entries: Vec<PathBuf> = (std::fs::read_dir(&dir).into_iter())
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .collect();
                entries.sort();
                for path in entries {
                    let Some(pid) = staged_owner(&name_of(&path)) else {
                        continue;
                    };
                    if ours.contains(&path) || self.named(&path) {
                        continue;
                    }
                    let mine = pid == std::process::id();
                    if !mine && process_alive(pid) && !started_after(pid, &path) {
                        continue;
                    }
                    found.push(path);
                }
            }
        }
        found
    }

    /// Removes the files an interrupted or failed bless left ([`Self::leftover_files`]) and
    /// lists each.
    fn clear_leftovers(&self, ours: &BTreeSet<PathBuf>) -> Vec<String> {
        let mut lines = Vec::new();
        for path in self.leftover_files(ours) {
            if std::fs::remove_file(&path).is_ok() {
                let relative = path.strip_prefix(&self.root).unwrap_or(&path);
                lines.push(format!(
                    "removed: {} (left by a bless that was stopped or failed)",
                    self.shown(&relative.to_string_lossy())
                ));
            }
        }
        lines
    }

    /// Whether the manifest on disk names `path` (a golden file).
    fn named(&self, path: &Path) -> bool {
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return true;
        };
        let parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let [op, stem, file] = parts.as_slice() else {
            return false;
        };
        let manifest = self.manifest_path(op, stem);
        match read_manifest(&manifest)
            .ok()
            .and_then(|text| serde_json::from_str::<Manifest>(&text).ok())
        {
            Some(m) => m.cases.iter().any(|(k, e)| &entry_file(k, e) == file),
            None => false,
        }
    }

    /// Whether `path`, a golden file, is named by its sweep's manifest as this run leaves it.
    fn named_by_final_manifest(&self, path: &Path, finals: &HashMap<SweepKey, Manifest>) -> bool {
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return true; // outside the golden folder: never ours to remove
        };
        let parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let [op, stem, file] = parts.as_slice() else {
            return false; // a stray file directly under an op folder
        };
        let key = (op.clone(), stem.clone());
        let loaded;
        let manifest = match finals.get(&key) {
            Some(manifest) => manifest,
            None => match self.manifest(op, stem).as_ref() {
                Ok(Some(manifest)) => {
                    loaded = manifest.clone();
                    &loaded
                }
                Ok(None) => return false,
                Err(_) => return true, // unreadable: nothing shows the file unused
            },
        };
        manifest
            .cases
            .iter()
            .any(|(k, entry)| entry.sha256.is_some() && &entry_file(k, entry) == file)
    }
}

/// The pid in a name [`staged_path`] made (or the fixed `.<name>.blessing` of earlier
/// versions, owner unknown: 0).
fn staged_owner(name: &str) -> Option<u32> {
    if !name.starts_with('.') {
        return None;
    }
    if name.ends_with(".blessing") {
        return Some(0);
    }
    let rest = name.strip_suffix(".staged")?;
    let mut parts = rest.rsplitn(3, '.');
    let _counter: u64 = parts.next()?.parse().ok()?;
    parts.next()?.parse().ok()
}

/// Whether the live process `pid` started after `path` was last written: then the file is
/// not its own (the pid was reused).
fn started_after(pid: u32, path: &Path) -> bool {
    // A process's folder in /proc carries its start time.
    let started = std::fs::metadata(format!("/proc/{pid}")).and_then(|m| m.modified());
    let written = std::fs::metadata(path).and_then(|m| m.modified());
    matches!((started, written), (Ok(started), Ok(written)) if started > written)
}

/// Whether process `pid` runs: a process killed but not yet reaped by its parent (a zombie,
/// state `Z` or `X` in `/proc/<pid>/stat`) keeps its `/proc` folder, but is gone, and so are
/// its staged files and its lock.
fn process_alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    if pid == std::process::id() {
        return true;
    }
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) state ...`: the command may hold spaces and parentheses.
    stat.rsplit_once(')')
        .and_then(|(_, fields)| fields.split_whitespace().next())
        .is_some_and(|state| state != "Z" && state != "X")
}

/// Blesses of one golden folder take turns: `<golden>/.bless.lock` holds the pid of the one
/// switching its sweeps. A lock whose process is gone (killed) is taken over.
struct BlessLock(PathBuf);

/// How long a lock may be without its pid: longer, its bless was stopped before writing it.
const LOCK_WRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long ago `path` was last written (zero when that cannot be told).
fn lock_age(path: &Path) -> std::time::Duration {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|written| written.elapsed().ok())
        .unwrap_or_default()
}

/// How long a bless waits for another to finish switching.
pub(super) const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

impl BlessLock {
    /// The lock, and a line saying so when it was taken over from a bless that was killed;
    /// `None` when there is no golden folder to lock.
    fn take(root: &Path) -> Option<Result<(BlessLock, Option<String>), String>> {
        let path = root.join(".bless.lock");
        if !root.is_dir() {
            return None;
        }
        let mut taken_over = None;
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut file) => {
                    use std::io::Write as _;
                    // A lock without its pid could not be told from a stale one.
                    if let Err(e) =
                        write!(file, "{}", std::process::id()).and_then(|()| file.sync_all())
                    {
                        let _ = std::fs::remove_file(&path);
                        return Some(Err(format!(
                            "cannot write the bless lock {}: {e}",
                            path.display()
                        )));
                    }
                    return Some(Ok((BlessLock(path), taken_over)));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let owner = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|t| t.trim().parse::<u32>().ok());
                    match owner {
                        // Empty or unreadable for longer than a bless takes to write its pid:
                        // that bless was stopped in between.
                        None if lock_age(&path) > LOCK_WRITE_WAIT => {
                            let _ = std::fs::remove_file(&path);
                            taken_over = Some(format!(
                                "removed: {} (the lock of a bless that was stopped before it wrote its pid)",
                                path.display()
                            ));
                            continue;
                        }
                        // Being written this instant: look again.
                        None => {}
                        Some(pid) if !process_alive(pid) => {
                            let _ = std::fs::remove_file(&path);
                            taken_over = Some(format!(
                                "removed: {} (the lock of a bless, pid {pid}, that was stopped)",
                                path.display()
                            ));
                            continue;
                        }
                        Some(_) => {}
                    }
                    if std::time::Instant::now() > deadline {
                        return Some(Err(format!(
                            "another bless (pid {}) has been switching {} for {} s: its lock is {}; wait for it, or remove the lock if that process is gone",
                            owner.map_or("unknown".into(), |p| p.to_string()),
                            root.display(),
                            LOCK_WAIT.as_secs(),
                            path.display()
                        )));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => {
                    return Some(Err(format!(
                        "cannot take the bless lock {}: {e}",
                        path.display()
                    )))
                }
            }
        }
    }
}

impl Drop for BlessLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A sweep's goldens could not be switched to the new ones ([`GoldenStore::finish`]): why, and
/// whether its manifest had already switched (then only the new files' usual names are
/// missing, which the next bless finishes).
struct SwitchFailure {
    switched: bool,
    message: String,
}

impl SwitchFailure {
    /// A failure before the manifest switched: the sweep is left as it was.
    fn before(message: String) -> SwitchFailure {
        SwitchFailure {
            switched: false,
            message,
        }
    }
}
