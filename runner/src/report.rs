//! What a run found, kept per trial and written as a JSON report, a JUnit file and an
//! op × dtype table; and JSON reports read back ([`read`]) for `runner report` and `runner diff`.
//!
//! The JSON report is read by later versions of the runner: fields are only ever added, and a
//! field a report lacks (one written before the field existed) reads as empty.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The result of one trial, as reports show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    /// Not run: the backend does not support it (reported by libtest as ignored).
    Unsupported,
    /// Failed as an expectations entry says it does (reported as ignored).
    KnownFailure,
    /// Not sent: the backend was given up on (it failed to start too often). Fails the run;
    /// a JUnit error, and counted as failed in the table.
    NotRun,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub name: String,
    pub op: String,
    pub dtype: Option<String>,
    pub status: Status,
    /// The failure report or the reason it was not run; empty when it passed.
    pub message: String,
    pub seconds: f64,
    /// The clause ids the trial's case names (none for a problem found before running, such as
    /// a spec error).
    #[serde(default)]
    pub clauses: Vec<String>,
    /// The expectations entry that made the trial a known failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known: Option<Known>,
    /// The command that replays the trial alone ([`crate::replay::command`]); none for a trial
    /// that is no case (a spec error, a stale expectation, an unused golden).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
}

/// The known-failures entry a trial matched ([`crate::expectations::Entry`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    /// The clause the backend breaks.
    pub clause: String,
    /// `semantics`, `defect` or `adapter`.
    pub class: String,
    pub reason: String,
    /// The entry's line in the expectations file.
    pub line: usize,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    backend: &'a str,
    passed: usize,
    failed: usize,
    unsupported: usize,
    known_failures: usize,
    not_run: usize,
    trials: &'a [Record],
}

fn count(records: &[Record], status: Status) -> usize {
    records.iter().filter(|r| r.status == status).count()
}

pub fn json(backend: &str, records: &[Record]) -> String {
    let report = JsonReport {
        backend,
        passed: count(records, Status::Passed),
        failed: count(records, Status::Failed),
        unsupported: count(records, Status::Unsupported),
        known_failures: count(records, Status::KnownFailure),
        not_run: count(records, Status::NotRun),
        trials: records,
    };
    serde_json::to_string_pretty(&report).expect("reports serialize")
}

/// `text` as XML or HTML text or attribute value; control characters other than newline and tab
/// are dropped (XML 1.0 cannot hold them).
pub(crate) fn xml_escape(text: &str) -> String {
    text.chars()
        .filter(|&c| c == '\n' || c == '\t' || c >= ' ')
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

/// JUnit XML: one `testsuite` per op.
pub fn junit(backend: &str, records: &[Record]) -> String {
    let mut by_op: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for record in records {
        by_op.entry(&record.op).or_default().push(record);
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let skipped = |rs: &[&Record]| {
        rs.iter()
            .filter(|r| matches!(r.status, Status::Unsupported | Status::KnownFailure))
            .count()
    };
    let all: Vec<&Record> = records.iter().collect();
    let _ = writeln!(
        xml,
        "<testsuites name=\"opspec ({})\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
        xml_escape(backend),
        records.len(),
        count(records, Status::Failed),
        count(records, Status::NotRun),
        skipped(&all)
    );
    for (op, records) in by_op {
        let failures = records
            .iter()
            .filter(|r| r.status == Status::Failed)
            .count();
        let errors = records
            .iter()
            .filter(|r| r.status == Status::NotRun)
            .count();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{op}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{}\">",
            records.len(),
            skipped(&records)
        );
        for r in records {
            let (classname, name) =
                r.name
                    .split_once("::")
                    .map_or(("", r.name.as_str()), |(_, rest)| {
                        rest.split_once("::")
                            .map_or(("", rest), |(file, case)| (file, case))
                    });
            let _ = write!(
                xml,
                "    <testcase classname=\"{op}.{}\" name=\"{}\" time=\"{:.6}\"",
                xml_escape(classname),
                xml_escape(name),
                r.seconds
            );
            let first_line = r
                .message
                .lines()
                .find(|l| !l.starts_with("case:"))
                .unwrap_or("");
            match r.status {
                Status::Passed => xml.push_str("/>\n"),
                Status::Failed => {
                    let _ = writeln!(
                        xml,
                        "><failure message=\"{}\">{}</failure></testcase>",
                        xml_escape(first_line),
                        xml_escape(&r.message)
                    );
                }
                Status::NotRun => {
                    let _ = writeln!(
                        xml,
                        "><error message=\"{}\"/></testcase>",
                        xml_escape(&r.message)
                    );
                }
                Status::Unsupported | Status::KnownFailure => {
                    let _ = writeln!(
                        xml,
                        "><skipped message=\"{}\"/></testcase>",
                        xml_escape(&r.message)
                    );
                }
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// The op × dtype table: passed / failed (not run included: it fails the run) / skipped
/// (unsupported or known failure) per cell.
pub fn table(records: &[Record]) -> String {
    let mut cells: BTreeMap<(&str, &str), [usize; 3]> = BTreeMap::new();
    let mut dtypes: Vec<&str> = Vec::new();
    for r in records {
        let dtype = r.dtype.as_deref().unwrap_or("-");
        if !dtypes.contains(&dtype) {
            dtypes.push(dtype);
        }
        let cell = cells.entry((&r.op, dtype)).or_default();
        cell[match r.status {
            Status::Passed => 0,
            Status::Failed | Status::NotRun => 1,
            Status::Unsupported | Status::KnownFailure => 2,
        }] += 1;
    }
    dtypes.sort();
    let ops: Vec<&str> = {
        let mut ops: Vec<&str> = cells.keys().map(|(op, _)| *op).collect();
        ops.dedup();
        ops
    };
    let width = 11;
    let mut text = format!("{:<12}", "pass/fail/skip");
    for dtype in &dtypes {
        let _ = write!(text, "{dtype:>width$}");
    }
    text.push('\n');
    for op in ops {
        let _ = write!(text, "{op:<12}");
        for dtype in &dtypes {
            let cell = match cells.get(&(op, *dtype)) {
                Some([p, f, s]) => format!("{p}/{f}/{s}"),
                None => ".".into(),
            };
            let _ = write!(text, "{cell:>width$}");
        }
        text.push('\n');
    }
    text
}

/// The order reports list the statuses in, and how they name them to people.
impl Status {
    /// Every status, in the order pages and lists show them.
    pub const ALL: [Status; 5] = [
        Status::Passed,
        Status::Failed,
        Status::KnownFailure,
        Status::Unsupported,
        Status::NotRun,
    ];

    /// Whether a trial of this status fails the run.
    pub fn fails(self) -> bool {
        matches!(self, Status::Failed | Status::NotRun)
    }

    pub fn label(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::KnownFailure => "known failure",
            Status::Unsupported => "unsupported",
            Status::NotRun => "not run",
        }
    }
}

/// The lines of a failure report that describe the case rather than the problem
/// ([`crate::verdict::describe_case`]), and the replay line that ends it.
const CASE_LINES: [&str; 8] = [
    "case:",
    "source:",
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
    pub fn reason(&self) -> String {
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

/// A JSON report read back ([`read`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub path: PathBuf,
    /// The backend's name, as its hello gave it.
    pub backend: String,
    pub trials: Vec<Record>,
}

/// The fields of a JSON report that are read back; the counts are derived from the trials.
#[derive(Deserialize)]
struct ReportFile {
    backend: String,
    trials: Vec<Record>,
}

/// Why a JSON report cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReadError {
    #[error("cannot read the report {}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{} is not a JSON report of `runner --report-json`: {message}", path.display())]
    Format { path: PathBuf, message: String },
    #[error("{}: trial `{trial}` is reported twice", path.display())]
    Duplicate { path: PathBuf, trial: String },
}

/// Reads a report written by `--report-json`, of this version or an earlier one.
pub fn read(path: &Path) -> Result<Report, ReadError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReadError::Read {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let file: ReportFile = serde_json::from_str(&text).map_err(|e| ReadError::Format {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let mut seen = std::collections::BTreeSet::new();
    if let Some(twice) = file.trials.iter().find(|r| !seen.insert(r.name.as_str())) {
        return Err(ReadError::Duplicate {
            path: path.to_owned(),
            trial: twice.name.clone(),
        });
    }
    Ok(Report {
        path: path.to_owned(),
        backend: file.backend,
        trials: file.trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, dtype: Option<&str>, status: Status, message: &str) -> Record {
        Record {
            name: name.into(),
            op: name.split("::").next().unwrap().into(),
            dtype: dtype.map(Into::into),
            status,
            message: message.into(),
            seconds: 0.001,
            clauses: vec!["slice.mode.strict".into()],
            known: None,
            replay: Some(format!("runner replay {name}")),
        }
    }

    #[test]
    fn table_counts_per_op_and_dtype() {
        let records = [
            record("slice::a::b::int8", Some("int8"), Status::Passed, ""),
            record("slice::a::c::int8", Some("int8"), Status::Failed, "x"),
            record("shuffle::a::b", None, Status::Unsupported, "no"),
        ];
        let table = table(&records);
        assert!(table.contains("slice"), "{table}");
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("slice") && l.contains("1/1/0")),
            "{table}"
        );
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("shuffle") && l.contains("0/0/1")),
            "{table}"
        );
    }

    #[test]
    fn junit_escapes_and_marks_failures() {
        let records = [
            record(
                "slice::f::c::int8",
                Some("int8"),
                Status::Failed,
                "case: x\nexpected <1> & got 2",
            ),
            record("slice::f::d", None, Status::Passed, ""),
        ];
        let xml = junit("numpy", &records);
        assert!(
            xml.contains("<testcase classname=\"slice.f\" name=\"c::int8\""),
            "{xml}"
        );
        assert!(
            xml.contains("failure message=\"expected &lt;1&gt; &amp; got 2\""),
            "{xml}"
        );
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        let json = json("numpy", &records);
        assert!(json.contains("\"failed\": 1"), "{json}");
    }

    #[test]
    fn a_trial_not_run_is_an_error_and_a_failure_in_the_table() {
        let records = [
            record("slice::f::c", None, Status::NotRun, "not run: gone"),
            record("slice::f::d", None, Status::Passed, ""),
        ];
        let xml = junit("numpy", &records);
        assert!(xml.contains("errors=\"1\""), "{xml}");
        assert!(xml.contains("<error message=\"not run: gone\"/>"), "{xml}");
        assert!(json("numpy", &records).contains("\"not_run\": 1"));
        assert!(table(&records).contains("1/1/0"), "{}", table(&records));
    }

    /// A scratch file holding `text`, removed on drop.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(name: &str, text: &str) -> Scratch {
            let path = std::env::temp_dir()
                .join(format!("opspec-report-{name}-{}.json", std::process::id()));
            std::fs::write(&path, text).unwrap();
            Scratch(path)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn a_report_reads_back_and_one_without_the_newer_fields_too() {
        let records = [
            record(
                "slice::f::c::int8",
                Some("int8"),
                Status::Failed,
                "case: x\n1 of 4 elements differ; first 1:\n  at [1]: expected 1, got 2\nreplay: r",
            ),
            record("slice::f::d", None, Status::Passed, ""),
        ];
        let file = Scratch::new("round-trip", &json("numpy", &records));
        let report = read(&file.0).unwrap();
        assert_eq!(report.backend, "numpy");
        assert_eq!(report.trials, records);
        assert_eq!(
            report.trials[0].reason(),
            "1 of 4 elements differ; first 1: at [1]: expected 1, got 2"
        );
        // As `--report-json` wrote it before clauses, known failures and replay commands.
        let old = Scratch::new(
            "old",
            r#"{"backend": "onnxruntime", "passed": 0, "failed": 0, "unsupported": 0,
                "known_failures": 1, "not_run": 0, "trials": [{"name": "slice::f::e",
                "op": "slice", "dtype": null, "status": "known_failure",
                "message": "known failure: clamps\ncase:   slice::f::e (x.yaml)\ngot 1",
                "seconds": 0.5}]}"#,
        );
        let report = read(&old.0).unwrap();
        let trial = &report.trials[0];
        assert!(trial.clauses.is_empty() && trial.known.is_none() && trial.replay.is_none());
        assert_eq!(trial.reason(), "clamps");
    }

    #[test]
    fn what_is_no_report_is_an_error_naming_the_file() {
        let missing = std::env::temp_dir().join("opspec-report-no-such-file.json");
        assert!(matches!(read(&missing), Err(ReadError::Read { .. })));
        let junit = Scratch::new("junit", "<?xml version=\"1.0\"?>");
        let error = read(&junit.0).unwrap_err();
        assert!(matches!(error, ReadError::Format { .. }));
        assert!(
            error.to_string().contains(&junit.0.display().to_string()),
            "{error}"
        );
        let unknown = Scratch::new(
            "status",
            r#"{"backend": "b", "trials": [{"name": "a", "op": "slice", "dtype": null,
                "status": "maybe", "message": "", "seconds": 0}]}"#,
        );
        let error = read(&unknown.0).unwrap_err().to_string();
        assert!(error.contains("unknown variant `maybe`"), "{error}");
        let records = [record("slice::f::d", None, Status::Passed, "")];
        let twice = Scratch::new(
            "twice",
            &json("b", &[records[0].clone(), records[0].clone()]),
        );
        assert_eq!(
            read(&twice.0),
            Err(ReadError::Duplicate {
                path: twice.0.clone(),
                trial: "slice::f::d".into()
            })
        );
    }
}
