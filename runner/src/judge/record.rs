//! What a run found, trial by trial, as the JSON report holds it: each trial's [`Status`] and
//! [`Record`], and the report file's fields, written by
//! [`crate::reports::report`] and read back by it.
//!
//! The JSON report is read by later versions of the runner: fields are only ever added, and a
//! field a report lacks (one written before the field existed) reads as empty.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::backend::facts::Facts;
use crate::judge::expectations::Entry;

/// A trial's status: the one name of what became of a trial, decided by the verdict
/// ([`crate::judge::verdict::judge`], then `crate::judge::verdict::decide`) and only read by
/// the reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    /// The backend replied `unsupported` to a case its hello did not exclude (reported by
    /// libtest as ignored).
    Unsupported,
    /// Failed, or replied `unsupported`, as an expectations entry says (reported as ignored).
    KnownFailure,
    /// Not run: the backend's hello excludes it (its op, a dtype, or a restriction of a
    /// target it declares) (reported as ignored).
    Excluded,
    /// An implementation-defined case on which the backend differs from the reference's
    /// reading (reported as ignored, with the difference).
    ImplementationDefined,
    /// Not sent: the backend was given up on (it failed to start too often), or `--fail-fast`
    /// stopped the run at an earlier failure. Fails the run; a JUnit error, and counted as
    /// failed in the table.
    NotRun,
    /// A build-only backend built the case with the expected output dtypes and shapes; its
    /// values were never computed, so this is no pass (reported as ignored).
    ShapeChecked,
    /// A case that expects an error was rejected, but without an error kind: the rejection
    /// may be for another rule, so this is no pass (reported as ignored; fails the run under
    /// `--require-error-kinds`).
    RejectedUnclassified,
}

impl Status {
    /// Every status, in the order pages and lists show them.
    pub(crate) const ALL: [Status; 9] = [
        Status::Passed,
        Status::Failed,
        Status::ShapeChecked,
        Status::RejectedUnclassified,
        Status::KnownFailure,
        Status::Unsupported,
        Status::ImplementationDefined,
        Status::Excluded,
        Status::NotRun,
    ];

    /// Not run, or run without a verdict: what the `skipped` counts and columns show.
    pub(crate) fn is_skip(self) -> bool {
        matches!(
            self,
            Status::Unsupported | Status::KnownFailure | Status::Excluded
        )
    }

    /// Whether a trial of this status fails the run.
    pub(crate) fn fails(self) -> bool {
        matches!(self, Status::Failed | Status::NotRun)
    }

    /// As the JSON report spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
            Status::KnownFailure => "known_failure",
            Status::Excluded => "excluded",
            Status::ImplementationDefined => "implementation_defined",
            Status::NotRun => "not_run",
            Status::ShapeChecked => "shape_checked",
            Status::RejectedUnclassified => "rejected_unclassified",
        }
    }

    /// How pages and lists name it to people.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::KnownFailure => "known failure",
            Status::Unsupported => "unsupported",
            Status::ImplementationDefined => "implementation-defined",
            Status::Excluded => "excluded",
            Status::NotRun => "not run",
            Status::ShapeChecked => "shape-checked",
            Status::RejectedUnclassified => "rejected without kind",
        }
    }
}

/// The known-failures entry a trial matched ([`crate::judge::expectations::Entry`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Known {
    /// The entry's selector (a trial name, `prefix*`, `clause` or `clause in ...`).
    #[serde(default)]
    pub(crate) selector: String,
    /// The clause the backend breaks.
    pub(crate) clause: String,
    /// `semantics`, `defect` or `adapter`.
    pub(crate) class: String,
    pub(crate) reason: String,
    /// The entry's line in the expectations file.
    pub(crate) line: usize,
    /// The entry's condition on the run's facts, as written, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) condition: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub(crate) name: String,
    pub(crate) op: String,
    /// The dtype the trial is filed under ([`crate::backend::interface::primary_dtype`]).
    pub(crate) dtype: Option<String>,
    /// Every dtype the trial involves ([`crate::backend::interface::trial_dtypes`]).
    #[serde(default)]
    pub(crate) dtypes: Vec<String>,
    pub(crate) status: Status,
    /// The hello declaration that excluded the trial (`slice mode=reflect`, `scale dtype
    /// fp8`, `op shuffle`, `target dla`), when it is [`Status::Excluded`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) excluded_by: Option<String>,
    /// The failure report or the reason it was not run; empty when it passed.
    pub(crate) message: String,
    pub(crate) seconds: f64,
    /// The clause ids the trial's case names (none for a problem found before running, such as
    /// a spec error).
    #[serde(default)]
    pub(crate) clauses: Vec<String>,
    /// The expectations entry that made the trial a known failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) known: Option<Known>,
    /// The keys of the backend's `composed` whose paths produced the trial's answer, as its
    /// reply names them: the adapter, not the engine, computed it (docs/protocol.md, "Composed
    /// as it happened"). A report of an earlier runner may hold one key as a string.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub(crate) composed: Vec<String>,
    /// The command that replays the trial alone ([`crate::reports::replay_command::command`]); none for a trial
    /// that is no case (a spec error, a stale expectation, an unused golden).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replay: Option<String>,
}

/// A list of strings, or one string (how reports of earlier runners hold a trial's `composed`).
fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(key) => vec![key],
        OneOrMany::Many(keys) => keys,
    })
}

/// What a run's verdicts hold for: the engine and the machine, every expectations entry with
/// its condition and whether it held, and what the adapter composes rather than the engine
/// implements.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Context {
    #[serde(default)]
    pub(crate) facts: Facts,
    #[serde(default)]
    pub(crate) expectation_entries: Vec<EntryState>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) composed: BTreeMap<String, String>,
}

/// An expectations entry as a run found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EntryState {
    pub(crate) line: usize,
    pub(crate) selector: String,
    pub(crate) clause: String,
    pub(crate) class: String,
    pub(crate) reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) condition: Option<String>,
    /// Whether its condition held (an entry without one always holds).
    pub(crate) held: bool,
    /// The facts its condition tests that the run did not know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) unknown_facts: Vec<String>,
}

impl EntryState {
    pub(crate) fn of(entry: &Entry) -> EntryState {
        EntryState {
            line: entry.line,
            selector: entry.selector(),
            clause: entry.clause.clone(),
            class: entry.class.name().to_owned(),
            reason: entry.reason.clone(),
            condition: entry.condition.as_ref().map(|c| c.text.clone()),
            held: entry.holds,
            unknown_facts: entry.unknown_facts.iter().map(|f| f.to_string()).collect(),
        }
    }
}

/// The fields of a JSON report as written ([`crate::reports::report::json`]).
#[derive(Serialize)]
pub(crate) struct JsonReport<'a> {
    pub(crate) backend: &'a str,
    #[serde(flatten)]
    pub(crate) context: &'a Context,
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) unsupported: usize,
    pub(crate) known_failures: usize,
    pub(crate) excluded: usize,
    /// The excluded trials per hello declaration ([`crate::reports::report::exclusions`]).
    pub(crate) excluded_by: BTreeMap<&'a str, usize>,
    pub(crate) implementation_defined: usize,
    pub(crate) not_run: usize,
    pub(crate) shape_checked: usize,
    pub(crate) rejected_unclassified: usize,
    /// Why the run is no pass although no trial failed
    /// ([`crate::judge::run_verdict::RunSummary::summarize_final`]).
    pub(crate) problems: &'a [String],
    /// Each expectations entry that matched, with the trials it made known failures.
    pub(crate) known_failure_entries: Vec<EntryMatches<'a>>,
    /// Per key of the hello's `composed`, the trials under it and how many passed.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) composed_counts: BTreeMap<&'a str, ComposedCount>,
    /// The keys of the hello's `composed` that no trial's reply named.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) composed_unused: Vec<&'a str>,
    pub(crate) trials: &'a [Record],
}

/// The trials under one key of the hello's `composed`, and how many passed.
#[derive(Serialize)]
pub(crate) struct ComposedCount {
    pub(crate) trials: usize,
    pub(crate) passed: usize,
}

/// An expectations entry and the trials it matched.
#[derive(Serialize)]
pub(crate) struct EntryMatches<'a> {
    pub(crate) line: usize,
    pub(crate) selector: &'a str,
    pub(crate) clause: &'a str,
    pub(crate) class: &'a str,
    pub(crate) reason: &'a str,
    pub(crate) trials: Vec<&'a str>,
}

/// How many of `records` have `status`.
pub(crate) fn count(records: &[Record], status: Status) -> usize {
    records.iter().filter(|r| r.status == status).count()
}

/// The lines of a failure report that describe the case rather than the problem
/// ([`crate::judge::verdict::describe_case`]), and the replay line that ends it.
const CASE_LINES: [&str; 9] = [
    "case:",
    "source:",
    "clauses:",
    "inputs:",
    "attrs:",
    "compare:",
    "note:",
    "round trip:",
    "replay:",
];

impl Record {
    /// Why the trial did not pass, in one line: the known-failures entry's reason, the reason
    /// it was not run, or the first line of its failure report after the case's description.
    /// Empty when it passed. Works on reports of any version (it reads the message).
    pub(crate) fn reason(&self) -> String {
        if let Some(known) = &self.known {
            return known.reason.clone();
        }
        let mut lines = self
            .message
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !CASE_LINES.iter().any(|p| l.starts_with(p)));
        let line = lines.next().unwrap_or("");
        let line = line.strip_prefix("known failure: ").unwrap_or(line);
        // A line announcing a list ("2 of 4 elements differ ...; first 2:") with its first item.
        match lines.next() {
            Some(next) if line.ends_with(':') => format!("{line} {next}"),
            _ => line.to_owned(),
        }
    }
}

/// A JSON report read back ([`crate::reports::report::read`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Report {
    pub(crate) path: PathBuf,
    /// The backend's name, as its hello gave it.
    pub(crate) backend: String,
    /// Why the run was no pass although no trial failed
    /// ([`crate::judge::run_verdict::RunSummary::summarize_final`]).
    pub(crate) problems: Vec<String>,
    /// The engine, the machine and the expectations entries (empty in a report written
    /// before they were recorded).
    pub(crate) context: Context,
    pub(crate) trials: Vec<Record>,
}

/// The fields of a JSON report that are read back; the counts are derived from the trials.
#[derive(Deserialize)]
pub(crate) struct ReportFile {
    pub(crate) backend: String,
    #[serde(flatten)]
    pub(crate) context: Context,
    #[serde(default)]
    pub(crate) problems: Vec<String>,
    pub(crate) trials: Vec<Record>,
}

#[cfg(test)]
impl Record {
    /// A Slice trial of `status` with nothing else: the tests' starting point, each adding what
    /// it looks at.
    pub(crate) fn bare(name: &str, status: Status) -> Record {
        Record {
            name: name.into(),
            op: "slice".into(),
            dtype: None,
            dtypes: Vec::new(),
            status,
            excluded_by: None,
            message: String::new(),
            seconds: 0.0,
            clauses: Vec::new(),
            known: None,
            composed: Vec::new(),
            replay: None,
        }
    }
}
