//! `runner export --wpt REPORT --out FILE`: a JSON report (`--report-json`) in the form of a
//! web-platform-tests run (`wptreport`, what `wpt run --log-wptreport` writes and wpt.fyi's
//! results receiver takes), so that tools and dashboards made for wpt results can read it.
//!
//! ```json
//! {"run_info": {"product": "onnxruntime", "browser_version": "1.32.0",
//!               "product_version": "1.32.0", "os": "linux", "processor": "x86_64",
//!               "revision": "<the suite's git revision>", "opspec_backend": "onnxruntime-1.32.0"},
//!  "results": [{"test": "/opspec/slice/errors/negative_size/int8", "status": "FAIL",
//!               "expected": "PASS", "message": "failed: ...", "duration": 3,
//!               "subtests": []}]}
//! ```
//!
//! The product and its version are the `engine` and `version` facts of the run (the hello's
//! `engine`), the backend's name when the hello gave no engine. Each trial is one test, its
//! path `/opspec/` then its name with `::` as `/` (a `/` of the name as `%2F`), so a dashboard
//! shows the suite's tree of ops and groups. `duration` is in milliseconds. A status the wpt
//! statuses lack is mapped as `wpt_status` says; the message of a trial that did not pass
//! starts with its status in the JSON report (`known_failure: ...`). wptreport writes
//! `expected` only when the status is not the expected one: here, a trial that fails the run.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::judge::record::{Record, Report};
use crate::judge::status::Status;
use crate::reports::report::read;

/// The wpt status of a trial's status, and the status it was expected to have when it is not
/// that one:
///
/// | opspec | wpt | expected |
/// |---|---|---|
/// | passed | PASS | |
/// | implementation_defined | PASS | |
/// | failed | FAIL | PASS |
/// | known_failure | FAIL | |
/// | unsupported | PRECONDITION_FAILED | |
/// | shape_checked | PRECONDITION_FAILED | |
/// | rejected_unclassified | PRECONDITION_FAILED | |
/// | excluded | SKIP | |
/// | not_run | ERROR | PASS |
///
/// A known failure is a FAIL that was expected (the expectations file said so); an accepted
/// implementation-defined difference is a pass of the run. PRECONDITION_FAILED is wpt's status
/// for an optional feature the implementation lacks: the engine does not support the case, or
/// the run checked no values (a build-only engine; a rejection without an error kind), so the
/// trial is neither pass nor fail. An excluded trial was never sent (its op, dtype, attribute
/// or target is not in the engine's hello): SKIP. A trial not run because the backend was given
/// up on or the run stopped is an ERROR, as a harness error is in wpt.
pub(crate) fn wpt_status(status: Status) -> (&'static str, Option<&'static str>) {
    let row = status.row();
    (row.wpt, row.fails.then_some("PASS"))
}

/// A trial's wpt test path: `/opspec/` then its name, `::` as `/`.
pub(crate) fn test_path(name: &str) -> String {
    format!(
        "/opspec/{}",
        name.split("::")
            .map(|part| part.replace('%', "%25").replace('/', "%2F"))
            .collect::<Vec<_>>()
            .join("/")
    )
}

fn result(record: &Record) -> Value {
    let (status, expected) = wpt_status(record.status());
    let reason = record.reason();
    let message = match record.status() {
        Status::Passed => None,
        _ if reason.is_empty() => Some(record.status().name().to_owned()),
        _ => Some(format!("{}: {reason}", record.status().name())),
    };
    let milliseconds = (record.seconds * 1000.0).round() as u64;
    let mut result = json!({
        "test": test_path(&record.name),
        "status": status,
        "message": message,
        "duration": milliseconds,
        "subtests": [],
    });
    if let Some(expected) = expected {
        result["expected"] = json!(expected);
    }
    result
}

/// The report as a wptreport, for the suite at `revision`.
pub(crate) fn export(report: &Report, revision: &str) -> Value {
    let facts = &report.context.facts;
    let product = facts
        .engine
        .clone()
        .unwrap_or_else(|| report.backend.clone());
    let mut run_info = json!({
        "product": product,
        "browser_version": facts.version,
        "product_version": facts.version,
        "revision": revision,
        "opspec_backend": report.backend,
    });
    for (key, value) in [("os", &facts.os), ("processor", &facts.arch)] {
        if let Some(value) = value {
            run_info[key] = json!(value);
        }
    }
    json!({
        "run_info": run_info,
        "results": report.trials.iter().map(result).collect::<Vec<_>>(),
    })
}

/// The git revision of the work tree in `dir` (the folder the runner is started in when
/// `None`): its commit, then `-dirty` when a tracked file differs from it, as `git describe
/// --dirty` marks it (files git does not track do not count).
pub(crate) fn git_revision(dir: Option<&Path>) -> Option<String> {
    let git = |args: &[&str]| {
        let mut command = std::process::Command::new("git");
        if let Some(dir) = dir {
            command.arg("-C").arg(dir);
        }
        let output = command.args(args).output().ok()?;
        let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
        output.status.success().then_some(text)
    };
    let revision = git(&["rev-parse", "HEAD"]).filter(|r| !r.is_empty())?;
    // `--exclude=*`: no tag names the commit, so the full hash is printed, with `-dirty`.
    let described = git(&[
        "describe",
        "--always",
        "--dirty",
        "--abbrev=40",
        "--exclude=*",
    ]);
    let dirty = described.is_some_and(|d| d.ends_with("-dirty"));
    Some(match dirty {
        true => format!("{revision}-dirty"),
        false => revision,
    })
}

/// `runner export --wpt REPORT --out FILE [--revision REV]`; exit code 2 when the report
/// cannot be read, the revision is unknown or the file cannot be written.
pub fn main(report: &Path, out: &Path, revision: Option<&str>) -> ExitCode {
    let inputs = crate::reports::output::Inputs {
        files: vec![("--wpt", report)],
        folders: Vec::new(),
    };
    if let Err(e) = crate::reports::output::check_outputs(&[("--out", out)], &inputs) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let report = match read(report) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(revision) = revision.map(str::to_owned).or_else(|| git_revision(None)) else {
        eprintln!("error: not in a git work tree: give the suite's revision with --revision");
        return ExitCode::from(2);
    };
    let text = serde_json::to_string_pretty(&export(&report, &revision)).expect("json") + "\n";
    if let Err(e) = crate::reports::output::write_replacing(out, text) {
        eprintln!("error: cannot write {}: {e}", out.display());
        return ExitCode::from(2);
    }
    println!(
        "wrote {} ({} results, revision {revision})",
        out.display(),
        report.trials.len()
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::judge::expectations::EntryLine as Known;

    fn record(name: &str, status: Status) -> Record {
        let mut r = Record::bare(name, status);
        r.message = if status == Status::Passed {
            String::new()
        } else {
            format!("case:   {name}\nwhy {}", status.name())
        };
        r.seconds = 0.0042;
        r.known = (status == Status::KnownFailure).then(|| Known {
            selector: "slice::*".into(),
            clause: "slice.size.negative".into(),
            class: "semantics".into(),
            reason: "the engine counts from the end".into(),
            line: 3,
            condition: None,
        });
        r
    }

    #[test]
    fn a_report_becomes_a_wptreport() {
        let mut report = Report {
            path: PathBuf::from("r.json"),
            backend: "onnxruntime-1.32.0".into(),
            problems: Vec::new(),
            context: Default::default(),
            trials: Status::ALL
                .iter()
                .map(|&s| record(&format!("slice::g::{}::a/b", s.name()), s))
                .collect(),
            run: None,
        };
        report.context.facts.engine = Some("onnxruntime".into());
        report.context.facts.version = Some("1.32.0".into());
        report.context.facts.os = Some("linux".into());
        report.context.facts.arch = Some("x86_64".into());
        let wpt = export(&report, "abc123");
        assert_eq!(
            wpt["run_info"],
            json!({
                "product": "onnxruntime",
                "browser_version": "1.32.0",
                "product_version": "1.32.0",
                "os": "linux",
                "processor": "x86_64",
                "revision": "abc123",
                "opspec_backend": "onnxruntime-1.32.0",
            })
        );
        let results = wpt["results"].as_array().unwrap();
        assert_eq!(results.len(), Status::ALL.len());
        // Each status as documented, the expected status only where the trial fails the run.
        let mapped: Vec<(&str, &str, Option<&str>)> = results
            .iter()
            .zip(Status::ALL)
            .map(|(r, s)| {
                (
                    s.name(),
                    r["status"].as_str().unwrap(),
                    r.get("expected").map(|e| e.as_str().unwrap()),
                )
            })
            .collect();
        let expected: Vec<(&str, &str, Option<&str>)> = vec![
            ("passed", "PASS", None),
            ("failed", "FAIL", Some("PASS")),
            ("known_failure", "FAIL", None),
            ("unsupported", "PRECONDITION_FAILED", None),
            ("implementation_defined", "PASS", None),
            ("excluded", "SKIP", None),
            ("not_run", "ERROR", Some("PASS")),
            ("shape_checked", "PRECONDITION_FAILED", None),
            ("rejected_unclassified", "PRECONDITION_FAILED", None),
        ];
        let mut sorted = mapped.clone();
        sorted.sort();
        let mut wanted = expected.clone();
        wanted.sort();
        assert_eq!(sorted, wanted);
        let passed = &results[Status::ALL
            .iter()
            .position(|s| *s == Status::Passed)
            .unwrap()];
        assert_eq!(
            *passed,
            json!({"test": "/opspec/slice/g/passed/a%2Fb", "status": "PASS", "message": null,
                   "duration": 4, "subtests": []})
        );
        let known = &results[Status::ALL
            .iter()
            .position(|s| *s == Status::KnownFailure)
            .unwrap()];
        assert_eq!(
            known["message"],
            "known_failure: the engine counts from the end"
        );
        let failed = &results[Status::ALL
            .iter()
            .position(|s| *s == Status::Failed)
            .unwrap()];
        assert_eq!(failed["message"], "failed: why failed");
    }

    #[test]
    fn without_engine_facts_the_backend_is_the_product() {
        let report = Report {
            path: PathBuf::from("r.json"),
            backend: "opspec-reference".into(),
            problems: Vec::new(),
            context: Default::default(),
            trials: vec![record("shuffle::a", Status::Passed)],
            run: None,
        };
        let wpt = export(&report, "r");
        assert_eq!(wpt["run_info"]["product"], "opspec-reference");
        assert_eq!(wpt["run_info"]["browser_version"], Value::Null);
        assert!(wpt["run_info"].get("os").is_none());
        assert_eq!(wpt["results"][0]["test"], "/opspec/shuffle/a");
    }

    #[test]
    fn every_status_is_mapped_to_a_wpt_test_status() {
        // The statuses wptreport allows for a test (not a subtest).
        let allowed = [
            "PASS",
            "FAIL",
            "OK",
            "ERROR",
            "TIMEOUT",
            "CRASH",
            "ASSERT",
            "PRECONDITION_FAILED",
            "SKIP",
        ];
        for status in Status::ALL {
            let (wpt, expected) = wpt_status(status);
            assert!(allowed.contains(&wpt), "{status:?}");
            assert_eq!(expected.is_some(), status.fails(), "{status:?}");
        }
    }
}
