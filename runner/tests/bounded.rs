//! Bounded input and output at the command line: options a run cannot honour and outputs that
//! would overwrite inputs are usage errors before anything runs (exit 2, a message naming
//! them, no panic), and the inputs are left as they were.

use std::path::Path;
use std::process::{Command, Output};

fn clean(mut command: Command) -> Command {
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("OPSPEC_") || name == "CI" {
            command.env_remove(name);
        }
    }
    command
}

fn runner() -> Command {
    clean(Command::new(env!("CARGO_BIN_EXE_runner")))
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// A usage error: exit code 2, a message naming `needle`, and no panic.
fn assert_usage_error(output: &Output, needle: &str) {
    let text = text(output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    assert!(!text.contains("panicked"), "{text}");
}

const CASE: &str = r#"
cases:
  - name: kept
    source: "seed 004, example 'Slice'"
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {dtype: float32, shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {dtype: float32, shape: [2, 2], data: [[0, 1], [3, 4]]}
"#;

fn specs(dir: &Path) -> std::path::PathBuf {
    let specs = dir.join("specs");
    std::fs::create_dir_all(specs.join("slice")).unwrap();
    std::fs::write(specs.join("slice/mine.yaml"), CASE).unwrap();
    specs
}

#[test]
fn a_report_onto_the_known_failures_file_is_refused_and_the_file_kept() {
    let scratch = tempfile::tempdir().unwrap();
    let specs = specs(scratch.path());
    let known = scratch.path().join("k.txt");
    std::fs::write(&known, "# no known failures\n").unwrap();
    let output = runner()
        .arg("--specs")
        .arg(&specs)
        .arg("--expectations")
        .arg(&known)
        .arg("--report-json")
        .arg(&known)
        .output()
        .unwrap();
    assert_usage_error(&output, "--expectations");
    assert_eq!(
        std::fs::read_to_string(&known).unwrap(),
        "# no known failures\n"
    );
}

#[test]
fn a_report_onto_a_spec_file_is_refused_and_the_spec_kept() {
    let scratch = tempfile::tempdir().unwrap();
    let specs = specs(scratch.path());
    let spec = specs.join("slice/mine.yaml");
    for flag in ["--report-json", "--junit", "--dump-requests", "--logfile"] {
        let output = runner()
            .arg("--specs")
            .arg(&specs)
            .arg(flag)
            .arg(&spec)
            .output()
            .unwrap();
        assert_usage_error(&output, flag);
        assert_eq!(std::fs::read_to_string(&spec).unwrap(), CASE);
    }
}

#[test]
fn a_report_is_written_whole_and_leaves_no_temporary() {
    let scratch = tempfile::tempdir().unwrap();
    let specs = specs(scratch.path());
    let reports = scratch.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let report = reports.join("r.json");
    let output = runner()
        .arg("--specs")
        .arg(&specs)
        .arg("--report-json")
        .arg(&report)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let written = std::fs::read_to_string(&report).unwrap();
    assert!(written.contains("slice::mine::kept"), "{written}");
    let names: Vec<_> = std::fs::read_dir(&reports)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["r.json"]);

    // `report --html` onto its only input is refused; the input stays.
    let output = runner()
        .arg("report")
        .arg(&report)
        .arg(&report)
        .arg("--html")
        .arg(&report)
        .output()
        .unwrap();
    assert_usage_error(&output, "--html");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), written);
}

#[test]
fn test_threads_0_and_unusable_logfiles_are_usage_errors_not_hangs_or_panics() {
    let scratch = tempfile::tempdir().unwrap();
    let specs = specs(scratch.path());
    let run = |args: &[&str]| {
        runner()
            .arg("--specs")
            .arg(&specs)
            .args(args)
            .output()
            .unwrap()
    };
    assert_usage_error(&run(&["--test-threads", "0"]), "--test-threads 0");
    assert_usage_error(&run(&["--logfile", ""]), "--logfile");
    let missing = scratch.path().join("no/such/folder/run.log");
    assert_usage_error(
        &run(&["--logfile", missing.to_str().unwrap()]),
        "does not exist",
    );
}

#[test]
fn an_element_budget_no_memory_could_hold_is_refused_with_the_bound() {
    let output = runner()
        .args(["--max-elements", "9223372036854775807", "--list"])
        .output()
        .unwrap();
    assert_usage_error(
        &output,
        "the largest element budget this machine's memory allows",
    );
    let output = runner()
        .env("OPSPEC_MAX_ELEMENTS", "9223372036854775807")
        .arg("--list")
        .output()
        .unwrap();
    assert_usage_error(&output, "OPSPEC_MAX_ELEMENTS");
}

#[test]
fn coverage_of_a_folder_without_spec_files_is_an_error() {
    let empty = tempfile::tempdir().unwrap();
    let output = runner()
        .arg("coverage")
        .arg("--specs")
        .arg(empty.path())
        .output()
        .unwrap();
    let text = text(&output);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("no spec file in"), "{text}");
}

#[test]
fn a_fuzz_campaign_of_1e19_seconds_is_refused_not_a_panic() {
    let output = clean(Command::new(env!("CARGO_BIN_EXE_opspec-fuzz")))
        .args(["--seconds", "1e19"])
        .output()
        .unwrap();
    let text = text(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("a week"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
}

#[test]
fn a_skip_that_leaves_nothing_says_so_and_an_unknown_serve_target_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let specs = specs(scratch.path());
    let output = runner()
        .arg("--specs")
        .arg(&specs)
        .args(["--skip", "slice"])
        .output()
        .unwrap();
    assert_usage_error(&output, "--skip filters");
    assert!(
        !text(&output).contains("spec folders empty"),
        "{}",
        text(&output)
    );
    let output = runner()
        .args(["--serve", "--target", "NaN"])
        .output()
        .unwrap();
    let text = text(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("unknown target"), "{text}");
}
