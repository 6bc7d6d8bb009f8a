//! What a run found, trial by trial, as the JSON report holds it: each trial's [`Status`] and
//! [`Record`], and the report file's fields, written by
//! [`crate::reports::report`] and read back by it.
//!
//! The JSON report is read by later versions of the runner: fields are only ever added, and a
//! field a report lacks (one written before the field existed) reads as empty.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::backend::facts::Facts;
use crate::judge::expectations::{Entry, EntryLine};
use crate::judge::partition::{fingerprint, Partition};
use crate::judge::status::{Counts, Status};
use crate::judge::verdict::Decision;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Record {
    pub(crate) name: String,
    pub(crate) op: String,
    /// The dtype the trial is filed under ([`crate::backend::interface::primary_dtype`]).
    pub(crate) dtype: Option<String>,
    /// Every dtype the trial involves ([`crate::backend::interface::trial_dtypes`]).
    #[serde(default)]
    pub(crate) dtypes: Vec<String>,
    /// Given by its decision alone ([`Record::of`]), read by [`Record::status`].
    status: Status,
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
    pub(crate) known: Option<EntryLine>,
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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Context {
    #[serde(default)]
    pub(crate) facts: Facts,
    #[serde(default)]
    pub(crate) expectation_entries: Vec<EntryState>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) composed: BTreeMap<String, String>,
}

/// An expectations entry as a run found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct EntryState {
    #[serde(flatten)]
    pub(crate) entry: EntryLine,
    /// Whether its condition held (an entry without one always holds).
    pub(crate) held: bool,
    /// The facts its condition tests that the run did not know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) unknown_facts: Vec<String>,
}

impl EntryState {
    pub(crate) fn of(entry: &Entry) -> EntryState {
        EntryState {
            entry: entry.written.clone(),
            held: entry.holds,
            unknown_facts: entry.unknown_facts.iter().map(|f| f.to_string()).collect(),
        }
    }
}

/// The fields of a JSON report as written ([`crate::reports::report::json`]): the report, and
/// what the JSON report derives from its trials for its readers.
#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct JsonReport<'a> {
    pub(crate) backend: &'a str,
    #[serde(flatten)]
    pub(crate) context: &'a Context,
    /// The trials per status, under the keys of [`crate::judge::status::Row::count_key`].
    #[serde(flatten)]
    pub(crate) counts: Counts,
    /// The excluded trials per hello declaration ([`crate::reports::report::exclusions`]).
    pub(crate) excluded_by: BTreeMap<&'a str, usize>,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<&'a RunInfo>,
}

/// The trials under one key of the hello's `composed`, and how many passed.
#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct ComposedCount {
    pub(crate) trials: usize,
    pub(crate) passed: usize,
}

/// An expectations entry and the trials it matched. Its condition is listed with whether it
/// held, under `expectation_entries`.
#[derive(Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub(crate) struct EntryMatches<'a> {
    #[serde(flatten)]
    pub(crate) entry: EntryLine,
    pub(crate) trials: Vec<&'a str>,
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
    /// The record of the trial `name` of `op`, as `decision` decided it: the one way a record
    /// is made, so that only the verdict gives a trial its status. What the trial is beside
    /// its decision (its dtypes, time, clauses, replay command) is filled in after.
    pub(crate) fn of(decision: Decision, name: String, op: String) -> Record {
        let verdict = decision.into_verdict();
        Record {
            name,
            op,
            dtype: None,
            dtypes: Vec::new(),
            status: verdict.status,
            excluded_by: verdict.excluded_by,
            message: verdict.message,
            seconds: 0.0,
            clauses: Vec::new(),
            known: verdict.known,
            composed: Vec::new(),
            replay: None,
        }
    }

    /// The record with the status and message of a later `decision` (a fault the backend
    /// reported after the trial's verdict); the rest as it was.
    pub(crate) fn redecided(self, decision: Decision) -> Record {
        let verdict = decision.into_verdict();
        Record {
            status: verdict.status,
            message: verdict.message,
            excluded_by: verdict.excluded_by.or(self.excluded_by),
            known: verdict.known.or(self.known),
            ..self
        }
    }

    /// The trial's status.
    pub(crate) fn status(&self) -> Status {
        self.status
    }

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

/// A run's report: what a run found, and what every writer of it takes (the JSON report,
/// JUnit, the console's table, the HTML page, the wpt export). Written by a run or a merge,
/// read back from a JSON report ([`crate::reports::report::read`]), whose counts are derived
/// from its trials.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct Report {
    /// The file it was read from; empty for a report a run has just made.
    #[serde(skip)]
    pub(crate) path: PathBuf,
    /// The backend's name, as its hello gave it.
    pub(crate) backend: String,
    /// The engine, the machine and the expectations entries (empty in a report written
    /// before they were recorded).
    #[serde(flatten)]
    pub(crate) context: Context,
    /// Why the run was no pass although no trial failed
    /// ([`crate::judge::run_verdict::RunSummary::summarize_final`]).
    #[serde(default)]
    pub(crate) problems: Vec<String>,
    pub(crate) trials: Vec<Record>,
    /// The run that wrote it, under `"run"` (none in a report written before runs were
    /// described, or by the in-process API). A description this runner cannot read whole
    /// (another version's, a hand-made report's) reads as none: the readers that need it
    /// (`runner merge`, `runner update-expectations`) say it is missing, the others do without.
    #[serde(default, deserialize_with = "whole_or_none")]
    pub(crate) run: Option<RunInfo>,
}

/// A run description, or none when the value is not one whole.
fn whole_or_none<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<RunInfo>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

/// What a JSON report says about the run that wrote it, under `"run"`: what parts of one
/// run (`--partition K/N`) share, checked by `runner merge`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
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
    /// parts of one run read the same files (`crate::reports::merge::content_fingerprint`).
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

#[cfg(test)]
impl Record {
    /// A Slice trial of `status` with nothing else: the tests' starting point, each adding what
    /// it looks at.
    pub(crate) fn bare(name: &str, status: Status) -> Record {
        let verdict = crate::judge::verdict::Verdict::of_status(status, String::new());
        Record::of(Decision::uncovered(verdict), name.into(), "slice".into())
    }
}
