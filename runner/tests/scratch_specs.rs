//! What a spec author sees: a wrong expected value and a malformed case, in a private spec
//! folder selected with `OPSPEC_SPECS`.

use std::path::Path;
use std::process::{Command, Output};

/// A scratch spec folder with an empty `slice/`, removed when dropped (also when the test fails).
fn scratch(name: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("opspec-scratch-{name}-"))
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(dir.path().join("slice")).unwrap();
    dir
}

fn run(specs: &Path, args: &[&str]) -> (Output, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_runner"))
        .env("OPSPEC_SPECS", specs)
        .env_remove("OPSPEC_BACKEND")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

const CASES: &str = r#"
cases:
  - name: wrong_expected_value
    source: "seed 004, example 'Slice', with one expected value changed"
    dtypes: [float32, int8]
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {shape: [2, 2], data: [[0, 1], [3, 5]]}
  - name: right_expected_value
    source: "seed 004, example 'Slice'"
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {dtype: float32, shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {dtype: float32, shape: [2, 2], data: [[0, 1], [3, 4]]}
"#;

#[test]
fn a_wrong_expected_value_fails_with_a_readable_report() {
    let scratch = scratch("wrong");
    let dir = scratch.path();
    std::fs::write(dir.join("slice").join("mine.yaml"), CASES).unwrap();
    let (output, text) = run(dir, &[]);
    assert!(!output.status.success(), "{text}");
    for needle in [
        "slice::mine::wrong_expected_value::float32",
        "source: seed 004, example 'Slice', with one expected value changed",
        "inputs: input: float32 [3, 3]",
        "1 of 4 elements differ (float32 [2, 2])",
        "at [1, 1]: expected 5.0, got 4.0",
        "at [1, 1]: expected 5, got 4",
        "1 passed; 2 failed",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    // A name filter with --exact runs just that trial.
    let (output, text) = run(dir, &["--exact", "slice::mine::right_expected_value"]);
    assert!(output.status.success(), "{text}");
    assert!(text.contains("1 passed; 0 failed"), "{text}");
}

#[test]
fn a_malformed_spec_names_file_case_and_field() {
    let scratch = scratch("malformed");
    let dir = scratch.path();
    let bad_value = CASES.replace(
        "[6, 7, 8]]}\n    expected:\n      output: {shape: [2, 2], data: [[0, 1], [3, 5]]}",
        "[6, 7, 800]]}\n    expected:\n      output: {shape: [2, 2], data: [[0, 1], [3, 4]]}",
    );
    std::fs::write(dir.join("slice").join("values.yaml"), bad_value).unwrap();
    let unknown_field = CASES.replace("stride: [1, 1]}", "strides: [1, 1]}");
    std::fs::write(dir.join("slice").join("fields.yaml"), unknown_field).unwrap();
    let (output, text) = run(dir, &[]);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("values.yaml: case `wrong_expected_value`: field `inputs.input.data[2][2]`: 800 is outside the range of int8 [-128, 127]"),
        "{text}"
    );
    assert!(
        text.contains("fields.yaml: case `wrong_expected_value`: field `attrs.strides`: unknown field `strides`"),
        "{text}"
    );
}

/// `runner replay` opens its run as the main run does (one harness): a case citing a clause id
/// no catalogue has fails in the run, and fails alike when replayed alone, instead of being sent
/// and passing.
#[test]
fn a_replayed_trial_is_judged_as_the_run_judges_it() {
    let scratch = scratch("replay");
    let dir = scratch.path();
    let typo = CASES.replace(
        "    source: \"seed 004, example 'Slice'\"\n",
        "    source: \"seed 004, example 'Slice'\"\n    clauses: [slice.wrap.modulus]\n",
    );
    std::fs::write(dir.join("slice").join("typo.yaml"), typo).unwrap();
    let trial = "slice::typo::right_expected_value";
    let message = "case `right_expected_value`: unknown clause id `slice.wrap.modulus`";
    let (output, text) = run(dir, &["--exact", trial]);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains(message), "{text}");
    let (output, text) = run(dir, &["replay", trial]);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("verdict: failed"), "{text}");
    assert!(text.contains(message), "{text}");
    // The runner sent nothing: the case is not run.
    assert!(!text.contains("request:"), "{text}");
}
