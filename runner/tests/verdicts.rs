//! What a run counts as passed, end to end: a build-only backend's `built` answers are
//! `shape_checked` (never passed) and refused from a backend that did not declare them, a
//! rejection without an error kind is `rejected_unclassified` (never passed; a failure of the
//! run under `--require-error-kinds`), and a known-failures entry must cite a clause of the
//! trials it matches (docs/protocol.md).

mod fixtures;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use opspec::tensor::Limits;
use opspec::Op;
use opspec_spec::{load_dirs, Case, Expectation};
use serde_json::Value;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The runner in the repository, with no `OPSPEC_*` variable or `CI` of the calling shell.
fn runner(scratch: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("OPSPEC_") || name == "CI" {
            command.env_remove(name);
        }
    }
    command
        .current_dir(repository())
        .arg("--backend-log")
        .arg(scratch.join("backend.log"));
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// Runs the slice trials of the repository's spec files (no sweeps) against the faulty backend with `flags`, with a JSON
/// report; gives the output and the report's trials.
fn run_slices(scratch: &Path, flags: &str, extra: &[&str]) -> (Output, Vec<Value>) {
    let report = scratch.join("report.json");
    let output = runner(scratch)
        .args(["--specs", "specs", "--report-json"])
        .arg(&report)
        .args([
            "--backend",
            &format!("{} {flags}", fixtures::faulty_backend()),
        ])
        .args(extra)
        .arg("slice::")
        .output()
        .unwrap();
    let trials = std::fs::read_to_string(&report)
        .ok()
        .and_then(|json| serde_json::from_str::<Value>(&json).ok())
        .map(|report| report["trials"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    (output, trials)
}

fn status(trial: &Value) -> &str {
    trial["status"].as_str().unwrap_or_default()
}

#[test]
fn a_built_answer_from_a_backend_that_did_not_declare_it_fails_the_case() {
    let scratch = tempfile::tempdir().unwrap();
    let (output, trials) = run_slices(scratch.path(), "--built", &[]);
    // 101: a trial failed (libtest's code).
    assert_eq!(output.status.code(), Some(101), "{}", text(&output));
    let failed: Vec<&Value> = trials.iter().filter(|t| status(t) == "failed").collect();
    assert!(!failed.is_empty(), "{}", text(&output));
    assert!(
        failed.iter().any(|t| t["message"]
            .as_str()
            .unwrap_or_default()
            .contains("but its hello does not declare `build_only`")),
        "{failed:#?}"
    );
    // No `built` answer was taken: every case that expects outputs failed.
    assert!(trials.iter().all(|t| status(t) != "shape_checked"));
    assert!(failed.len() > 100, "{} failed", failed.len());
}

const BUILD_ONLY_HELLO: &str = r#"{"type":"hello","protocol":1,"name":"builder","ops":["shuffle","slice","as_strided","scale","reformat"],"build_only":true}"#;

#[test]
fn shape_checked_trials_are_never_counted_as_passed() {
    let scratch = tempfile::tempdir().unwrap();
    let flags = format!("--built --hello '{BUILD_ONLY_HELLO}'");
    let (output, trials) = run_slices(scratch.path(), &flags, &[]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    let shape_checked = trials
        .iter()
        .filter(|t| status(t) == "shape_checked")
        .count();
    let passed: Vec<&Value> = trials.iter().filter(|t| status(t) == "passed").collect();
    assert!(shape_checked > 100, "{shape_checked} shape-checked\n{all}");
    // What passed are the cases that expect an error, rejected with the expected kind: the
    // only trials a build-only backend judges in full.
    assert!(!passed.is_empty());
    let expecting_an_error = slice_trials_expecting_an_error();
    for trial in &passed {
        let name = trial["name"].as_str().unwrap();
        assert!(
            expecting_an_error.contains(name),
            "{name} expects outputs, yet passed on a build-only backend"
        );
    }
    assert!(
        all.contains(&format!("{shape_checked} shape-checked (built, not run)")),
        "the summary counts them apart:\n{all}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(scratch.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(json["shape_checked"], shape_checked);
    assert_eq!(json["passed"], passed.len());
}

/// The names of the slice trials of the repository's spec files whose case expects an error,
/// read from the cases themselves.
fn slice_trials_expecting_an_error() -> BTreeSet<String> {
    let loaded = load_dirs(&[repository().join("specs")], None, Limits::DEFAULT);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    (loaded.cases.iter())
        .filter(|case| case.op == Op::Slice && matches!(case.expect, Expectation::Error { .. }))
        .map(Case::trial_name)
        .collect()
}

#[test]
fn a_rejection_without_a_kind_is_never_counted_as_passed() {
    let scratch = tempfile::tempdir().unwrap();
    let (output, trials) = run_slices(scratch.path(), "--kindless", &[]);
    let all = text(&output);
    // Counted apart, and by default no failure of the run.
    assert_eq!(output.status.code(), Some(0), "{all}");
    let unclassified: Vec<&Value> = trials
        .iter()
        .filter(|t| status(t) == "rejected_unclassified")
        .collect();
    assert!(unclassified.len() > 20, "{all}");
    for trial in &unclassified {
        let message = trial["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("rejected without an error kind (expected `"),
            "{message}"
        );
    }
    // Every other trial expects outputs and passed: no error case passed.
    let expecting_an_error = slice_trials_expecting_an_error();
    assert!(expecting_an_error.len() > 20, "{expecting_an_error:?}");
    for trial in trials.iter().filter(|t| status(t) == "passed") {
        let name = trial["name"].as_str().unwrap();
        assert!(
            !expecting_an_error.contains(name),
            "{name} expects an error and passed on a kindless rejection"
        );
    }
    assert!(
        all.contains(&format!(
            "{} rejected without an error kind",
            unclassified.len()
        )),
        "{all}"
    );

    // With --require-error-kinds the same run fails, saying why.
    let (output, _) = run_slices(scratch.path(), "--kindless", &["--require-error-kinds"]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(1), "{all}");
    assert!(
        all.contains("were rejected without an error kind, so maybe for another rule, and --require-error-kinds"),
        "{all}"
    );
}

#[test]
fn a_known_failure_entry_whose_trials_do_not_cite_its_clause_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let expectations = scratch.path().join("known.txt");
    // Every trial of specs/slice/wrap.yaml under one clause that most of them do not test.
    std::fs::write(
        &expectations,
        "# a wrong clause\nslice::wrap::* | slice.reflect.mirror | semantics | mirrored\n",
    )
    .unwrap();
    let output = runner(scratch.path())
        .args(["--specs", "specs", "--expectations"])
        .arg(&expectations)
        .arg("slice::")
        .output()
        .unwrap();
    let all = text(&output);
    assert_eq!(output.status.code(), Some(2), "{all}");
    assert!(
        all.contains(&format!(
            "{}: line 2: `slice::wrap::*` matches trial slice::wrap::",
            expectations.display()
        )),
        "{all}"
    );
    assert!(
        all.contains("whose case does not cite clause `slice.reflect.mirror`"),
        "{all}"
    );
    // `--list` checks the file the same way, starting no backend: a quick check of an
    // engine's known failures (`python3 scripts/engines/engines.py check NAME`).
    let output = runner(scratch.path())
        .args(["--specs", "specs", "--list", "--expectations"])
        .arg(&expectations)
        .output()
        .unwrap();
    let listed = text(&output);
    assert_eq!(output.status.code(), Some(2), "{listed}");
    assert!(
        listed.contains("whose case does not cite clause `slice.reflect.mirror`"),
        "{listed}"
    );
    std::fs::write(
        &expectations,
        "clause in slice::wrap::* | slice.wrap.modulo | semantics | wraps\n",
    )
    .unwrap();
    let output = runner(scratch.path())
        .args(["--specs", "specs", "--list", "--expectations"])
        .arg(&expectations)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
}

#[test]
fn trials_the_hello_excludes_are_counted_not_printed() {
    let scratch = tempfile::tempdir().unwrap();
    let hello = r#"{"type":"hello","protocol":1,"name":"slices","ops":["slice"]}"#;
    let backend = format!("{} --hello '{hello}'", fixtures::faulty_backend());
    let report = scratch.path().join("report.json");
    let run = |extra: &[&str]| {
        runner(scratch.path())
            .args(["--specs", "specs", "--backend", &backend, "--report-json"])
            .arg(&report)
            .args(extra)
            .output()
            .unwrap()
    };
    let output = run(&[]);
    let all = text(&output);
    assert!(output.status.success(), "{all}");
    let printed = |all: &str| {
        (all.lines()).any(|l| l.starts_with("test [case] ") && l.contains(" as_strided::"))
    };
    assert!(!printed(&all), "excluded trials printed:\n{all}");
    assert!(
        !all.contains("\nas_strided "),
        "a table row for an undeclared op:\n{all}"
    );
    let excluded = |all: &str| {
        let line = all.lines().find(|l| l.starts_with("excluded: ")).unwrap();
        line.to_owned()
    };
    let line = excluded(&all);
    assert!(line.contains(" by op as_strided"), "{line}");
    // The JSON report still has every trial, excluded ones with their declaration.
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let trials = json["trials"].as_array().unwrap();
    let as_strided: Vec<&Value> = trials.iter().filter(|t| t["op"] == "as_strided").collect();
    assert!(!as_strided.is_empty());
    assert!(as_strided
        .iter()
        .all(|t| t["excluded_by"] == "op as_strided"));

    // --list-excluded prints each as an ignored trial, with the same counts.
    let output = run(&["--list-excluded"]);
    let listed = text(&output);
    assert!(output.status.success(), "{listed}");
    assert!(printed(&listed), "{listed}");
    assert_eq!(excluded(&listed), line);
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(again["trials"].as_array().unwrap().len(), trials.len());
}

#[test]
fn sweep_trials_a_dtype_excludes_are_counted_not_printed() {
    let scratch = tempfile::tempdir().unwrap();
    let hello = r#"{"type":"hello","protocol":1,"name":"slices","ops":["slice"],"dtypes":{"slice":["float32","float16"]}}"#;
    let backend = format!("{} --hello '{hello}'", fixtures::faulty_backend());
    let report = scratch.path().join("report.json");
    let output = runner(scratch.path())
        .args([
            "--specs",
            "specs",
            "--sweeps",
            "sweeps",
            "--backend",
            &backend,
        ])
        .arg("--report-json")
        .arg(&report)
        .arg("slice::sweep::modes::")
        .output()
        .unwrap();
    let all = text(&output);
    assert!(output.status.success(), "{all}");
    assert!(
        !all.lines()
            .any(|l| l.starts_with("test ") && l.contains("... ignored")),
        "excluded trials printed:\n{all}"
    );
    let line = all.lines().find(|l| l.starts_with("excluded: ")).unwrap();
    assert!(line.contains(" by slice dtype int8"), "{line}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let trials = json["trials"].as_array().unwrap();
    let int8: Vec<&Value> = trials
        .iter()
        .filter(|t| t["name"].as_str().unwrap().ends_with("::int8"))
        .collect();
    assert!(int8.len() > 100, "{} int8 trials", int8.len());
    // An int8 case expecting an error is still sent (docs/protocol.md); the others are excluded.
    assert!(int8
        .iter()
        .all(|t| t["status"] == "excluded" || t["status"] == "passed"));
    assert!(int8
        .iter()
        .filter(|t| t["status"] == "excluded")
        .all(|t| t["excluded_by"] == "slice dtype int8"));
    assert!(int8.iter().any(|t| t["status"] == "passed"));
}

#[test]
fn failures_name_their_clauses_and_the_summary_counts_them_by_clause() {
    let scratch = tempfile::tempdir().unwrap();
    let trial = "slice::reflect::reflect_2d::float16";
    let (output, trials) = run_slices(scratch.path(), &format!("--flip-sign {trial}"), &[]);
    let all = text(&output);
    assert_eq!(output.status.code(), Some(101), "{all}");
    let clauses: Vec<&str> = trials.iter().find(|t| t["name"] == trial).unwrap()["clauses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(clauses.contains(&"slice.reflect.mirror"), "{clauses:?}");
    assert!(
        all.contains(&format!("\nclauses: {}\n", clauses.join(", "))),
        "{all}"
    );
    // Each once, so in the order of the catalogue files.
    let (catalogue, _) = opspec_spec::clauses::Catalogue::load(&[repository().join("specs")]);
    let mut ordered = clauses.clone();
    ordered.sort_by_key(|c| catalogue.position(c));
    let counted: Vec<String> = ordered.iter().map(|c| format!("{c} 1")).collect();
    assert!(
        all.contains(&format!("\n1 failing, by clause: {}\n", counted.join(", "))),
        "{all}"
    );
    // Its one wrong element is shown once.
    assert_eq!(all.matches("expected 5.0, got -5.0").count(), 1, "{all}");
}

#[test]
fn a_clause_id_no_catalogue_has_fails_its_case_naming_file_case_and_id() {
    let scratch = tempfile::tempdir().unwrap();
    let specs = scratch.path().join("specs");
    std::fs::create_dir_all(specs.join("slice")).unwrap();
    let file = specs.join("slice").join("mine.yaml");
    std::fs::write(
        &file,
        r#"
cases:
  - name: typo
    source: "seed 004, example 'Slice'"
    clauses: [slice.wrap.modulus]
    attrs: {start: [0], size: [2], stride: [1]}
    inputs:
      input: {dtype: float32, shape: [3], data: [0, 1, 2]}
    expected:
      output: {dtype: float32, shape: [2], data: [0, 1]}
"#,
    )
    .unwrap();
    let output = runner(scratch.path())
        .arg("--specs")
        .arg(&specs)
        .output()
        .unwrap();
    let all = text(&output);
    assert_eq!(output.status.code(), Some(101), "{all}");
    assert!(
        all.contains(&format!(
            "{}: case `typo`: unknown clause id `slice.wrap.modulus` (no clause catalogue has it) (did you mean `slice.wrap.modulo`?)",
            file.display()
        )),
        "{all}"
    );
    assert!(
        all.lines().any(|l| l.starts_with("test [spec-problem] ")
            && l.contains(" slice::mine::typo ")
            && l.ends_with("... FAILED")),
        "{all}"
    );
}
