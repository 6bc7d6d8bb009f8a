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

use crate::judge::partition::{fingerprint, Partition};
use crate::judge::record::{Record, Report, RunInfo};
use crate::judge::run_verdict::{RunRules, RunSummary};
use crate::reports::report;

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

fn read_part(path: &Path) -> Result<Part, MergeError> {
    let report = report::read(path)?;
    let info = report.run.clone().ok_or_else(|| MergeError::NoRunInfo {
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
    Ok(report::json(&Report {
        path: PathBuf::new(),
        backend: first.report.backend.clone(),
        context: first.report.context.clone(),
        problems: summary.problems,
        trials: records,
        run: Some(info),
    }))
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
    fn the_run_info_is_written_in_a_report_and_read_back() {
        let info = RunInfo::new(["b", "a"], Partition::parse("2/3").ok(), true);
        let written = Report {
            backend: "x".into(),
            run: Some(info.clone()),
            ..Report::default()
        };
        let text = report::json(&written);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["backend"], "x");
        assert_eq!(value["run"]["partition"], "2/3");
        assert_eq!(value["run"]["selected"], 2);
        let read: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(read, written);
    }
}
