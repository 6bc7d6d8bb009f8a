//! Replays that reproduce: a backend whose behaviour depends on an environment variable names
//! it in its hello (`"env": ["BUG_PAD"]`); the run records its value among the facts, which
//! known-failure conditions test (`env.BUG_PAD == 1`), and every replay command it prints sets
//! it, so that the replay, run as printed from another shell, fails again.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TRIAL: &str = "slice::fill::fill_default_zero::float32";

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The faulty backend that lies on [`TRIAL`] when `BUG_PAD` is 1.
fn backend() -> String {
    format!("{} --env-lie BUG_PAD@{TRIAL}", fixtures::faulty_backend())
}

/// A run of [`TRIAL`] alone with `BUG_PAD` as given (`None`: unset) and `args`; its output and
/// JSON report.
fn run(dir: &Path, bug_pad: Option<&str>, args: &[&str]) -> (Output, serde_json::Value) {
    let report = dir.join("report.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    command
        .current_dir(repository())
        .env_remove("BUG_PAD")
        .args(["--backend", &backend(), "--backend-log"])
        .arg(dir.join("log"))
        .arg("--report-json")
        .arg(&report)
        .args(args)
        .args(["--exact", TRIAL]);
    if let Some(value) = bug_pad {
        command.env("BUG_PAD", value);
    }
    let output = command.output().unwrap();
    let json = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (output, json)
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_replay_printed_by_a_failing_run_fails_again() {
    let dir = tempfile::Builder::new()
        .prefix("opspec-replays-")
        .tempdir()
        .unwrap();
    let (output, report) = run(dir.path(), Some("1"), &[]);
    assert_eq!(output.status.code(), Some(101), "{}", text(&output));
    assert_eq!(report["facts"]["env"], serde_json::json!({"BUG_PAD": "1"}));
    let trial = &report["trials"][0];
    assert_eq!(trial["status"], "failed", "{trial}");
    let replay = trial["replay"].as_str().unwrap();
    assert!(replay.starts_with("BUG_PAD=1 "), "{replay}");
    assert!(
        text(&output).contains(&format!("replay: {replay}")),
        "{}",
        text(&output)
    );
    // Run as printed, from a shell that has no BUG_PAD.
    let replayed = Command::new("sh")
        .current_dir(repository())
        .env_remove("BUG_PAD")
        .args([
            "-c",
            &format!(
                "{replay} --backend-log {}",
                dir.path().join("replay.log").display()
            ),
        ])
        .output()
        .unwrap();
    assert_eq!(replayed.status.code(), Some(1), "{}", text(&replayed));
    assert!(
        text(&replayed).contains("verdict: failed"),
        "{}",
        text(&replayed)
    );

    // Unset in the run: the trial passes, and a replay unsets it too.
    let (output, report) = run(dir.path(), None, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(report["facts"]["env"], serde_json::json!({"BUG_PAD": null}));
    let replay = report["trials"][0]["replay"].as_str().unwrap();
    assert!(replay.starts_with("env -u BUG_PAD "), "{replay}");
}

#[test]
fn a_known_failure_holds_where_its_condition_on_the_environment_does() {
    let dir = tempfile::Builder::new()
        .prefix("opspec-replays-")
        .tempdir()
        .unwrap();
    let expectations = dir.path().join("known-failures.txt");
    std::fs::write(
        &expectations,
        format!(
            "{TRIAL} | slice.fill.default-zero | defect | pads with 1e-45 | if env.BUG_PAD == 1\n"
        ),
    )
    .unwrap();
    let file = expectations.to_str().unwrap();
    let (output, report) = run(dir.path(), Some("1"), &["--expectations", file]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_eq!(report["trials"][0]["status"], "known_failure");
    // Unset, the entry covers nothing (and is not stale); set to another value, the same.
    for bug_pad in [None, Some("0")] {
        let (output, report) = run(dir.path(), bug_pad, &["--expectations", file]);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
        assert_eq!(report["trials"][0]["status"], "passed");
        let entry = &report["expectation_entries"][0];
        assert_eq!(entry["held"], false, "{entry}");
        // Unset, BUG_PAD is still known: the hello names it.
        assert!(entry.get("unknown_facts").is_none(), "{entry}");
    }
}
