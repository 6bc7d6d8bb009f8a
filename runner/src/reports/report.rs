//! A run's records ([`crate::judge::record`], which holds the report file's fields) written as
//! a JSON report, a JUnit file and an op × dtype table; and JSON reports read back ([`read`])
//! for `runner report` and `runner diff`. Whether the run is a pass is decided in
//! [`crate::judge::run_verdict`]; these only write it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::path::{Path, PathBuf};

use crate::judge::expectations::EntryLine;
use crate::judge::record::{ComposedCount, EntryMatches, JsonReport, Record, Report};
use crate::judge::status::{Counts, JunitKind, Status};

/// The matched expectations entries, by line.
fn entry_matches(records: &[Record]) -> Vec<EntryMatches<'_>> {
    let mut entries: BTreeMap<usize, EntryMatches> = BTreeMap::new();
    for record in records {
        if let Some(known) = &record.known {
            entries
                .entry(known.line)
                .or_insert_with(|| EntryMatches {
                    entry: EntryLine {
                        condition: None,
                        ..known.clone()
                    },
                    trials: Vec::new(),
                })
                .trials
                .push(&record.name);
        }
    }
    entries.into_values().collect()
}

/// The JSON report (`--report-json`): the report, its counts per status and what else its
/// readers take from its trials, and the run that wrote it last, under `"run"`.
pub(crate) fn json(report: &Report) -> String {
    let records = &report.trials;
    let json = JsonReport {
        backend: &report.backend,
        context: &report.context,
        counts: Counts::of(records.iter().map(|r| r.status())),
        excluded_by: exclusions(records).into_iter().collect(),
        problems: &report.problems,
        known_failure_entries: entry_matches(records),
        composed_counts: (composed_counts(records).into_iter())
            .map(|(key, (trials, passed))| (key, ComposedCount { trials, passed }))
            .collect(),
        composed_unused: composed_unused(records, &report.context.composed),
        trials: records,
        run: report.run.as_ref(),
    };
    serde_json::to_string_pretty(&json).expect("reports serialize")
}

/// What the console shows of a run after libtest's lines: the warnings of large exclusions,
/// the backend and its facts, the op × dtype [`table`], the counts per status, the
/// exclusions per declaration, the native and composed trials, and the clauses the failures
/// cite (ranked by `position` in the clause catalogue). Nothing for a run of one trial.
pub(crate) fn console(report: &Report, position: impl Fn(&str) -> Option<usize>) -> String {
    let records = &report.trials;
    let mut text = String::new();
    if records.len() <= 1 {
        return text;
    }
    for warning in exclusion_warnings(records) {
        let _ = writeln!(text, "{warning}");
    }
    let _ = writeln!(
        text,
        "backend: {} ({})\n{}{}",
        crate::backend::facts::printable(&report.backend),
        report.context.facts.line(),
        table(records),
        summary(records)
    );
    let lines = [
        exclusion_line(records),
        composed_line(records, &report.context.composed),
        failures_by_clause(records, position),
    ];
    for line in lines.into_iter().flatten() {
        let _ = writeln!(text, "{line}");
    }
    text
}

/// A writer of a report file.
pub(crate) type Writer = fn(&Report) -> String;

/// A report file a run writes: the flag that names its file, the variable
/// that names it when the flag is not given, the flag's help, and its writer.
pub(crate) struct Format {
    pub(crate) flag: &'static str,
    pub(crate) variable: &'static str,
    pub(crate) help: &'static str,
    pub(crate) write: Writer,
}

/// The report files a run writes: the one list a new format of a run joins (CONTRIBUTING.md,
/// "Adding a report format"). The run's flags, their variables and their help are made from it
/// (`crate::run::config::ReportFiles`).
pub(crate) const FORMATS: [Format; 2] = [
    Format {
        flag: "--report-json",
        variable: "OPSPEC_REPORT_JSON",
        help: "Write a JSON report there",
        write: json,
    },
    Format {
        flag: "--junit",
        variable: "OPSPEC_JUNIT",
        help: "Write a JUnit XML report there",
        write: junit,
    },
];

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

pub(crate) use crate::judge::run_verdict::summary;

/// Trials per `composed` key of the backend's hello, and how many of them passed.
pub(crate) fn composed_counts(records: &[Record]) -> BTreeMap<&str, (usize, usize)> {
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for record in records.iter().filter(|r| r.status() != Status::Excluded) {
        for key in &record.composed {
            let count = counts.entry(key).or_default();
            count.0 += 1;
            count.1 += usize::from(record.status() == Status::Passed);
        }
    }
    counts
}

/// The keys of the hello's `composed` catalogue that no trial's reply named.
pub(crate) fn composed_unused<'a>(
    records: &[Record],
    catalogue: &'a BTreeMap<String, String>,
) -> Vec<&'a str> {
    let used = composed_counts(records);
    (catalogue.keys())
        .map(String::as_str)
        .filter(|key| !used.contains_key(key))
        .collect()
}

/// `native: 4,120 trials (4,000 passed); composed by the adapter: 1,300 (1,290 passed):
/// as_strided 130/130, reformat:CHW4 80/90`: the trials the engine implements apart from those
/// the adapter composed from other operations, as their replies say, and the keys of the
/// hello's `composed` no reply named; nothing when the hello lists none and no reply names one.
pub(crate) fn composed_line(
    records: &[Record],
    catalogue: &BTreeMap<String, String>,
) -> Option<String> {
    let counts = composed_counts(records);
    if counts.is_empty() && catalogue.is_empty() {
        return None;
    }
    let unused = composed_unused(records, catalogue);
    let unused = match unused.is_empty() {
        true => String::new(),
        false => format!(
            "\ncomposed paths the hello lists and no reply named: {}",
            unused.join(", ")
        ),
    };
    let [native, composed] = native_and_composed(records);
    let parts: Vec<String> = (counts.iter())
        .map(|(key, (trials, passed))| format!("{key} {passed}/{trials}"))
        .collect();
    Some(format!(
        "native: {} trials ({} passed); composed by the adapter, not the engine's own: {} ({} passed): {}{unused}",
        native.1,
        native.0,
        composed.1,
        composed.0,
        parts.join(", ")
    ))
}

/// `[native, composed]`, each `(passed, trials)`: the trials the engine implements and those
/// the adapter composes. Excluded trials, and expectations entries that match no case, count
/// in neither.
pub(crate) fn native_and_composed(records: &[Record]) -> [(usize, usize); 2] {
    let mut counts = [(0, 0); 2];
    let sent = (records.iter())
        .filter(|r| r.status() != Status::Excluded && !r.name.starts_with("expectations::"));
    for record in sent {
        let count = &mut counts[usize::from(!record.composed.is_empty())];
        count.0 += usize::from(record.status() == Status::Passed);
        count.1 += 1;
    }
    counts
}

/// `95 failing, by clause: slice.reflect.mirror 95; 3 more cited by some of them`: the
/// clauses cited by the most failed trials (those of one count in the order `position` gives,
/// the catalogue's, then by id), then how many other clauses some of them cite; nothing when
/// none failed. A trial citing no clause (a spec error, a stale entry) counts under
/// `(no clause)`.
pub(crate) fn failures_by_clause(
    records: &[Record],
    position: impl Fn(&str) -> Option<usize>,
) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for record in records.iter().filter(|r| r.status().fails()) {
        if record.clauses.is_empty() {
            *counts.entry("(no clause)").or_default() += 1;
        }
        for clause in &record.clauses {
            *counts.entry(clause).or_default() += 1;
        }
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    // Unknown ids (and `(no clause)`) after the catalogue's.
    let rank = |id: &str| position(id).unwrap_or(usize::MAX);
    counts.sort_by(|a, b| {
        (b.1.cmp(&a.1))
            .then(rank(a.0).cmp(&rank(b.0)))
            .then(a.0.cmp(b.0))
    });
    (!counts.is_empty()).then(|| {
        let failed = records.iter().filter(|r| r.status().fails()).count();
        // The clauses the most failing trials cite, the broken rule among them; a clause the
        // failing cases also cite is a rule they rest on, not one they show broken.
        let most = counts[0].1;
        let (top, rest) = counts.split_at(counts.iter().take_while(|(_, n)| *n == most).count());
        let parts: Vec<String> = top.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let rest = match rest.len() {
            0 => String::new(),
            n => format!(
                "; {n} more cited by some of them (each trial's clauses are in the JSON report)"
            ),
        };
        format!("{failed} failing, by clause: {}{rest}", parts.join(", "))
    })
}

/// `warning: the hello's declaration `reformat format=LINEAR` excludes 1004 of 1323 reformat
/// trials`: one line per declaration that excludes more than a quarter of an op's trials, most
/// first, so that a declaration that silently leaves out most of an op is seen.
pub(crate) fn exclusion_warnings(records: &[Record]) -> Vec<String> {
    let mut per_op: BTreeMap<&str, usize> = BTreeMap::new();
    let mut excluded: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for record in records
        .iter()
        .filter(|r| !r.name.starts_with("expectations::"))
    {
        *per_op.entry(&record.op).or_default() += 1;
        if let (Status::Excluded, Some(by)) = (record.status(), &record.excluded_by) {
            *excluded.entry((&record.op, by)).or_default() += 1;
        }
    }
    let mut large: Vec<(usize, &str, &str)> = (excluded.into_iter())
        // The round trips an offline export leaves out (crate::backend::offline) are said by
        // the export, and are no declaration of a hello.
        .filter(|((_, by), _)| *by != "offline round trip")
        .filter(|((op, _), n)| 4 * n > per_op[op])
        .map(|((op, by), n)| (n, op, by))
        .collect();
    large.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(b.2)));
    (large.into_iter())
        .map(|(n, op, by)| {
            format!(
                "warning: the hello's declaration `{by}` excludes {n} of the {} {op} trials",
                per_op[op]
            )
        })
        .collect()
}

/// How many trials each hello declaration excluded, most first (then by name).
pub(crate) fn exclusions(records: &[Record]) -> Vec<(&str, usize)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for record in records {
        if let (Status::Excluded, Some(by)) = (record.status(), &record.excluded_by) {
            *counts.entry(by).or_default() += 1;
        }
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

/// `excluded: 120 by slice mode=reflect, 40 by scale dtype fp8`, or nothing when the hello
/// excluded no trial.
pub(crate) fn exclusion_line(records: &[Record]) -> Option<String> {
    let counts = exclusions(records);
    (!counts.is_empty()).then(|| {
        let parts: Vec<String> = counts
            .iter()
            .map(|(by, n)| format!("{n} by {by}"))
            .collect();
        format!("excluded: {}", parts.join(", "))
    })
}

/// JUnit XML: one `testsuite` per op, and a failing `run` suite holding the `problems` of
/// the run. Each trial that neither passed nor failed carries its status as the property
/// `opspec.status`; an implementation-defined divergence is neither failed nor skipped (it
/// ran, and its answer is acceptable).
pub(crate) fn junit(report: &Report) -> String {
    let (backend, facts) = (&report.backend, &report.context.facts);
    let (records, problems) = (&report.trials, &report.problems);
    let counts = Counts::of(records.iter().map(|r| r.status()));
    let mut by_op: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for record in records {
        by_op.entry(&record.op).or_default().push(record);
    }
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let skipped = |rs: &[&Record]| rs.iter().filter(|r| r.status().is_skip()).count();
    let all: Vec<&Record> = records.iter().collect();
    let _ = writeln!(
        xml,
        "<testsuites name=\"opspec ({})\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
        xml_escape(backend),
        records.len() + problems.len(),
        counts[Status::Failed] + problems.len(),
        counts[Status::NotRun],
        skipped(&all)
    );
    // The facts, as properties of every suite (JUnit has none for `testsuites`).
    let mut properties = String::new();
    if !facts.pairs().is_empty() {
        properties.push_str("    <properties>");
        for (name, value) in facts.pairs() {
            let _ = write!(
                properties,
                "<property name=\"opspec.{name}\" value=\"{}\"/>",
                xml_escape(&value)
            );
        }
        properties.push_str("</properties>\n");
    }
    if !problems.is_empty() {
        let _ = writeln!(
            xml,
            "  <testsuite name=\"run\" tests=\"{0}\" failures=\"{0}\" errors=\"0\" skipped=\"0\">",
            problems.len()
        );
        xml.push_str(&properties);
        for (index, problem) in problems.iter().enumerate() {
            let _ = writeln!(
                xml,
                "    <testcase classname=\"run\" name=\"problem_{}\" time=\"0\"><failure message=\"{}\">{}</failure></testcase>",
                index + 1,
                xml_escape(problem),
                xml_escape(problem)
            );
        }
        xml.push_str("  </testsuite>\n");
    }
    for (op, records) in by_op {
        let failures = records
            .iter()
            .filter(|r| r.status().row().junit == JunitKind::Failure)
            .count();
        let errors = records
            .iter()
            .filter(|r| r.status().row().junit == JunitKind::Error)
            .count();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{op}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{}\">",
            records.len(),
            skipped(&records)
        );
        xml.push_str(&properties);
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
            match r.status().row().junit {
                JunitKind::Passed => xml.push_str("/>\n"),
                JunitKind::Failure => {
                    let _ = writeln!(
                        xml,
                        "><failure message=\"{}\">{}</failure></testcase>",
                        xml_escape(first_line),
                        xml_escape(&r.message)
                    );
                }
                JunitKind::Error => {
                    let _ = writeln!(
                        xml,
                        "><error message=\"{}\"/></testcase>",
                        xml_escape(&r.message)
                    );
                }
                JunitKind::Skipped => {
                    let _ = writeln!(
                        xml,
                        "><properties><property name=\"opspec.status\" value=\"{}\"/></properties><skipped message=\"{}\"/></testcase>",
                        r.status().name(),
                        xml_escape(&r.message)
                    );
                }
                // Ran, without a full verdict: neither failed nor skipped, with the status named.
                JunitKind::Ran => {
                    let _ = writeln!(
                        xml,
                        "><properties><property name=\"opspec.status\" value=\"{}\"/></properties><system-out>{}</system-out></testcase>",
                        r.status().name(),
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

/// The op × dtype table (of the ops the backend declares): passed / failed (not run included: it fails the run) / skipped
/// (unsupported, excluded, known failure) / implementation-defined divergences (with the
/// shape-checked and unclassified rejections, which are neither passes nor failures) per cell.
pub(crate) fn table(records: &[Record]) -> String {
    let mut cells: BTreeMap<(&str, &str), [usize; 4]> = BTreeMap::new();
    let mut dtypes: Vec<&str> = Vec::new();
    // An op the backend does not declare has no row: the exclusion line counts it.
    let undeclared = |r: &Record| r.excluded_by.as_deref() == Some(&format!("op {}", r.op));
    for r in records.iter().filter(|r| !undeclared(r)) {
        let dtype = r.dtype.as_deref().unwrap_or("-");
        if !dtypes.contains(&dtype) {
            dtypes.push(dtype);
        }
        let cell = cells.entry((&r.op, dtype)).or_default();
        cell[r.status().column()] += 1;
    }
    dtypes.sort();
    let ops: Vec<&str> = {
        let mut ops: Vec<&str> = cells.keys().map(|(op, _)| *op).collect();
        ops.dedup();
        ops
    };
    let width = 13;
    let mut text = format!("{:<20}", "pass/fail/skip/impl");
    for dtype in &dtypes {
        let _ = write!(text, "{dtype:>width$}");
    }
    text.push('\n');
    for op in ops {
        let _ = write!(text, "{op:<20}");
        for dtype in &dtypes {
            let cell = match cells.get(&(op, *dtype)) {
                Some([p, f, s, d]) => format!("{p}/{f}/{s}/{d}"),
                None => ".".into(),
            };
            let _ = write!(text, "{cell:>width$}");
        }
        text.push('\n');
    }
    text.push_str("skip: unsupported, excluded by the hello, or known failure; impl: implementation-defined divergence (or, from a build-only backend or a rejection without a kind: shape-checked, rejected without an error kind)\n");
    text
}

/// Why a JSON report cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ReadError {
    #[error("cannot read the report {}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("{} is not a JSON report of `runner --report-json`: {message}", path.display())]
    Format { path: PathBuf, message: String },
    #[error("{}: trial `{trial}` is reported twice", path.display())]
    Duplicate { path: PathBuf, trial: String },
}

/// The largest JSON report read (1 GiB): a report of the whole suite is a few MiB.
pub(crate) const REPORT_LIMIT: u64 = 1 << 30;

/// The text of a report file: only a regular file, of at most [`REPORT_LIMIT`] bytes, is read
/// (a FIFO or a device such as `/dev/zero` is refused before it is read).
pub(crate) fn read_text(path: &Path) -> Result<String, ReadError> {
    let read = |message: String| ReadError::Read {
        path: path.to_owned(),
        message,
    };
    let bytes = opspec_spec::source::read_bounded(path, REPORT_LIMIT).map_err(|message| {
        let shown = format!("cannot read {}: ", path.display());
        read(message.strip_prefix(&shown).unwrap_or(&message).to_owned())
    })?;
    String::from_utf8(bytes).map_err(|e| read(format!("it is not UTF-8 text ({e})")))
}

/// Reads a report written by `--report-json`, of this version or an earlier one.
pub(crate) fn read(path: &Path) -> Result<Report, ReadError> {
    let text = read_text(path)?;
    let report: Report = serde_json::from_str(&text).map_err(|e| ReadError::Format {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let mut seen = std::collections::BTreeSet::new();
    if let Some(twice) = report.trials.iter().find(|r| !seen.insert(r.name.as_str())) {
        return Err(ReadError::Duplicate {
            path: path.to_owned(),
            trial: twice.name.clone(),
        });
    }
    Ok(Report {
        path: path.to_owned(),
        ..report
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::facts::Facts;
    use crate::judge::record::Context;
    use crate::judge::run_verdict::run_problems;

    /// The report of a run on `backend` that found `records` and `problems`.
    fn of(backend: &str, context: &Context, records: &[Record], problems: &[String]) -> Report {
        Report {
            backend: backend.into(),
            context: context.clone(),
            problems: problems.to_vec(),
            trials: records.to_vec(),
            ..Report::default()
        }
    }

    fn json(backend: &str, context: &Context, records: &[Record], problems: &[String]) -> String {
        super::json(&of(backend, context, records, problems))
    }

    fn junit(backend: &str, facts: &Facts, records: &[Record], problems: &[String]) -> String {
        let context = Context {
            facts: facts.clone(),
            ..Context::default()
        };
        super::junit(&of(backend, &context, records, problems))
    }

    fn record(name: &str, dtype: Option<&str>, status: Status, message: &str) -> Record {
        let mut r = Record::bare(name, status);
        r.op = name.split("::").next().unwrap().into();
        r.dtype = dtype.map(Into::into);
        r.dtypes = dtype.into_iter().map(Into::into).collect();
        r.message = message.into();
        r.seconds = 0.001;
        r.clauses = vec!["slice.mode.strict".into()];
        r.replay = Some(format!("runner replay {name}"));
        r
    }

    #[test]
    fn clauses_of_one_count_follow_the_catalogue() {
        let failed = |name: &str, clauses: &[&str]| {
            let mut r = record(name, None, Status::Failed, "wrong");
            r.clauses = clauses.iter().map(|c| c.to_string()).collect();
            r
        };
        let records = vec![
            failed(
                "slice::f::a",
                &["slice.wrap.modulo", "slice.coordinates.formula"],
            ),
            failed(
                "slice::f::b",
                &[
                    "slice.wrap.modulo",
                    "slice.coordinates.formula",
                    "slice.unknown",
                    "slice.clamp.clamp",
                ],
            ),
        ];
        let catalogue = [
            "slice.coordinates.formula",
            "slice.wrap.modulo",
            "slice.clamp.clamp",
        ];
        // The clauses every failure cites, in the catalogue's order (not alphabetical); the
        // two that only one cites are counted, not named.
        let rest = "; 2 more cited by some of them (each trial's clauses are in the JSON report)";
        let line = failures_by_clause(&records, |id| catalogue.iter().position(|c| *c == id));
        assert_eq!(
            line,
            Some(format!(
                "2 failing, by clause: slice.coordinates.formula 2, slice.wrap.modulo 2{rest}"
            ))
        );
        let line = failures_by_clause(&records, |id| catalogue.iter().rev().position(|c| *c == id));
        assert_eq!(
            line,
            Some(format!(
                "2 failing, by clause: slice.wrap.modulo 2, slice.coordinates.formula 2{rest}"
            ))
        );
    }

    #[test]
    fn exclusions_are_counted_per_declaration() {
        let excluded = |name: &str, by: &str| {
            let mut r = record(name, None, Status::Excluded, "hello");
            r.excluded_by = Some(by.into());
            r
        };
        let records = [
            excluded("slice::f::a", "slice mode=reflect"),
            excluded("slice::f::b", "slice dtype fp8"),
            excluded("slice::f::c", "slice mode=reflect"),
            record("slice::f::d", None, Status::Passed, ""),
        ];
        assert_eq!(
            exclusion_line(&records).unwrap(),
            "excluded: 2 by slice mode=reflect, 1 by slice dtype fp8"
        );
        assert_eq!(exclusion_line(&records[3..]), None);
        let json: serde_json::Value =
            serde_json::from_str(&json("b", &Context::default(), &records, &[])).unwrap();
        assert_eq!(
            json["excluded_by"],
            serde_json::json!({"slice mode=reflect": 2, "slice dtype fp8": 1})
        );
        assert_eq!(json["trials"][0]["excluded_by"], "slice mode=reflect");
        assert!(json["trials"][3].get("excluded_by").is_none());
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
                .any(|l| l.starts_with("slice") && l.contains("1/1/0/0")),
            "{table}"
        );
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("shuffle") && l.contains("0/0/1/0")),
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
        let xml = junit("numpy", &Facts::default(), &records, &[]);
        assert!(
            xml.contains("<testcase classname=\"slice.f\" name=\"c::int8\""),
            "{xml}"
        );
        assert!(
            xml.contains("failure message=\"expected &lt;1&gt; &amp; got 2\""),
            "{xml}"
        );
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        let json = json("numpy", &Context::default(), &records, &[]);
        assert!(json.contains("\"failed\": 1"), "{json}");
    }

    #[test]
    fn an_implementation_defined_divergence_is_its_own_status_everywhere() {
        let message = "implementation-defined: differs from the reference's reading (x)";
        let records = [
            record(
                "scale::s::c::float32",
                Some("float32"),
                Status::ImplementationDefined,
                message,
            ),
            record("scale::s::d::float32", Some("float32"), Status::Passed, ""),
        ];
        let json = json("numpy", &Context::default(), &records, &[]);
        assert!(
            json.contains("\"status\": \"implementation_defined\""),
            "{json}"
        );
        assert!(json.contains("\"implementation_defined\": 1"), "{json}");
        assert!(json.contains("\"unsupported\": 0"), "{json}");
        let xml = junit("numpy", &Facts::default(), &records, &[]);
        assert!(
            xml.contains("<property name=\"opspec.status\" value=\"implementation_defined\"/>"),
            "{xml}"
        );
        assert!(
            xml.contains("failures=\"0\" errors=\"0\" skipped=\"0\""),
            "{xml}"
        );
        let table = table(&records);
        assert!(
            table
                .lines()
                .any(|l| l.starts_with("scale") && l.contains("1/0/0/1")),
            "{table}"
        );
    }

    #[test]
    fn a_run_with_nothing_passed_or_too_many_unasked_skips_is_no_pass() {
        let unsupported =
            |i: usize| record(&format!("slice::f::u{i}"), None, Status::Unsupported, "no");
        // Nothing passed: excluded and known failures alone are no pass.
        let none = [
            record("slice::f::a", None, Status::Excluded, "hello"),
            record("slice::f::b", None, Status::KnownFailure, "known"),
        ];
        let problems = run_problems(&none);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("nothing passed: 0 passed"),
            "{problems:?}"
        );
        // A failed trial fails the run by itself: no advice to allow skips beside it.
        let failed = [
            record("slice::f::a", None, Status::Excluded, "hello"),
            record("slice::f::e", None, Status::Failed, "spec error"),
        ];
        assert_eq!(run_problems(&failed), Vec::<String>::new());
        // 1 unsupported reply in 10 sent trials is within the share; 2 in 11 is not.
        let mut records: Vec<Record> = (0..9)
            .map(|i| record(&format!("slice::f::p{i}"), None, Status::Passed, ""))
            .collect();
        records.push(unsupported(0));
        records.push(record("slice::f::x", None, Status::Excluded, "hello"));
        assert_eq!(run_problems(&records), Vec::<String>::new());
        records.push(unsupported(1));
        let problems = run_problems(&records);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with(
                "2 of 11 trials sent to the backend (18.2 %) were answered `unsupported`"
            ),
            "{problems:?}"
        );
        let xml = junit("numpy", &Facts::default(), &records, &problems);
        assert!(
            xml.contains("<testsuite name=\"run\" tests=\"1\" failures=\"1\""),
            "{xml}"
        );
    }

    #[test]
    fn a_trial_not_run_is_an_error_and_a_failure_in_the_table() {
        let records = [
            record("slice::f::c", None, Status::NotRun, "not run: gone"),
            record("slice::f::d", None, Status::Passed, ""),
        ];
        let xml = junit("numpy", &Facts::default(), &records, &[]);
        assert!(xml.contains("errors=\"1\""), "{xml}");
        assert!(xml.contains("<error message=\"not run: gone\"/>"), "{xml}");
        assert!(json("numpy", &Context::default(), &records, &[]).contains("\"not_run\": 1"));
        assert!(table(&records).contains("1/1/0/0"), "{}", table(&records));
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
        let problems = ["nothing passed".to_owned()];
        let file = Scratch::new(
            "round-trip",
            &json("numpy", &Context::default(), &records, &problems),
        );
        let report = read(&file.0).unwrap();
        assert_eq!(report.backend, "numpy");
        assert_eq!(report.problems, problems);
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

    /// A run description this runner cannot read whole (a hand-made report's, another
    /// version's) leaves the report readable, without it.
    #[test]
    fn a_report_with_a_partial_run_description_reads_without_it() {
        let partial = Scratch::new(
            "partial-run",
            r#"{"backend": "b", "trials": [], "run": {"runner": "0.1.0", "selected": 3}}"#,
        );
        let report = read(&partial.0).unwrap();
        assert_eq!((report.backend.as_str(), report.run), ("b", None));
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
            &json(
                "b",
                &Context::default(),
                &[records[0].clone(), records[0].clone()],
                &[],
            ),
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
