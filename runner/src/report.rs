//! What a run found, kept per trial and written as a JSON report, a JUnit file and an
//! op × dtype table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

/// The result of one trial, as reports show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    pub name: String,
    pub op: String,
    pub dtype: Option<String>,
    pub status: Status,
    /// The failure report or the reason it was not run; empty when it passed.
    pub message: String,
    pub seconds: f64,
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

fn xml_escape(text: &str) -> String {
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
}
