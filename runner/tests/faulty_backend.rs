//! The runner survives a backend that crashes on one case, hangs on another and lies on a
//! third: exactly those three fail, each with a clear reason, and every other case passes.

use std::path::PathBuf;
use std::process::Command;

/// `target/<profile>/examples/faulty_backend`, built by `cargo test` with the tests.
fn faulty_backend() -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    deps.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join("faulty_backend")
}

fn runner() -> Command {
    Command::new(env!("CARGO_BIN_EXE_runner"))
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("opspec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the suite through `backend` with extra `args`: whether the run succeeded, its stdout,
/// and its JSON report.
fn run_with_report(name: &str, backend: &str, args: &[&str]) -> (bool, String, serde_json::Value) {
    let dir = scratch(name);
    let report = dir.join("report.json");
    let run = runner()
        .args(["--backend", backend])
        .args(args)
        .arg("--report-json")
        .arg(&report)
        .arg("--backend-log")
        .arg(dir.join("backend.log"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let json = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    (run.status.success(), stdout, json)
}

/// Every trial name, as `runner --list` prints them.
fn trial_names() -> Vec<String> {
    let listing = runner().arg("--list").output().unwrap();
    String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_suffix(": test").map(str::to_owned))
        .collect()
}

#[test]
fn crash_hang_and_lie_fail_exactly_those_cases() {
    let names = trial_names();
    // One victim per op, each a case that expects outputs (so the lie is visible).
    let pick = |prefix: &str| {
        names
            .iter()
            .find(|n| n.starts_with(prefix) && n.contains("seed"))
            .unwrap_or_else(|| panic!("no seed case under {prefix}"))
            .clone()
    };
    let (crash, hang, lie) = (pick("shuffle::"), pick("slice::"), pick("as_strided::"));
    let command = format!(
        "{} --crash {crash} --hang {hang} --lie {lie}",
        faulty_backend().display()
    );
    let args = ["--timeout", "1", "--test-threads", "1"];
    let (success, stdout, json) = run_with_report("faulty", &command, &args);
    assert!(!success, "the run must fail:\n{stdout}");
    let failed: Vec<(&str, &str)> = json["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "failed")
        .map(|t| (t["name"].as_str().unwrap(), t["message"].as_str().unwrap()))
        .collect();
    let mut failed_names: Vec<&str> = failed.iter().map(|(n, _)| *n).collect();
    failed_names.sort();
    let mut expected = vec![crash.as_str(), hang.as_str(), lie.as_str()];
    expected.sort();
    assert_eq!(failed_names, expected, "{stdout}");
    let message = |name: &str| failed.iter().find(|(n, _)| *n == name).unwrap().1;
    assert!(message(&crash).contains("exited"), "{}", message(&crash));
    assert!(
        message(&hang).contains("did not answer within 1 s"),
        "{}",
        message(&hang)
    );
    assert!(
        message(&lie).contains("elements differ"),
        "{}",
        message(&lie)
    );
    assert_eq!(json["passed"].as_u64().unwrap() as usize, names.len() - 3);
}

#[test]
fn a_filter_that_selects_nothing_is_an_error() {
    let run = runner().arg("no_case_has_this_name").output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("selects no case"));
}

#[test]
fn a_dla_backend_skips_the_cases_restricted_on_dla() {
    let specs = opspec_runner::Config::from_env().unwrap().specs;
    let loaded = opspec::spec::load_dirs(&specs, None);
    let restricted: Vec<String> = loaded
        .cases
        .iter()
        .filter(|case| case.unsupported_on.contains_key("dla"))
        .map(|case| case.trial_name())
        .collect();
    assert!(!restricted.is_empty(), "no case is restricted on dla");
    let backend = format!("{} --serve --target dla", env!("CARGO_BIN_EXE_runner"));
    let (success, stdout, json) = run_with_report("dla", &backend, &[]);
    assert!(success, "{stdout}");
    let mut skipped: Vec<String> = json["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "unsupported")
        .inspect(|t| {
            assert!(t["message"]
                .as_str()
                .unwrap()
                .starts_with("restricted on dla: "))
        })
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    skipped.sort();
    let mut expected = restricted;
    expected.sort();
    assert_eq!(skipped, expected);
}

#[test]
fn expectations_excuse_known_failures_and_flag_stale_entries() {
    let names = trial_names();
    let lie = names
        .iter()
        .find(|n| n.starts_with("slice::seed"))
        .unwrap()
        .clone();
    let passing = names
        .iter()
        .find(|n| n.starts_with("shuffle::seed"))
        .unwrap()
        .clone();
    let dir = scratch("expect");
    let expectations = dir.join("faulty.expect");
    std::fs::write(
        &expectations,
        format!(
            "# known failures of the faulty backend\n{lie} | slice.data.bits-unchanged | defect | it flips a bit\n{passing} | shuffle.data.bits-unchanged | defect | wrongly listed\nno::such::case* | common.input.required | adapter | matches nothing\n"
        ),
    )
    .unwrap();
    let command = format!("{} --lie {lie}", faulty_backend().display());
    let (success, stdout, json) = run_with_report(
        "expect-run",
        &command,
        &["--expectations", expectations.to_str().unwrap()],
    );
    std::fs::remove_dir_all(dir).unwrap();
    assert!(!success, "stale entries must fail the run:\n{stdout}");
    let status = |name: &str| {
        let trial = json["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        (
            trial["status"].as_str().unwrap().to_owned(),
            trial["message"].as_str().unwrap().to_owned(),
        )
    };
    let (known, reason) = status(&lie);
    assert_eq!(known, "known_failure");
    assert!(
        reason.starts_with("known failure: it flips a bit"),
        "{reason}"
    );
    let (stale, message) = status(&passing);
    assert_eq!(stale, "failed");
    assert!(
        message.contains("stale expectation: this case now passes; remove line 3"),
        "{message}"
    );
    let (unmatched, message) = status("expectations::line_4");
    assert_eq!(unmatched, "failed");
    assert!(message.contains("matches no case"), "{message}");
    assert_eq!(json["failed"], 2, "{stdout}");
}

#[test]
fn a_backend_that_supports_no_case_is_an_error() {
    // A hello that lists no op: every case would be "unsupported", which is no green run.
    let backend = r#"read hello; echo '{"type":"hello","protocol":1,"name":"empty","ops":[]}'; cat >/dev/null"#;
    let run = runner().args(["--backend", backend]).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("backend empty supports none of the"),
        "{stderr}"
    );
}
