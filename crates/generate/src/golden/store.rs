//! The store: each golden read and checked once per run, and written under a staged name.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::fault::{FaultAction, Step};
use super::manifest::{
    entry_file, sha256_hex, Entry, GoldenId, LoadedManifest, SweepKey, GENERATOR,
};
use opspec::dtype::DType;
use opspec::error::{ErrorKind, OpError};
use opspec::tensor::{Limits, Tensor};
use opspec_spec::npy::{from_npy, to_npy};
use opspec_spec::Expectation;

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
    pub(super) fn new(kind: GoldenErrorKind, message: impl Into<String>) -> GoldenError {
        GoldenError {
            kind,
            message: message.into(),
        }
    }
}

/// What a golden is checked against: the case's seed and hash.
type CheckKey = (GoldenId, u64, String);

/// One golden's verdict, set by the first check that asks for it.
type Verdict = Arc<OnceLock<Result<Golden, GoldenError>>>;

/// The golden folder of a run, shared by its trials.
pub struct GoldenStore {
    pub(super) root: PathBuf,
    /// How paths are shown in messages (`golden`).
    pub(super) label: String,
    pub(super) bless: bool,
    pub(super) manifests: Mutex<HashMap<SweepKey, LoadedManifest>>,
    /// Per sweep, entries to set (`Some`) or remove (`None`) at [`GoldenStore::finish`].
    pub(super) updates: Mutex<BTreeMap<SweepKey, BTreeMap<String, Option<Entry>>>>,
    /// Files to delete at the end if the final manifest of their sweep does not name them,
    /// and whether each counts as a removal of its own (an orphan file) or goes with a
    /// removed entry.
    pub(super) removals: Mutex<BTreeMap<PathBuf, bool>>,
    /// Goldens written in this run, under names of its own: final path → staged path.
    pub(super) staged: Mutex<BTreeMap<PathBuf, PathBuf>>,
    /// Sweeps one of whose goldens could not be written: they are not switched at all.
    pub(super) failed: Mutex<BTreeSet<SweepKey>>,
    /// A fault to inject, for tests of an interrupted bless (`OPSPEC_BLESS_FAULT`).
    pub(super) injected: Option<(Step, FaultAction)>,
    /// The bounds a golden read stays within ([`GoldenStore::with_limits`]).
    pub(super) limits: Limits,
    pub(super) steps: AtomicUsize,
    /// Manifests of sweeps not loaded, reported and kept.
    pub(super) kept: Mutex<BTreeSet<SweepKey>>,
    /// The verdict of [`GoldenStore::check`] per golden: each golden is read, hashed and
    /// compared once per run, however many trials ask for it.
    pub(super) verdicts: Mutex<HashMap<CheckKey, Verdict>>,
    /// How many goldens were actually checked.
    pub(super) checks: AtomicUsize,
}

impl GoldenStore {
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

    pub(super) fn shown(&self, relative: &str) -> String {
        format!("{}/{relative}", self.label)
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
            Err(problem) => {
                let message = format!(
                    "{}\nIf the change is intended, run `OPSPEC_BLESS=1 cargo test` to rewrite the goldens from the reference, review `git diff {}`, and commit it.",
                    problem.message, self.label
                );
                Err(GoldenError::new(problem.kind, message))
            }
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
                let path = self
                    .root
                    .join(op)
                    .join(&id.stem)
                    .join(entry_file(&id.key, entry));
                // Bounded before it is read: a regular file, no larger than the manifest's
                // shape allows (within the element budget) with a header of any real size.
                let volume = (self.limits).checked_volume(shape).map_err(|e| {
                    corrupt(format!("{manifest_name}: `{}`: {}", id.key, e.message))
                })?;
                let limit = (volume as u64).saturating_mul(8).saturating_add(1 << 20);
                let bytes = opspec_spec::source::read_bounded(&path, limit)
                    .map_err(|e| corrupt(format!("golden {file_name}: {e}")))?;
                let actual = sha256_hex(&bytes);
                if &actual != sha256 {
                    let message = format!(
                        "golden {file_name} fails its content hash: {manifest_name} records sha256 {sha256}, the file has {actual}. The file was changed outside blessing (edited, truncated or merged badly): restore it with `git checkout {}`, or re-bless.",
                        self.label
                    );
                    return Err(corrupt(message));
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
                let message = format!(
                    "{manifest_name}: the entry of `{}` gives neither an error nor dtype, shape and sha256",
                    id.key
                );
                return Err(corrupt(message));
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
}

/// A name of this process's own beside `path`, hidden so that no listing of goldens counts it:
/// `.<name>.<pid>.<n>.staged`. The pid lets a later bless tell a leftover of a process that is
/// gone from a file another bless is still writing.
pub(super) fn staged_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    path.with_file_name(format!(
        ".{}.{}.{}.staged",
        name_of(path),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Writes a new file (never an existing one) whole, flushed to disk.
pub(super) fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
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

pub(super) fn discard(paths: impl IntoIterator<Item = PathBuf>) {
    for path in paths {
        let _ = std::fs::remove_file(path);
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

pub(super) fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.retain(|p| !name_of(p).starts_with('.'));
    entries.sort();
    entries
}

pub(super) fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    sorted_entries(dir)
        .into_iter()
        .filter(|p| p.is_dir())
        .collect()
}

pub(super) fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
