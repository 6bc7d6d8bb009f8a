//! Golden files: the expected outputs of generated cases, stored as `.npy` files that numpy
//! reads without this project, each with its provenance recorded beside it and checked when
//! it is read.
//!
//! Layout, for the sweep `sweeps/<op>/<sweep>.yaml`:
//!
//! ```text
//! golden/<op>/<sweep>.json                      the manifest: one line per generated case
//! golden/<op>/<sweep>/<case>[.<dtype>].npy      the expected output of a case that has one
//! ```
//!
//! A manifest entry records the generator version and the sweep's seed that produced the
//! case, a hash of the case itself (op, attributes, inputs: [`crate::case_hash`]),
//! and either the expected error kind or the output's dtype, shape and the SHA-256 of its
//! `.npy` file (so `sha256sum` checks it too). Reading a golden checks, in turn: the entry
//! exists, the file's hash, its npy header against the entry, the provenance (version, seed,
//! case hash), and finally that the reference still gives the stored result. Any difference
//! fails the case with a [`GoldenError`] (its kind: missing, corrupt, stale, ...) saying which
//! check failed and how to bless. A golden is checked once per run; every trial that asks for
//! it again gets the same verdict.
//!
//! **npy dtypes** are those of [`opspec_spec::npy`]; the manifest gives the real dtype (bfloat16,
//! fp8 and int4, which numpy lacks, are stored as raw bits or unpacked bytes).
//!
//! **Blessing** ([`GoldenStore::new`] with `bless`): a golden that is missing, stale or
//! corrupt is rewritten from the reference instead of failing, and the manifests are rewritten
//! once at the end ([`GoldenStore::finish`]). The runner refuses to bless when `CI` is set.
//! Nothing a user had is lost on the way:
//!
//! - each sweep switches all at once ([`GoldenStore::finish`]): its new goldens are staged
//!   beside the old under names of the bless's own (`.<name>.<pid>.<n>.staged`), and one rename
//!   replaces the manifest with one that names them; only then are they given their usual
//!   names and the manifest rewritten with those. A bless that fails or is killed before the
//!   switch leaves the sweep exactly as it was; after it, whole and new. What a killed bless
//!   left (its staged files, its lock) is reported and removed by the next bless; blesses of
//!   one golden folder take turns switching (`<golden>/.bless.lock`, taken over from a process
//!   that is gone). [`GoldenStore::with_fault`] injects a failure or a pause at a step, for the tests
//!   of all this (`runner/tests/bless.rs`);
//! - only goldens shown to be orphans of a sweep that was loaded are removed: an entry of a
//!   readable manifest that none of the sweep's cases uses, or a file that the sweep's final
//!   manifest does not name. A manifest that cannot be read proves nothing about its files,
//!   and the manifest of a sweep that was not loaded (another sweeps folder sharing the golden
//!   folder, or a deleted sweep) is kept and reported: deleting it is left to the user;
//! - every removal and every kept manifest is listed ([`BlessSummary`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use opspec::dtype::DType;
use opspec::error::{ErrorKind, OpError};
use opspec::ops::Op;
use opspec::tensor::{Limits, Tensor};
use opspec_spec::npy::{from_npy, to_npy};
use opspec_spec::Expectation;

/// The `generator` field of every manifest.
pub const GENERATOR: &str = "opspec-sweep";

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut text = String::with_capacity(64);
    for byte in digest {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// One sweep's manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub about: String,
    pub generator: String,
    /// The sweep file, relative to its sweeps folder (`slice/modes.yaml`).
    pub sweep: String,
    /// Keyed by `<case>[::<dtype>]`.
    pub cases: BTreeMap<String, Entry>,
}

/// The provenance and the expected result of one generated case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// [`crate::GENERATOR_VERSION`] when written.
    pub version: u32,
    /// The sweep file's seed when written.
    pub seed: u64,
    /// [`crate::case_hash`] of the case when written.
    pub case: String,
    /// The expected error kind, for a case the reference rejects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<usize>>,
    /// SHA-256 of the whole `.npy` file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The file's name in the sweep's folder when it is not `<case>[.<dtype>].npy`: only while
    /// a bless switches a sweep over (the manifest names the new files beside the old ones),
    /// or after a bless was stopped in that step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The name of an entry's `.npy` file in its sweep's folder.
fn entry_file(key: &str, entry: &Entry) -> String {
    entry.file.clone().unwrap_or_else(|| file_name_of(key))
}

impl Manifest {
    fn new(op: Op, stem: &str) -> Manifest {
        Manifest {
            about: format!(
                "Expected results of the generated cases of sweeps/{op}/{stem}.yaml, computed by the reference interpreter and cross-checked by the numpy backend. Written by `OPSPEC_BLESS=1 cargo test`; do not edit by hand (golden/README.md)."
            ),
            generator: GENERATOR.into(),
            sweep: format!("{op}/{stem}.yaml"),
            cases: BTreeMap::new(),
        }
    }

    /// JSON with one line per case, so that a diff shows one line per changed golden.
    pub fn to_json(&self) -> String {
        let mut text = String::from("{\n");
        for (name, value) in [
            ("about", &self.about),
            ("generator", &self.generator),
            ("sweep", &self.sweep),
        ] {
            let _ = writeln!(
                text,
                "  {}: {},",
                serde_json::to_string(name).expect("string"),
                serde_json::to_string(value).expect("string")
            );
        }
        text.push_str("  \"cases\": {");
        for (i, (key, entry)) in self.cases.iter().enumerate() {
            let _ = write!(
                text,
                "{}\n    {}: {}",
                if i == 0 { "" } else { "," },
                serde_json::to_string(key).expect("string"),
                serde_json::to_string(entry).expect("entry")
            );
        }
        text.push_str(if self.cases.is_empty() {
            "}\n}\n"
        } else {
            "\n  }\n}\n"
        });
        text
    }
}

/// Where one generated case's golden lives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoldenId {
    pub op: Op,
    /// The sweep file's stem.
    pub stem: String,
    /// `<case>[::<dtype>]`, the manifest key.
    pub key: String,
}

impl GoldenId {
    pub fn new(op: Op, stem: &str, case: &str, dtype: Option<DType>) -> GoldenId {
        GoldenId {
            op,
            stem: stem.to_owned(),
            key: match dtype {
                Some(dtype) => format!("{case}::{dtype}"),
                None => case.to_owned(),
            },
        }
    }

    /// The npy file's name inside `<op>/<stem>/`.
    pub fn file_name(&self) -> String {
        file_name_of(&self.key)
    }
}

fn file_name_of(key: &str) -> String {
    format!("{}.npy", key.replace("::", "."))
}

/// What reading a golden gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Golden {
    pub expect: Expectation,
    /// The golden was (re)written from the reference in this run.
    pub blessed: bool,
}

/// What kind of problem a [`GoldenError`] is. The names ([`GoldenErrorKind::name`]) are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GoldenErrorKind {
    /// The sweep's manifest cannot be read, or is not a manifest.
    Manifest,
    /// The manifest has no entry for the case (a new case).
    Missing,
    /// The entry or its file is damaged: unreadable, failing its content hash, not npy, or
    /// disagreeing with the entry.
    Corrupt,
    /// Intact, but no longer what the sweep and the reference give: another generator version
    /// or seed, another case, another result.
    Stale,
    /// Blessing could not write a golden or a manifest.
    Write,
}

impl GoldenErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            GoldenErrorKind::Manifest => "manifest",
            GoldenErrorKind::Missing => "missing",
            GoldenErrorKind::Corrupt => "corrupt",
            GoldenErrorKind::Stale => "stale",
            GoldenErrorKind::Write => "write",
        }
    }
}

/// A golden that cannot serve as a case's expectation, or a bless that could not be written.
/// The message names the manifest or file, and says how to fix it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GoldenError {
    pub kind: GoldenErrorKind,
    pub message: String,
}

impl GoldenError {
    fn new(kind: GoldenErrorKind, message: impl Into<String>) -> GoldenError {
        GoldenError {
            kind,
            message: message.into(),
        }
    }
}

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

type SweepKey = (String, String);

/// A manifest as read: absent (`None`), or why it cannot be read.
type LoadedManifest = Arc<Result<Option<Manifest>, String>>;

/// What a golden is checked against: the case's seed and hash.
type CheckKey = (GoldenId, u64, String);

/// One golden's verdict, set by the first check that asks for it.
type Verdict = Arc<OnceLock<Result<Golden, GoldenError>>>;

/// The golden folder of a run, shared by its trials.
pub struct GoldenStore {
    root: PathBuf,
    /// How paths are shown in messages (`golden`).
    label: String,
    bless: bool,
    manifests: Mutex<HashMap<SweepKey, LoadedManifest>>,
    /// Per sweep, entries to set (`Some`) or remove (`None`) at [`GoldenStore::finish`].
    updates: Mutex<BTreeMap<SweepKey, BTreeMap<String, Option<Entry>>>>,
    /// Files to delete at the end if the final manifest of their sweep does not name them,
    /// and whether each counts as a removal of its own (an orphan file) or goes with a
    /// removed entry.
    removals: Mutex<BTreeMap<PathBuf, bool>>,
    /// Goldens written in this run, under names of its own: final path → staged path.
    staged: Mutex<BTreeMap<PathBuf, PathBuf>>,
    /// Sweeps one of whose goldens could not be written: they are not switched at all.
    failed: Mutex<BTreeSet<SweepKey>>,
    /// A fault to inject, for tests of an interrupted bless (`OPSPEC_BLESS_FAULT`).
    injected: Option<(Step, FaultAction)>,
    /// The bounds a golden read stays within ([`GoldenStore::with_limits`]).
    limits: Limits,
    steps: AtomicUsize,
    /// Manifests of sweeps not loaded, reported and kept.
    kept: Mutex<BTreeSet<SweepKey>>,
    /// The verdict of [`GoldenStore::check`] per golden: each golden is read, hashed and
    /// compared once per run, however many trials ask for it.
    verdicts: Mutex<HashMap<CheckKey, Verdict>>,
    /// How many goldens were actually checked.
    checks: AtomicUsize,
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
    /// A blessing store that fails or pauses at the step `fault` names (`golden`, `manifest`,
    /// `switch`, `link`, `rename`, `cleanup`, or `pause:<step>:<marker file>`): for the tests
    /// of an interrupted bless, which the runner passes it through `OPSPEC_BLESS_FAULT`.
    pub fn with_fault(mut self, fault: Option<&str>) -> GoldenStore {
        if self.bless {
            self.injected = fault.and_then(injected_fault);
        }
        self
    }

    /// The goldens read stay within `limits` (the run's element budget); by default
    /// [`Limits::DEFAULT`].
    pub fn with_limits(mut self, limits: Limits) -> GoldenStore {
        self.limits = limits;
        self
    }

    pub fn new(root: PathBuf, label: impl Into<String>, bless: bool) -> GoldenStore {
        GoldenStore {
            limits: Limits::DEFAULT,
            root,
            label: label.into(),
            bless,
            manifests: Mutex::default(),
            updates: Mutex::default(),
            removals: Mutex::default(),
            staged: Mutex::default(),
            failed: Mutex::default(),
            injected: None,
            steps: AtomicUsize::new(0),
            kept: Mutex::default(),
            verdicts: Mutex::default(),
            checks: AtomicUsize::new(0),
        }
    }

    /// How many goldens [`GoldenStore::check`] has read and checked so far (each once).
    pub fn checks(&self) -> usize {
        self.checks.load(Ordering::Relaxed)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How the golden folder is named in messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    pub fn is_blessing(&self) -> bool {
        self.bless
    }

    fn manifest_path(&self, op: &str, stem: &str) -> PathBuf {
        self.root.join(op).join(format!("{stem}.json"))
    }

    fn shown(&self, relative: &str) -> String {
        format!("{}/{relative}", self.label)
    }

    fn manifest(&self, op: &str, stem: &str) -> LoadedManifest {
        let key = (op.to_owned(), stem.to_owned());
        let mut cache = self.manifests.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(cache.entry(key).or_insert_with(|| {
            let path = self.manifest_path(op, stem);
            Arc::new(match read_manifest(&path) {
                Err(ManifestRead::Missing) => Ok(None),
                Err(ManifestRead::Unreadable(message)) => Err(message),
                Ok(text) => serde_json::from_str::<Manifest>(&text).map(Some).map_err(|e| {
                    format!(
                        "{} is not a valid golden manifest ({e}); restore it from version control or re-bless",
                        self.shown(&format!("{op}/{stem}.json"))
                    )
                }),
            })
        }))
    }

    /// The expected result of a generated case: its golden, checked against its provenance
    /// and against `reference` (the reference's result now). `Err` says what is wrong and how
    /// to bless; when blessing, a golden that is wrong is rewritten from `reference` instead.
    ///
    /// A golden is checked once: a later call for the same golden, seed and case hash gets
    /// the first call's verdict (the reference gives one result per case).
    pub fn check(
        &self,
        id: &GoldenId,
        seed: u64,
        case_hash: &str,
        reference: &Result<Vec<Tensor>, OpError>,
    ) -> Result<Golden, GoldenError> {
        let cell = Arc::clone(
            self.verdicts
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry((id.clone(), seed, case_hash.to_owned()))
                .or_default(),
        );
        cell.get_or_init(|| {
            self.checks.fetch_add(1, Ordering::Relaxed);
            self.check_once(id, seed, case_hash, reference)
        })
        .clone()
    }

    fn check_once(
        &self,
        id: &GoldenId,
        seed: u64,
        case_hash: &str,
        reference: &Result<Vec<Tensor>, OpError>,
    ) -> Result<Golden, GoldenError> {
        match self.read_checked(id, seed, case_hash, reference) {
            Ok(expect) => Ok(Golden {
                expect,
                blessed: false,
            }),
            Err(_) if self.bless => self.write(id, seed, case_hash, reference),
            Err(problem) => Err(GoldenError::new(
                problem.kind,
                format!(
                    "{}\nIf the change is intended, run `OPSPEC_BLESS=1 cargo test` to rewrite the goldens from the reference, review `git diff {}`, and commit it.",
                    problem.message, self.label
                ),
            )),
        }
    }

    fn read_checked(
        &self,
        id: &GoldenId,
        seed: u64,
        case_hash: &str,
        reference: &Result<Vec<Tensor>, OpError>,
    ) -> Result<Expectation, GoldenError> {
        let op = id.op.name();
        let manifest_name = self.shown(&format!("{op}/{}.json", id.stem));
        let manifest = self.manifest(op, &id.stem);
        let manifest = manifest
            .as_ref()
            .as_ref()
            .map_err(|message| GoldenError::new(GoldenErrorKind::Manifest, message.clone()))?;
        let corrupt = |message: String| GoldenError::new(GoldenErrorKind::Corrupt, message);
        let stale = |message: String| Err(GoldenError::new(GoldenErrorKind::Stale, message));
        let entry = manifest
            .as_ref()
            .and_then(|m| m.cases.get(&id.key))
            .ok_or_else(|| {
                GoldenError::new(
                    GoldenErrorKind::Missing,
                    format!(
                        "no golden: {manifest_name} has no entry for `{}` (a new case)",
                        id.key
                    ),
                )
            })?;
        if self.bless && entry.file.is_some() {
            // Named by a bless that switched the sweep and stopped: written again under its
            // usual name.
            return stale(format!(
                "`{}` is named by a bless that did not finish",
                id.key
            ));
        }
        let file_name = self.shown(&format!("{op}/{}/{}", id.stem, entry_file(&id.key, entry)));
        let stored = match (&entry.error, &entry.dtype, &entry.shape, &entry.sha256) {
            (Some(kind), None, None, None) => Expectation::Error {
                kind: ErrorKind::from_name(kind).ok_or_else(|| {
                    corrupt(format!(
                        "{manifest_name}: `{}` names an unknown error kind {kind:?}",
                        id.key
                    ))
                })?,
                message: None,
            },
            (None, Some(dtype), Some(shape), Some(sha256)) => {
                let path = self.root.join(op).join(&id.stem).join(entry_file(&id.key, entry));
                // Bounded before it is read: a regular file, no larger than the manifest's
                // shape allows (within the element budget) with a header of any real size.
                let volume = (self.limits)
                    .checked_volume(shape)
                    .map_err(|e| corrupt(format!("{manifest_name}: `{}`: {}", id.key, e.message)))?;
                let limit = (volume as u64).saturating_mul(8).saturating_add(1 << 20);
                let bytes = opspec_spec::source::read_bounded(&path, limit)
                    .map_err(|e| corrupt(format!("golden {file_name}: {e}")))?;
                let actual = sha256_hex(&bytes);
                if &actual != sha256 {
                    return Err(corrupt(format!(
                        "golden {file_name} fails its content hash: {manifest_name} records sha256 {sha256}, the file has {actual}. The file was changed outside blessing (edited, truncated or merged badly): restore it with `git checkout {}`, or re-bless."
                    , self.label)));
                }
                let dtype = DType::from_name(dtype).ok_or_else(|| {
                    corrupt(format!(
                        "{manifest_name}: `{}` names an unknown dtype {dtype:?}",
                        id.key
                    ))
                })?;
                let tensor = from_npy(dtype, &bytes, self.limits).map_err(|e| {
                    corrupt(format!("golden {file_name} is not a valid npy file: {e}"))
                })?;
                if &tensor.shape != shape {
                    return Err(corrupt(format!(
                        "golden {file_name} has shape {:?}, {manifest_name} records {shape:?}",
                        tensor.shape
                    )));
                }
                Expectation::Outputs(vec![tensor])
            }
            _ => {
                return Err(corrupt(format!(
                    "{manifest_name}: the entry of `{}` gives neither an error nor dtype, shape and sha256",
                    id.key
                )))
            }
        };
        let version = crate::GENERATOR_VERSION;
        if entry.version != version || entry.seed != seed {
            return stale(format!(
                "stale golden: `{}` was generated by {GENERATOR} version {} with seed {}; the sweep is now generated by version {version} with seed {seed}",
                id.key, entry.version, entry.seed
            ));
        }
        if entry.case != case_hash {
            return stale(format!(
                "stale golden: the case `{}` (its attributes or inputs) changed since its golden was written (case hash {} then, {case_hash} now)",
                id.key, entry.case
            ));
        }
        let current = expectation_of(reference);
        if stored != current {
            return stale(format!(
                "stale golden: the reference now gives {} for `{}`, the golden {} holds {}",
                describe(&current),
                id.key,
                if matches!(stored, Expectation::Error { .. }) {
                    manifest_name
                } else {
                    file_name
                },
                describe(&stored)
            ));
        }
        Ok(stored)
    }

    fn write(
        &self,
        id: &GoldenId,
        seed: u64,
        case_hash: &str,
        reference: &Result<Vec<Tensor>, OpError>,
    ) -> Result<Golden, GoldenError> {
        let op = id.op.name();
        let sweep = (op.to_owned(), id.stem.clone());
        let dir = self.root.join(op).join(&id.stem);
        let path = dir.join(id.file_name());
        let expect = expectation_of(reference);
        let mut entry = Entry {
            version: crate::GENERATOR_VERSION,
            seed,
            case: case_hash.to_owned(),
            error: None,
            dtype: None,
            shape: None,
            sha256: None,
            file: None,
        };
        if let Expectation::Error { kind, .. } = &expect {
            entry.error = Some(kind.name().to_owned());
        }
        if let Expectation::Outputs(outputs) = &expect {
            let output = &outputs[0];
            let bytes = to_npy(output);
            // Staged beside the old golden under a name of this run's own; the old file stays
            // until the manifest has switched to the new one (`finish`).
            let staged = staged_path(&path);
            let written = self
                .fault(Step::Golden)
                .and_then(|()| std::fs::create_dir_all(&dir))
                .and_then(|()| write_new(&staged, &bytes));
            if let Err(e) = written {
                self.failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(sweep);
                return Err(GoldenError::new(
                    GoldenErrorKind::Write,
                    format!("cannot write golden {}: {e}", staged.display()),
                ));
            }
            self.staged
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(path.clone(), staged);
            entry.dtype = Some(output.dtype.name().to_owned());
            entry.shape = Some(output.shape.clone());
            entry.sha256 = Some(sha256_hex(&bytes));
        }
        self.updates
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(sweep)
            .or_default()
            .insert(id.key.clone(), Some(entry));
        Ok(Golden {
            expect,
            blessed: true,
        })
    }

    /// The fault injected at `step` (`OPSPEC_BLESS_FAULT`), if any: an error, or a pause until
    /// the process is killed (after creating the marker file the test waits for).
    fn fault(&self, step: Step) -> std::io::Result<()> {
        let Some((at, action)) = &self.injected else {
            return Ok(());
        };
        // Once: the first time the step is reached.
        if *at != step || self.steps.fetch_add(1, Ordering::Relaxed) > 0 {
            return Ok(());
        }
        match action {
            FaultAction::Fail => Err(std::io::Error::other(format!(
                "fault injected at {step:?} (OPSPEC_BLESS_FAULT)"
            ))),
            FaultAction::Pause(marker) => {
                let _ = std::fs::write(marker, std::process::id().to_string());
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        }
    }

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
                    unused.push(Unused {
                        name: format!("{op}/{name}"),
                        message: format!(
                            "{} is a folder where a manifest file belongs; remove it by hand (blessing removes no folder)",
                            self.shown(&format!("{op}/{name}"))
                        ),
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
                    unused.push(Unused {
                        name: format!("{op}/{stem}.json"),
                        message: format!(
                            "{} and {} belong to no sweep loaded in this run (no {op}/{stem}.yaml in the sweep folders): if the sweep is gone, delete them (blessing removes only goldens of the sweeps it loads); if they belong to another sweeps folder, give this one its own golden folder (`OPSPEC_GOLDEN`)",
                            self.shown(&format!("{op}/{stem}.json")),
                            self.shown(&format!("{op}/{stem}/"))
                        ),
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
                        unused.push(Unused {
                            name: format!("{op}/{stem}/{entry}"),
                            message: format!(
                                "the golden of `{entry}` in {} is not used by any generated case (the case was removed or renamed): run `OPSPEC_BLESS=1 cargo test` to remove it",
                                self.shown(&format!("{op}/{stem}.json"))
                            ),
                            removal: Removal::Entry(op.clone(), stem.clone(), entry.clone()),
                        });
                    }
                }
                let files = named;
                for path in sorted_entries(&self.root.join(&op).join(&stem)) {
                    let name = name_of(&path);
                    if path.is_dir() {
                        unused.push(Unused {
                            name: format!("{op}/{stem}/{name}"),
                            message: format!(
                                "{} is a folder inside a sweep's golden folder, which holds only .npy files; remove it by hand (blessing removes no folder)",
                                self.shown(&format!("{op}/{stem}/{name}"))
                            ),
                            removal: Removal::Folder,
                        });
                    } else if !files.contains(&name) {
                        unused.push(Unused {
                            name: format!("{op}/{stem}/{name}"),
                            message: format!(
                                "{} is not named by {}: no generated case uses it; remove it, or run `OPSPEC_BLESS=1 cargo test`",
                                self.shown(&format!("{op}/{stem}/{name}")),
                                self.shown(&format!("{op}/{stem}.json"))
                            ),
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
            SwitchFailure {
            switched: true,
            message: format!("{shown} switched to the new goldens, but their usual names are not all in place ({e}); the next bless finishes it"),
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

/// Why a manifest was not read.
enum ManifestRead {
    Missing,
    Unreadable(String),
}

/// The largest manifest read: one line per case, about 250 bytes each.
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// A manifest's text, read only if it is a regular file of at most [`MAX_MANIFEST_BYTES`].
fn read_manifest(path: &Path) -> Result<String, ManifestRead> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ManifestRead::Missing),
        _ => {}
    }
    let bytes = opspec_spec::source::read_bounded(path, MAX_MANIFEST_BYTES)
        .map_err(ManifestRead::Unreadable)?;
    String::from_utf8(bytes)
        .map_err(|_| ManifestRead::Unreadable(format!("{} is not UTF-8 text", path.display())))
}

/// A name of this process's own beside `path`, hidden so that no listing of goldens counts it:
/// `.<name>.<pid>.<n>.staged`. The pid lets a later bless tell a leftover of a process that is
/// gone from a file another bless is still writing.
fn staged_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    path.with_file_name(format!(
        ".{}.{}.{}.staged",
        name_of(path),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
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

fn process_alive(pid: u32) -> bool {
    pid != 0 && (pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists())
}

/// Writes a new file (never an existing one) whole, flushed to disk.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let result = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
    if result.is_err() {
        let _ = std::fs::remove_file(path);
    }
    result
}

fn discard(paths: impl IntoIterator<Item = PathBuf>) {
    for path in paths {
        let _ = std::fs::remove_file(path);
    }
}

/// The steps of a bless a fault can be injected at (`OPSPEC_BLESS_FAULT=<step>` to fail there,
/// `pause:<step>:<marker file>` to stop there until killed): writing a golden, writing the
/// switching manifest, the switch, linking the usual names, the final manifest, the cleanup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Golden,
    Manifest,
    Switch,
    Link,
    Rename,
    Cleanup,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum FaultAction {
    Fail,
    Pause(PathBuf),
}

/// The fault `text` (the runner's `OPSPEC_BLESS_FAULT`) asks for: a hook for the tests of
/// interrupted blesses.
fn injected_fault(text: &str) -> Option<(Step, FaultAction)> {
    let (action, step) = match text.strip_prefix("pause:") {
        Some(rest) => {
            let (step, marker) = rest.split_once(':')?;
            (FaultAction::Pause(PathBuf::from(marker)), step.to_owned())
        }
        None => (FaultAction::Fail, text.to_owned()),
    };
    let step = match step.as_str() {
        "golden" => Step::Golden,
        "manifest" => Step::Manifest,
        "switch" => Step::Switch,
        "link" => Step::Link,
        "rename" => Step::Rename,
        "cleanup" => Step::Cleanup,
        _ => return None,
    };
    Some((step, action))
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
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

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

/// The expectation a reference result amounts to.
pub fn expectation_of(reference: &Result<Vec<Tensor>, OpError>) -> Expectation {
    match reference {
        Ok(outputs) => Expectation::Outputs(outputs.clone()),
        Err(e) => Expectation::Error {
            kind: e.kind,
            message: None,
        },
    }
}

fn describe(expect: &Expectation) -> String {
    match expect {
        Expectation::Error { kind, .. } => format!("error `{kind}`"),
        Expectation::Outputs(outputs) => outputs
            .iter()
            .map(|t| {
                let shown: Vec<String> = (0..t.len().min(6))
                    .map(|i| t.dtype.format_bits(t.bits(i)))
                    .collect();
                format!(
                    "{} {:?} [{}{}]",
                    t.dtype,
                    t.shape,
                    shown.join(", "),
                    if t.len() > 6 { ", …" } else { "" }
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.retain(|p| !name_of(p).starts_with('.'));
    entries.sort();
    entries
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    sorted_entries(dir)
        .into_iter()
        .filter(|p| p.is_dir())
        .collect()
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips() {
        for dtype in DType::ALL {
            for shape in [vec![], vec![3], vec![2, 0, 2], vec![1, 2, 3]] {
                let n: usize = shape.iter().product();
                let t = crate::values::Provenance::tensor(dtype, shape.clone());
                assert_eq!(t.len(), n);
                let bytes = to_npy(&t);
                assert_eq!(
                    from_npy(dtype, &bytes, Limits::DEFAULT),
                    Ok(t),
                    "{dtype} {shape:?}"
                );
            }
        }
        let scalar = to_npy(&Tensor::from_bits(DType::Int8, vec![], vec![0x80]));
        assert!(String::from_utf8_lossy(&scalar).contains("'shape': (), }"));
        let one = to_npy(&Tensor::from_bits(DType::Int4, vec![1], vec![0xf8]));
        assert_eq!(*one.last().unwrap(), 0xf8); // -8, unpacked
        assert!(from_npy(
            DType::Float16,
            &to_npy(&Tensor::from_bits(DType::BFloat16, vec![1], vec![0])),
            Limits::DEFAULT
        )
        .is_err());
    }

    #[test]
    fn manifest_json_has_one_line_per_case_and_reads_back() {
        let mut m = Manifest::new(Op::Slice, "modes");
        for key in ["b::int8", "a::float32"] {
            m.cases.insert(
                key.into(),
                Entry {
                    version: 1,
                    seed: 7,
                    case: "0123".into(),
                    error: None,
                    dtype: Some("int8".into()),
                    shape: Some(vec![2]),
                    sha256: Some("ff".into()),
                    file: None,
                },
            );
        }
        let text = m.to_json();
        assert_eq!(text.lines().filter(|l| l.contains("\"seed\":7")).count(), 2);
        assert_eq!(serde_json::from_str::<Manifest>(&text).unwrap(), m);
        let empty = Manifest::new(Op::Slice, "x");
        assert_eq!(
            serde_json::from_str::<Manifest>(&empty.to_json()).unwrap(),
            empty
        );
    }

    /// Each golden is read and checked once per run, and a second trial asking for it gets
    /// the same verdict; each problem has its kind.
    #[test]
    fn a_golden_is_checked_once_and_problems_have_kinds() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);

        let blessing = GoldenStore::new(root.clone(), "golden", true);
        assert!(blessing.check(&id, 7, "abcd", &reference).unwrap().blessed);
        blessing.finish().unwrap();

        let store = GoldenStore::new(root.clone(), "golden", false);
        let first = store.check(&id, 7, "abcd", &reference).unwrap();
        assert!(!first.blessed);
        assert_eq!(store.checks(), 1);
        // Another case hash is another check: stale.
        let stale = store.check(&id, 7, "ef01", &reference).unwrap_err();
        assert_eq!(store.checks(), 2);
        assert_eq!(stale.kind, GoldenErrorKind::Stale, "{stale}");
        // The file is no longer read: the shared verdict stands even after it is damaged.
        std::fs::write(root.join("slice/modes").join(id.file_name()), b"damaged").unwrap();
        assert_eq!(store.check(&id, 7, "abcd", &reference), Ok(first));
        assert_eq!(store.checks(), 2);

        // A fresh store sees the damage.
        let store = GoldenStore::new(root.clone(), "golden", false);
        let corrupt = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert_eq!(corrupt.kind, GoldenErrorKind::Corrupt, "{corrupt}");
        assert!(
            corrupt.to_string().contains("fails its content hash"),
            "{corrupt}"
        );
        let other = GoldenId::new(Op::Slice, "modes", "new", None);
        let missing = store.check(&other, 7, "abcd", &reference).unwrap_err();
        assert_eq!(missing.kind, GoldenErrorKind::Missing, "{missing}");
        assert!(missing.to_string().contains("OPSPEC_BLESS=1"), "{missing}");
    }

    /// A golden or a manifest that is a FIFO, a device or a folder is a clear error, never a
    /// read that waits or never ends.
    #[test]
    fn goldens_and_manifests_that_are_not_regular_files_are_refused() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        blessing.finish().unwrap();
        let golden = root.join("slice/modes").join(id.file_name());
        std::fs::remove_file(&golden).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&golden).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let store = GoldenStore::new(root.clone(), "golden", false);
        let error = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert_eq!(error.kind, GoldenErrorKind::Corrupt, "{error}");
        assert!(error.to_string().contains("a FIFO"), "{error}");

        std::fs::remove_file(&golden).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &golden).unwrap();
        let store = GoldenStore::new(root.clone(), "golden", false);
        let error = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert!(error.to_string().contains("a character device"), "{error}");

        let manifest = root.join("slice/modes.json");
        std::fs::remove_file(&manifest).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&manifest).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let store = GoldenStore::new(root.clone(), "golden", false);
        let error = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert_eq!(error.kind, GoldenErrorKind::Manifest, "{error}");
        assert!(error.to_string().contains("a FIFO"), "{error}");
    }

    /// A folder where a golden or a manifest belongs is reported as a folder to remove by
    /// hand, never promised to blessing (which removes no folder), and never named `x.json.json`.
    #[test]
    fn folders_in_a_golden_folder_are_reported_as_folders() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        blessing.finish().unwrap();
        std::fs::create_dir_all(root.join("slice/modes/stray")).unwrap();
        std::fs::create_dir_all(root.join("slice/bits.json")).unwrap();
        let store = GoldenStore::new(root.clone(), "golden", false);
        let used = BTreeSet::from([id]);
        let unused = store.unused(&used);
        let names: Vec<&str> = unused.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(
            names,
            ["slice/bits.json", "slice/modes/stray"],
            "{unused:?}"
        );
        for u in &unused {
            assert!(u.message.contains("remove it by hand"), "{}", u.message);
            assert!(!u.message.contains("OPSPEC_BLESS"), "{}", u.message);
            assert!(!u.message.contains(".json.json"), "{}", u.message);
            assert!(!u.removable());
        }
    }

    /// A bless killed between creating its lock and writing its pid leaves an empty lock: once
    /// it is older than a moment it is stale, taken over and reported, not waited on.
    #[test]
    fn an_empty_bless_lock_is_taken_over() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let lock = root.join(".bless.lock");
        let file = std::fs::File::create(&lock).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        file.set_modified(old).unwrap();
        drop(file);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        let started = std::time::Instant::now();
        let summary = blessing.finish().unwrap();
        assert!(started.elapsed() < LOCK_WAIT / 2, "{:?}", started.elapsed());
        assert!(
            summary.removals.iter().any(|l| l.contains(".bless.lock")),
            "{:?}",
            summary.removals
        );
        assert!(!lock.exists());
    }

    /// Staged files of a bless that was killed are removed and reported by the next bless,
    /// also when that bless has the killed one's pid (as in a fresh container) or the pid now
    /// belongs to another process; a plain run names them.
    #[test]
    fn staged_leftovers_of_a_killed_bless_are_named_and_removed() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        blessing.finish().unwrap();
        let dir = root.join("slice/modes");
        // One with this process's pid; one with pid 1's, written before pid 1 started (a
        // year ago): the pid was reused since.
        let leftovers = [
            dir.join(format!(
                ".{}.{}.0.staged",
                id.file_name(),
                std::process::id()
            )),
            dir.join(format!(".{}.1.0.staged", id.file_name())),
        ];
        for path in &leftovers {
            std::fs::write(path, b"half").unwrap();
        }
        let year_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(365 * 86400);
        (std::fs::File::options().write(true).open(&leftovers[1]))
            .and_then(|f| f.set_modified(year_ago))
            .unwrap();
        let plain = GoldenStore::new(root.clone(), "golden", false);
        let named = plain.leftovers();
        assert_eq!(named.len(), 2, "{named:?}");
        assert!(named[0].contains("staged"), "{named:?}");
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        let summary = blessing.finish().unwrap();
        for path in &leftovers {
            assert!(!path.exists(), "{} kept", path.display());
        }
        let reported = summary
            .removals
            .iter()
            .filter(|l| l.contains(".staged"))
            .count();
        assert_eq!(reported, 2, "{:?}", summary.removals);
    }
}
