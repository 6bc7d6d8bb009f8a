//! The files a run writes: never a file it reads, and each replaced whole.
//!
//! A report, log, request dump or HTML page that names an input of the run (a spec, an `.npy`
//! file, a golden, the known-failures file, a report read) or another output is refused before
//! anything runs: writing it would destroy the input. Reports are written to a temporary file
//! beside their place and renamed over it, so a reader (or a crash) never sees half a report.
//!
//! Only a regular file or a path that does not exist is replaced that way. A symbolic link is
//! written through: its target is replaced (the temporary file beside the target), the link
//! kept. A device (`/dev/null`, a terminal) is written in place, never replaced by a file. A
//! FIFO is refused before the run ([`check_outputs`]): a report written into it would wait for
//! a reader, and a run would stop at it; a folder or a socket is refused too.
//!
//! A file replaced keeps its permission bits. SIGINT, SIGTERM and SIGHUP are held back while
//! the temporary file exists (they take effect once it is renamed), so a signal leaves none;
//! a temporary file that a writer killed outright left (`.NAME.PID.N.writing`, its process
//! gone) is removed by the next write of that path, which names it.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// `path` made absolute and free of `.`/`..` and symbolic links as far as it exists: two
/// spellings of one file compare equal.
pub(crate) fn resolved(path: &Path) -> PathBuf {
    if let Ok(path) = path.canonicalize() {
        return path;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => resolved(parent).join(name),
        _ => std::env::current_dir()
            .map(|here| here.join(path))
            .unwrap_or_else(|_| path.to_path_buf()),
    }
}

/// What a run reads, for [`check_outputs`].
#[derive(Debug, Default)]
pub(crate) struct Inputs<'a> {
    /// Files read, each with the flag that names it.
    pub(crate) files: Vec<(&'a str, &'a Path)>,
    /// Folders whose data files are read (spec, sweep and golden folders): any `.yaml`,
    /// `.yml`, `.npy` or `.json` file in them is an input.
    pub(crate) folders: Vec<(&'a str, &'a Path)>,
}

/// The extensions of the files read from an input folder.
const READ_EXTENSIONS: [&str; 4] = ["yaml", "yml", "npy", "json"];

/// `Err` naming the flags when an output names an input file, lies in a folder the run reads,
/// or is also another output.
pub(crate) fn check_outputs(outputs: &[(&str, &Path)], inputs: &Inputs) -> Result<(), String> {
    let outputs: Vec<(&str, PathBuf)> = outputs.iter().map(|(f, p)| (*f, resolved(p))).collect();
    for (index, (flag, path)) in outputs.iter().enumerate() {
        let shown = path.display();
        for (input_flag, input) in &inputs.files {
            if *path == resolved(input) {
                return Err(format!(
                    "{flag} {shown} would overwrite the file {input_flag} reads: give the output another path"
                ));
            }
        }
        for (input_flag, folder) in &inputs.folders {
            let folder = resolved(folder);
            let read = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| READ_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
            if path.starts_with(&folder) && read {
                return Err(format!(
                    "{flag} {shown} would be read as data: it is a .yaml, .yml, .npy or .json file inside {} ({input_flag}); write outputs elsewhere",
                    folder.display()
                ));
            }
        }
        // Two outputs onto one device (`--report-json /dev/null --junit /dev/null`) are fine.
        let device = matches!(writable_kind(path), Ok(Writing::InPlace(_)));
        if let Some((other, _)) = (outputs[..index].iter()).find(|(_, p)| p == path && !device) {
            return Err(format!(
                "{other} and {flag} both name {shown}: give each output its own path"
            ));
        }
        if path.is_dir() {
            return Err(format!("{flag} {shown} is a folder: name a file"));
        }
        if let Err(e) = writable_kind(path) {
            return Err(format!("{flag} {shown}: {e}"));
        }
    }
    Ok(())
}

/// How an output path is written.
#[derive(Debug, PartialEq, Eq)]
enum Writing {
    /// A regular file or a path that does not exist (links followed): a temporary file beside
    /// it, renamed over it.
    Replace(PathBuf),
    /// A device: written in place, never replaced.
    InPlace(PathBuf),
}

/// The most symbolic links followed from one output path (as the kernel's `ELOOP` limit).
const MAX_LINKS: usize = 40;

/// `path` with its symbolic links followed to the file they name, existing or not (a dangling
/// link names the file to create).
fn through_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow (a loop?)"
    )))
}

/// How `path` is written, or why it cannot be: a FIFO, a folder or a socket is refused.
fn writable_kind(path: &Path) -> std::io::Result<Writing> {
    let target = through_links(path)?;
    let metadata = match std::fs::metadata(&target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Writing::Replace(target)),
        Err(e) => return Err(e),
        Ok(metadata) => metadata,
    };
    if metadata.is_file() {
        return Ok(Writing::Replace(target));
    }
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_char_device() || kind.is_block_device() {
        return Ok(Writing::InPlace(target));
    }
    let what = opspec_spec::source::describe(&metadata);
    let why = if kind.is_fifo() {
        "a report or log written into it would wait for a reader"
    } else {
        "only a regular file, a new file or a device is written"
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {what}: {why}; name a regular file"),
    ))
}

/// Writes `contents` to `path` whole: to a uniquely named temporary file beside it (beside a
/// symbolic link's target), then renamed over it. On failure `path` is as it was and the
/// temporary file is gone. A device is written in place; a FIFO, a folder or a socket is an
/// error, and nothing is written.
pub(crate) fn write_replacing(path: &Path, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    match writable_kind(path)? {
        Writing::Replace(target) => replace(&target, contents.as_ref()),
        Writing::InPlace(target) => std::fs::OpenOptions::new()
            .write(true)
            .open(target)?
            .write_all(contents.as_ref()),
    }
}

/// The temporary files this process is writing now ([`replace`]): any other file of its
/// process id beside a path is a leftover of an earlier process that had the same id.
fn in_flight() -> &'static Mutex<BTreeSet<PathBuf>> {
    static IN_FLIGHT: OnceLock<Mutex<BTreeSet<PathBuf>>> = OnceLock::new();
    IN_FLIGHT.get_or_init(Mutex::default)
}

/// Whether process `pid` runs (as far as this process can tell: one it may not signal runs).
fn process_runs(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The temporary files beside `path` (`.NAME.PID.N.writing`, [`replace`]) that a writer left
/// when it was killed while writing (SIGKILL, a crash): their process no longer runs, or is
/// this one and is not writing them.
pub(crate) fn leftovers(path: &Path) -> Vec<PathBuf> {
    let (Some(name), Some(folder)) = (path.file_name(), path.parent()) else {
        return Vec::new();
    };
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let writing = in_flight().lock().unwrap_or_else(|p| p.into_inner());
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|entry| {
            let file = entry.file_name().to_str()?.to_owned();
            let rest = file.strip_prefix(&prefix)?.strip_suffix(".writing")?;
            let (pid, count) = rest.split_once('.')?;
            let pid: u32 = pid.parse().ok()?;
            count.parse::<u64>().ok()?;
            let path = folder.join(&file);
            let gone = if pid == std::process::id() {
                !writing.contains(&path)
            } else {
                !process_runs(pid)
            };
            (gone && entry.file_type().ok()?.is_file()).then_some(path)
        })
        .collect();
    found.sort();
    found
}

/// Why `path` (its target, links followed) may not be replaced by a new file: it has other
/// hard links, which would keep the old text (and writing it in place could leave it half
/// written), or it is read-only (no write permission for anyone). `Ok` for a new path or a
/// device.
pub(crate) fn check_replaceable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let target = through_links(path).map_err(|e| e.to_string())?;
    let Ok(metadata) = std::fs::metadata(&target) else {
        return Ok(());
    };
    if !metadata.is_file() {
        return Ok(());
    }
    if metadata.nlink() > 1 {
        return Err(format!(
            "{} has {} hard links: a new file in its place would part it from the others, which would keep the old text, and writing it in place could leave it half written if stopped; nothing was written (write elsewhere with --out, or remove the other links)",
            target.display(),
            metadata.nlink()
        ));
    }
    if metadata.permissions().readonly() {
        return Err(format!(
            "{} is read-only (mode {:04o}): nothing was written (make it writable, or write elsewhere with --out)",
            target.display(),
            metadata.permissions().mode() & 0o7777
        ));
    }
    Ok(())
}

/// SIGINT, SIGTERM and SIGHUP held back for this thread while it lives: a signal that comes
/// meanwhile takes effect when it is dropped.
struct SignalsHeld {
    old: libc::sigset_t,
}

impl SignalsHeld {
    fn new() -> SignalsHeld {
        // SAFETY: plain sigset_t values, initialised by sigemptyset before use.
        unsafe {
            let mut held: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut held);
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(&mut held, signal);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &held, &mut old);
            SignalsHeld { old }
        }
    }
}

impl Drop for SignalsHeld {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

/// Writes `contents` to a temporary file beside `path`, then renames it over `path`. The new
/// file gets the permission bits of the one it replaces. SIGINT, SIGTERM and SIGHUP are held
/// back from the temporary file's creation to the rename (they take effect after it), so a
/// signal leaves no temporary file; what a writer killed outright left is removed first, and
/// named.
fn replace(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    for leftover in leftovers(path) {
        if std::fs::remove_file(&leftover).is_ok() {
            eprintln!(
                "note: removed {}, left by a write of {} that was killed",
                leftover.display(),
                path.display()
            );
        }
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(
        ".{name}.{}.{}.writing",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mode = std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.permissions().mode() & 0o7777);
    let _held = SignalsHeld::new();
    in_flight()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(temporary.clone());
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        if let Some(mode) = mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        file.write_all(contents)?;
        file.sync_all()?;
        pause_for_a_test();
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    in_flight()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&temporary);
    result
}

/// The hook of the tests of a signal during a write (`OPSPEC_WRITE_PAUSE=<marker file>`): with
/// the temporary file written and signals held, create the marker and wait until one of the
/// held signals is pending; the rename then goes on, and the signal takes effect after it. The
/// test signals once it sees the marker, so the signal surely comes during the write.
fn pause_for_a_test() {
    let Some(marker) = std::env::var_os("OPSPEC_WRITE_PAUSE") else {
        return;
    };
    let _ = std::fs::write(marker, std::process::id().to_string());
    loop {
        // SAFETY: a plain sigset_t, filled by sigpending before it is read.
        let pending = unsafe {
            let mut pending: libc::sigset_t = std::mem::zeroed();
            libc::sigpending(&mut pending);
            pending
        };
        let held = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
        // SAFETY: `pending` was filled above.
        if held
            .iter()
            .any(|&s| unsafe { libc::sigismember(&pending, s) } == 1)
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_naming_an_input_or_another_output_is_refused() {
        let scratch = tempfile::tempdir().unwrap();
        let known = scratch.path().join("k.txt");
        std::fs::write(&known, "x").unwrap();
        let specs = scratch.path().join("specs");
        std::fs::create_dir(&specs).unwrap();
        let inputs = Inputs {
            files: vec![("--expectations", &known)],
            folders: vec![("--specs", &specs)],
        };
        // Another spelling of the same file.
        let other = scratch.path().join("specs/../k.txt");
        let error = check_outputs(&[("--report-json", &other)], &inputs).unwrap_err();
        assert!(error.contains("--expectations"), "{error}");
        let spec = specs.join("shuffle/basic.yaml");
        let error = check_outputs(&[("--report-json", &spec)], &inputs).unwrap_err();
        assert!(error.contains("--specs"), "{error}");
        let report = scratch.path().join("r.json");
        let error = check_outputs(&[("--report-json", &report), ("--junit", &report)], &inputs)
            .unwrap_err();
        assert!(error.contains("both name"), "{error}");
        assert!(check_outputs(&[("--report-json", &report)], &inputs).is_ok());
        assert_eq!(std::fs::read_to_string(&known).unwrap(), "x");
    }

    #[test]
    fn a_report_replaces_its_file_whole_and_leaves_no_temporary() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("r.json");
        std::fs::write(&path, "old").unwrap();
        write_replacing(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        // A write that fails (its folder is gone) leaves nothing behind.
        let missing = scratch.path().join("gone/r.json");
        assert!(write_replacing(&missing, "x").is_err());
        let names: Vec<_> = std::fs::read_dir(scratch.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.json"]);
    }

    /// A private character device 1,3 (what `/dev/null` is) in `folder`, made with mknod:
    /// `None` where this process may not make devices (not root, or a container without the
    /// capability).
    fn null_device(folder: &Path) -> Option<PathBuf> {
        let path = folder.join("null");
        let made = std::process::Command::new("mknod")
            .arg(&path)
            .args(["c", "1", "3"])
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        made.then_some(path)
    }

    fn kind(path: &Path) -> std::fs::FileType {
        std::fs::symlink_metadata(path).unwrap().file_type()
    }

    #[test]
    fn a_device_output_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let scratch = tempfile::tempdir().unwrap();
        let Some(null) = null_device(scratch.path()) else {
            eprintln!("skipped: mknod is not allowed here (the test needs root)");
            return;
        };
        write_replacing(&null, "a report").unwrap();
        assert!(kind(&null).is_char_device(), "the device was replaced");
        // A link to the device writes through it too.
        let link = scratch.path().join("link");
        std::os::unix::fs::symlink(&null, &link).unwrap();
        write_replacing(&link, "a report").unwrap();
        assert!(kind(&link).is_symlink() && kind(&null).is_char_device());
        assert!(check_outputs(&[("--junit", &null)], &Inputs::default()).is_ok());
        let both = [
            ("--junit", null.as_path()),
            ("--report-json", null.as_path()),
        ];
        assert!(check_outputs(&both, &Inputs::default()).is_ok());
        let names: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "a temporary file was left");
    }

    #[test]
    fn a_fifo_output_is_refused_before_the_run_naming_it() {
        use std::os::unix::fs::FileTypeExt;
        let scratch = tempfile::tempdir().unwrap();
        let fifo = scratch.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for flag in [
            "--report-json",
            "--junit",
            "--backend-log",
            "--dump-requests",
            "--logfile",
        ] {
            let error = check_outputs(&[(flag, &fifo)], &Inputs::default()).unwrap_err();
            assert!(error.contains(flag) && error.contains("FIFO"), "{error}");
            assert!(error.contains(&fifo.display().to_string()), "{error}");
        }
        // Written anyway, it is an error; nothing waits and the FIFO stays.
        let error = write_replacing(&fifo, "x").unwrap_err();
        assert!(error.to_string().contains("FIFO"), "{error}");
        assert!(kind(&fifo).is_fifo());
    }

    #[test]
    fn a_symlinked_output_replaces_its_target_and_keeps_the_link() {
        let scratch = tempfile::tempdir().unwrap();
        let folder = scratch.path().join("reports");
        std::fs::create_dir(&folder).unwrap();
        let target = folder.join("target.json");
        std::fs::write(&target, "old").unwrap();
        let link = scratch.path().join("link.json");
        std::os::unix::fs::symlink("reports/target.json", &link).unwrap();
        write_replacing(&link, "new").unwrap();
        assert!(kind(&link).is_symlink(), "the link was replaced by a file");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A dangling link names the file to create.
        let dangling = scratch.path().join("dangling.json");
        std::os::unix::fs::symlink("reports/new.json", &dangling).unwrap();
        write_replacing(&dangling, "made").unwrap();
        assert!(kind(&dangling).is_symlink());
        assert_eq!(
            std::fs::read_to_string(folder.join("new.json")).unwrap(),
            "made"
        );
        let mut names: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["new.json", "target.json"]);
    }
}
