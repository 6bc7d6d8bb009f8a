//! `runner merge`: the JSON reports of the parts of one run (`--partition K/N` on N machines)
//! joined into one report equal to the whole run's, and the description of a run that every
//! JSON report carries so that its parts can be checked (`RunInfo`).
//!
//! The parts must come from one run: the same backend, the same runner version and the same
//! selection of trials (the same spec and sweep files, filter and flags; the selection's
//! fingerprint says so), each part once, each trial in the part its name hashes to. A part
//! that is missing, given twice or from another run is refused, saying which.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

use crate::judge::partition::{fingerprint, Partition};
use crate::judge::record::{Record, Report};
use crate::judge::run_verdict::{RunRules, RunSummary};
use crate::reports::report;

/// What a JSON report says about the run that wrote it, under `"run"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunInfo {
    /// The runner's version.
    pub(crate) runner: String,
    /// How many trials the whole run selected, every part together.
    pub(crate) selected: usize,
    /// The fingerprint of the selected trials' names ([`crate::judge::partition::fingerprint`]).
    pub(crate) fingerprint: String,
    /// The part this report holds (`K/N`), when the run was partitioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) partition: Option<String>,
    /// Whether the run's problems (nothing passed, too many skips) were judged: not with
    /// `--allow-skips`, nor for one exact trial.
    pub(crate) judged: bool,
    /// `--require-error-kinds`: a rejection without an error kind is a problem of the run.
    #[serde(default)]
    pub(crate) require_error_kinds: bool,
    /// A fingerprint of the contents of the spec and sweep files read (and their goldens):
    /// parts of one run read the same files ([`content_fingerprint`]).
    #[serde(default)]
    pub(crate) inputs: String,
    /// A fingerprint of the known-failures file's contents (`--expectations`); empty without.
    #[serde(default)]
    pub(crate) expectations: String,
    /// The element budget (`--max-elements`).
    #[serde(default)]
    pub(crate) max_elements: u64,
    /// The reference's engine (`--engine`).
    #[serde(default)]
    pub(crate) engine: String,
    /// The backend's command (`--backend`); empty for the built-in reference.
    #[serde(default)]
    pub(crate) backend_command: String,
    /// The most cases sent in one request (the hello's `batch`, capped by `--batch`): a
    /// matter of speed, never of verdicts, so parts may differ in it.
    #[serde(default = "single")]
    pub(crate) batch: usize,
    /// The name selection the run was given (`FILTER`, `--skip`, `--exact`), when it was given
    /// one: such a run holds only some trials of an entry, so no update may narrow it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) filter: Option<String>,
}

/// The batch size of a report written before batches: one case a request.
fn single() -> usize {
    1
}

/// What a run is given besides its selection of trials, for [`RunInfo::given`]: parts of one
/// run are given the same.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Given {
    pub(crate) inputs: String,
    pub(crate) expectations: String,
    pub(crate) max_elements: u64,
    pub(crate) engine: String,
    pub(crate) backend_command: String,
}

impl RunInfo {
    /// `self` with what the run was given.
    pub(crate) fn given(self, given: Given) -> RunInfo {
        RunInfo {
            inputs: given.inputs,
            expectations: given.expectations,
            max_elements: given.max_elements,
            engine: given.engine,
            backend_command: given.backend_command,
            ..self
        }
    }
}

/// The extensions of the data files a run reads from its spec, sweep and golden folders.
const DATA_EXTENSIONS: [&str; 4] = ["yaml", "yml", "npy", "json"];

/// A fingerprint of the contents of the data files (`.yaml`, `.yml`, `.npy`, `.json`) in
/// `folders`, their paths below each folder included: two runs that read the same files get
/// the same fingerprint, a changed byte gives another. Files that cannot be read count by
/// their path alone (the run reports them).
pub(crate) fn content_fingerprint(folders: &[PathBuf]) -> String {
    use crate::judge::partition::stable_hash;
    fn walk(folder: &Path, below: &Path, files: &mut Vec<(PathBuf, PathBuf)>, depth: usize) {
        let Ok(entries) = std::fs::read_dir(folder) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = below.join(entry.file_name());
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() && depth < 16 => walk(&path, &name, files, depth + 1),
                Ok(m) if m.is_file() => {
                    let data = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                        DATA_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())
                    });
                    if data {
                        files.push((name, path));
                    }
                }
                _ => {}
            }
        }
    }
    let mut hashes = Vec::new();
    for folder in folders {
        let mut files = Vec::new();
        walk(folder, Path::new(""), &mut files, 0);
        files.sort();
        for (name, path) in files {
            hashes.extend_from_slice(name.to_string_lossy().as_bytes());
            hashes.push(0);
            let contents = std::fs::read(&path).unwrap_or_default();
            hashes.extend_from_slice(&stable_hash(&contents).to_le_bytes());
        }
        hashes.push(b'\n');
    }
    format!("{:016x}", stable_hash(&hashes))
}

/// A fingerprint of one file's contents; empty without a file.
pub(crate) fn file_fingerprint(path: Option<&Path>) -> String {
    path.map(|path| {
        let contents =
            opspec_spec::source::read_bounded(path, report::REPORT_LIMIT).unwrap_or_default();
        bytes_fingerprint(&contents)
    })
    .unwrap_or_default()
}

/// The fingerprint [`file_fingerprint`] gives a file of these contents: their 64-bit FNV-1a
/// hash ([`crate::judge::partition::stable_hash`]) in 16 hex digits.
pub(crate) fn bytes_fingerprint(contents: &[u8]) -> String {
    format!("{:016x}", crate::judge::partition::stable_hash(contents))
}

impl RunInfo {
    /// The description of a run that selected the trials `names`, of which it runs `partition`.
    pub(crate) fn new<'a>(
        names: impl IntoIterator<Item = &'a str>,
        partition: Option<Partition>,
        judged: bool,
    ) -> RunInfo {
        let names: Vec<&str> = names.into_iter().collect();
        RunInfo {
            runner: env!("CARGO_PKG_VERSION").to_owned(),
            selected: names.len(),
            fingerprint: fingerprint(names),
            partition: partition.map(|p| p.to_string()),
            judged,
            require_error_kinds: false,
            inputs: String::new(),
            expectations: String::new(),
            max_elements: 0,
            engine: String::new(),
            backend_command: String::new(),
            batch: 1,
            filter: None,
        }
    }
}

/// A JSON report (`report::json`'s text) with `info` under `"run"`, last, the rest of the text
/// as it was.
pub(crate) fn with_run_info(report: String, info: &RunInfo) -> String {
    let run = serde_json::to_string_pretty(info)
        .expect("run info serializes")
        .replace('\n', "\n  ");
    match report.strip_suffix("\n}") {
        Some(body) => format!("{body},\n  \"run\": {run}\n}}"),
        None => report,
    }
}

/// Why parts cannot be merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum MergeError {
    #[error("{0}")]
    Read(#[from] report::ReadError),
    #[error("{}: no run description (`\"run\"`): written by a runner without `--partition` support, or not by `--report-json`", path.display())]
    NoRunInfo { path: PathBuf },
    #[error("{}: not the report of a part (the run was not given --partition)", path.display())]
    NotAPart { path: PathBuf },
    #[error("{}: the part {text:?} is no K/N", path.display())]
    BadPart { path: PathBuf, text: String },
    #[error("{} is from backend {theirs:?}, {} from {ours:?}: parts of one run have one backend", path.display(), first.display())]
    Backend {
        path: PathBuf,
        first: PathBuf,
        theirs: String,
        ours: String,
    },
    #[error("{} is from another run than {}: they differ in {what} ({theirs} against {ours}); parts of one run have the same runner version, contents of the spec and sweep files, known-failures file, element budget, engine, backend command and selection of trials (all compared)", path.display(), first.display())]
    Run {
        path: PathBuf,
        first: PathBuf,
        what: &'static str,
        theirs: String,
        ours: String,
    },
    #[error("{} and {} are both part {part}", path.display(), first.display())]
    Overlap {
        path: PathBuf,
        first: PathBuf,
        part: String,
    },
    #[error("trial `{trial}` is in {} and in {}", path.display(), first.display())]
    TrialTwice {
        trial: String,
        path: PathBuf,
        first: PathBuf,
    },
    #[error("{}: trial `{trial}` belongs to part {belongs}, not {given}", path.display())]
    WrongPart {
        path: PathBuf,
        trial: String,
        belongs: String,
        given: String,
    },
    #[error("part(s) {} of {total} missing: the trials of {} are not in any report given", missing.join(", "), if missing.len() == 1 { "that part" } else { "those parts" })]
    MissingParts { missing: Vec<String>, total: u64 },
    #[error("the parts hold {held} trials, the run selected {selected}: {} trials are missing from the reports", selected.saturating_sub(*held))]
    MissingTrials { held: usize, selected: usize },
    #[error("{} is one of the reports to merge: the merged report goes elsewhere", path.display())]
    OutputIsInput { path: PathBuf },
    #[error("cannot write {}: {message}", path.display())]
    Write { path: PathBuf, message: String },
}

/// A part's report read back with its run description.
struct Part {
    report: Report,
    info: RunInfo,
    partition: Partition,
}

#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    run: Option<RunInfo>,
}

fn read_part(path: &Path) -> Result<Part, MergeError> {
    let report = report::read(path)?;
    let text = report::read_text(path)?;
    let header: Header = serde_json::from_str(&text).map_err(|e| report::ReadError::Format {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let info = header.run.ok_or_else(|| MergeError::NoRunInfo {
        path: path.to_owned(),
    })?;
    let text = info.partition.clone().ok_or_else(|| MergeError::NotAPart {
        path: path.to_owned(),
    })?;
    let partition = Partition::parse(&text).map_err(|_| MergeError::BadPart {
        path: path.to_owned(),
        text,
    })?;
    Ok(Part {
        report,
        info,
        partition,
    })
}

/// The merged report's text: the parts' trials as one run's, its counts and problems worked
/// out again over every trial.
pub(crate) fn merge(paths: &[PathBuf]) -> Result<String, MergeError> {
    let parts = paths
        .iter()
        .map(|p| read_part(p))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(first) = parts.first() else {
        return Err(MergeError::MissingParts {
            missing: Vec::new(),
            total: 0,
        });
    };
    let mut by_index: BTreeMap<u64, &Part> = BTreeMap::new();
    let mut owner: BTreeMap<&str, &Path> = BTreeMap::new();
    for part in &parts {
        let (path, first_path) = (&part.report.path, &first.report.path);
        if part.report.backend != first.report.backend {
            return Err(MergeError::Backend {
                path: path.clone(),
                first: first_path.clone(),
                theirs: part.report.backend.clone(),
                ours: first.report.backend.clone(),
            });
        }
        let differs = |what, theirs: String, ours: String| MergeError::Run {
            path: path.clone(),
            first: first_path.clone(),
            what,
            theirs,
            ours,
        };
        let (a, b) = (&part.info, &first.info);
        if a.runner != b.runner {
            return Err(differs(
                "the runner version",
                a.runner.clone(),
                b.runner.clone(),
            ));
        }
        if a.fingerprint != b.fingerprint || a.selected != b.selected {
            return Err(differs(
                "the selection of trials",
                format!("{} trials, fingerprint {}", a.selected, a.fingerprint),
                format!("{} trials, fingerprint {}", b.selected, b.fingerprint),
            ));
        }
        let given: [(&'static str, String, String); 5] = [
            (
                "the contents of the spec and sweep files",
                a.inputs.clone(),
                b.inputs.clone(),
            ),
            (
                "the known-failures file (--expectations)",
                a.expectations.clone(),
                b.expectations.clone(),
            ),
            (
                "the element budget (--max-elements)",
                a.max_elements.to_string(),
                b.max_elements.to_string(),
            ),
            (
                "the reference's engine (--engine)",
                a.engine.clone(),
                b.engine.clone(),
            ),
            (
                "the backend command (--backend)",
                a.backend_command.clone(),
                b.backend_command.clone(),
            ),
        ];
        for (what, theirs, ours) in given {
            if theirs != ours {
                let shown = |v: String| if v.is_empty() { "none".to_owned() } else { v };
                return Err(differs(what, shown(theirs), shown(ours)));
            }
        }
        if a.judged != b.judged {
            return Err(differs(
                "--allow-skips",
                a.judged.to_string(),
                b.judged.to_string(),
            ));
        }
        if a.require_error_kinds != b.require_error_kinds {
            return Err(differs(
                "--require-error-kinds",
                a.require_error_kinds.to_string(),
                b.require_error_kinds.to_string(),
            ));
        }
        if part.partition.total != first.partition.total {
            return Err(differs(
                "the number of parts",
                part.partition.total.to_string(),
                first.partition.total.to_string(),
            ));
        }
        if let Some(other) = by_index.insert(part.partition.index, part) {
            return Err(MergeError::Overlap {
                path: path.clone(),
                first: other.report.path.clone(),
                part: part.partition.to_string(),
            });
        }
        for trial in &part.report.trials {
            if let Some(other) = owner.insert(&trial.name, path) {
                return Err(MergeError::TrialTwice {
                    trial: trial.name.clone(),
                    path: path.clone(),
                    first: other.to_owned(),
                });
            }
            if !part.partition.contains(&trial.name) {
                let belongs = Partition::part_of(&trial.name, part.partition.total);
                return Err(MergeError::WrongPart {
                    path: path.clone(),
                    trial: trial.name.clone(),
                    belongs: format!("{belongs}/{}", part.partition.total),
                    given: part.partition.to_string(),
                });
            }
        }
    }
    let total = first.partition.total;
    let missing: Vec<String> = (1..=total)
        .filter(|k| !by_index.contains_key(k))
        .map(|k| format!("{k}/{total}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::MissingParts { missing, total });
    }
    let mut records: Vec<Record> = parts
        .iter()
        .flat_map(|p| p.report.trials.iter().cloned())
        .collect();
    records.sort_by(|a, b| a.name.cmp(&b.name));
    let info = RunInfo {
        partition: None,
        ..first.info.clone()
    };
    let held = fingerprint(records.iter().map(|r| r.name.as_str()));
    if records.len() != info.selected || held != info.fingerprint {
        return Err(MergeError::MissingTrials {
            held: records.len(),
            selected: info.selected,
        });
    }
    // The parts' libtest verdicts are not in their reports: a merge decides on the records.
    let summary = RunSummary::summarize_final(
        &records,
        RunRules {
            judged: info.judged,
            require_error_kinds: info.require_error_kinds,
        },
        false,
        None,
    );
    Ok(with_run_info(
        report::json(
            &first.report.backend,
            &first.report.context,
            &records,
            &summary.problems,
        ),
        &info,
    ))
}

/// Writes `text` to `path` whole ([`crate::reports::output::write_replacing`]: a link written through, a
/// device in place, a FIFO refused).
fn write_whole(path: &Path, text: &str) -> Result<(), MergeError> {
    crate::reports::output::write_replacing(path, text).map_err(|e| MergeError::Write {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Merges the part reports `inputs` into `out` (exit 0), or says why not (exit 2).
pub fn main(inputs: &[PathBuf], out: &Path) -> ExitCode {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    let result = match inputs.iter().find(|input| same(input, out)) {
        Some(input) => Err(MergeError::OutputIsInput {
            path: input.clone(),
        }),
        None => merge(inputs).and_then(|text| write_whole(out, &text)),
    };
    match result {
        Ok(()) => {
            println!("merged {} parts into {}", inputs.len(), out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_info_is_added_to_a_report_as_json() {
        let info = RunInfo::new(["b", "a"], Partition::parse("2/3").ok(), true);
        let text = with_run_info(report::json("x", &Default::default(), &[], &[]), &info);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["backend"], "x");
        assert_eq!(value["run"]["partition"], "2/3");
        assert_eq!(value["run"]["selected"], 2);
        let header: Header = serde_json::from_str(&text).unwrap();
        assert_eq!(header.run, Some(info));
    }
}
