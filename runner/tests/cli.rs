//! The command lines of `runner`, `opspec-fuzz` and the `cargo test` harness: every flag in
//! `--help`, `--flag=value`, bad numbers refused with an error naming the flag or variable, and
//! relative paths resolved as README.md says.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The variables a test must not inherit from the shell that runs `cargo test`.
const VARIABLES: [&str; 15] = [
    "OPSPEC_SPECS",
    "OPSPEC_SWEEPS",
    "OPSPEC_GOLDEN",
    "OPSPEC_BLESS",
    "OPSPEC_BACKEND",
    "OPSPEC_TIMEOUT",
    "OPSPEC_EXPECTATIONS",
    "OPSPEC_REPORT_JSON",
    "OPSPEC_JUNIT",
    "OPSPEC_BACKEND_LOG",
    "OPSPEC_MAX_ELEMENTS",
    "OPSPEC_DUMP_REQUESTS",
    "OPSPEC_ALLOW_SKIPS",
    "OPSPEC_REQUIRE_ERROR_KINDS",
    "CI",
];

fn clean(mut command: Command) -> Command {
    for name in VARIABLES {
        command.env_remove(name);
    }
    command
}

fn runner() -> Command {
    clean(Command::new(env!("CARGO_BIN_EXE_runner")))
}

fn fuzzer() -> Command {
    clean(Command::new(env!("CARGO_BIN_EXE_opspec-fuzz")))
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// A scratch spec folder under `parent` holding one passing slice case, `slice::mine::kept`.
struct Scratch(PathBuf);

impl Scratch {
    fn new(parent: &Path, name: &str) -> Scratch {
        let dir = parent.join(format!("opspec-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("slice")).unwrap();
        std::fs::write(dir.join("slice").join("mine.yaml"), CASE).unwrap();
        Scratch(dir)
    }

    fn temp(name: &str) -> Scratch {
        Scratch::new(&std::env::temp_dir(), name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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

/// The trials a `--list` run printed.
fn listed(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        // The name after the trial's kind, `[case] slice::...`.
        .map(|line| {
            line.split_once("] ")
                .map_or(line, |(_, name)| name)
                .to_owned()
        })
        .collect()
}

/// A usage error: exit code 2, a message naming `needle`, and no panic.
fn assert_usage_error(output: &Output, needle: &str) {
    let text = text(output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    assert!(!text.contains("panicked"), "{text}");
}

#[test]
fn runner_help_shows_every_flag() {
    let output = runner().arg("--help").output().unwrap();
    let help = text(&output);
    assert!(output.status.success(), "{help}");
    for flag in [
        "--backend",
        "--specs",
        "--sweeps",
        "--golden",
        "--bless",
        "--allow-skips",
        "--timeout",
        "--hello-timeout",
        "--expectations",
        "--report-json",
        "--junit",
        "--backend-log",
        "--max-elements",
        "--dump-requests",
        "--fail-fast",
        "--require-error-kinds",
        "--serve",
        "--target",
        "coverage",
        "replay",
        // libtest's own
        "--exact",
        "--list",
        "--test-threads",
        "--skip",
    ] {
        assert!(help.contains(flag), "missing {flag} in:\n{help}");
    }
    let coverage = text(&runner().args(["coverage", "--help"]).output().unwrap());
    for flag in ["--specs", "--clauses"] {
        assert!(coverage.contains(flag), "missing {flag} in:\n{coverage}");
    }
}

#[test]
fn runner_version_names_its_version_and_the_suites_revision() {
    let output = runner()
        .arg("--version")
        .current_dir(repository())
        .output()
        .unwrap();
    let all = text(&output);
    assert!(output.status.success(), "{all}");
    let mut lines = all.lines();
    assert_eq!(
        lines.next(),
        Some(format!("runner {}", env!("CARGO_PKG_VERSION")).as_str())
    );
    let suite = lines.next().unwrap_or_default();
    assert!(suite.starts_with("suite "), "{all}");
    assert!(
        suite.ends_with(&format!("({})", repository().display())),
        "{all}"
    );
}

#[test]
fn runner_accepts_flag_equals_value() {
    let specs = Scratch::temp("equals");
    let output = runner()
        .arg(format!("--specs={}", specs.0.display()))
        .arg("--timeout=2.5")
        .arg("--list")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(listed(&output), ["slice::mine::kept"], "{}", text(&output));
    let output = runner()
        .arg("coverage")
        .arg(format!("--specs={}", specs.0.display()))
        .output()
        .unwrap();
    assert!(
        !text(&output).contains("unknown argument"),
        "{}",
        text(&output)
    );
}

#[test]
fn unknown_flags_are_named() {
    assert_usage_error(&runner().arg("--bogus").output().unwrap(), "--bogus");
    let output = fuzzer().arg("--bogus").output().unwrap();
    assert_usage_error(&output, "--bogus");
    assert!(
        !text(&output).contains("needs a value"),
        "{}",
        text(&output)
    );
}

#[test]
fn fuzzer_help_shows_every_flag_and_takes_flag_equals_value() {
    let output = fuzzer().arg("--help").output().unwrap();
    let help = text(&output);
    assert!(output.status.success(), "{help}");
    for flag in [
        "--backend",
        "--seed",
        "--cases",
        "--seconds",
        "--ops",
        "--out",
        "--max-failures",
        "--shrink-budget",
        "--timeout",
        "--strict-kinds",
        "--quiet",
    ] {
        assert!(help.contains(flag), "missing {flag} in:\n{help}");
    }
    let output = fuzzer()
        .args(["--cases=5", "--seed=3", "--ops=slice", "--quiet"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(text(&output).contains("5 cases"), "{}", text(&output));
}

#[test]
fn timeouts_that_are_not_a_usable_duration_are_refused() {
    for value in ["1e300", "inf", "-inf", "NaN", "0", "-1", "1e-12", "ten"] {
        let output = runner().args(["--timeout", value]).output().unwrap();
        assert_usage_error(&output, "--timeout");
        let output = runner()
            .env("OPSPEC_TIMEOUT", value)
            .arg("--list")
            .output()
            .unwrap();
        assert_usage_error(&output, "OPSPEC_TIMEOUT");
        let output = fuzzer()
            .args(["--cases", "1", "--quiet", "--timeout", value])
            .output()
            .unwrap();
        assert_usage_error(&output, "--timeout");
    }
}

#[test]
fn a_bad_element_budget_is_refused() {
    for value in ["abc", "1e9", "-5", "0", "99999999999999999999999"] {
        let output = runner()
            .env("OPSPEC_MAX_ELEMENTS", value)
            .arg("--list")
            .output()
            .unwrap();
        assert_usage_error(&output, "OPSPEC_MAX_ELEMENTS");
        let output = runner()
            .args(["--max-elements", value, "--list"])
            .output()
            .unwrap();
        assert_usage_error(&output, "--max-elements");
    }
}

#[test]
fn the_element_budget_reaches_the_reference() {
    // The case's input has 9 elements: over a budget of 8, within one of 9.
    let specs = Scratch::temp("budget");
    for (variable, flag, passes) in [
        (Some("8"), None, false),
        (None, Some("--max-elements=8"), false),
        (Some("8"), Some("--max-elements=9"), true),
    ] {
        let mut command = runner();
        command.arg("--specs").arg(&specs.0);
        if let Some(value) = variable {
            command.env("OPSPEC_MAX_ELEMENTS", value);
        }
        command.args(flag);
        let output = command.output().unwrap();
        assert_eq!(output.status.success(), passes, "{}", text(&output));
        if !passes {
            assert!(
                text(&output).contains("over the budget of 8"),
                "{}",
                text(&output)
            );
        }
    }
}

#[test]
fn specs_flag_and_variable_both_leave_out_the_repository_sweeps() {
    let specs = Scratch::temp("sweeps");
    let by_flag = runner()
        .arg("--specs")
        .arg(&specs.0)
        .arg("--list")
        .output()
        .unwrap();
    let by_variable = runner()
        .env("OPSPEC_SPECS", &specs.0)
        .arg("--list")
        .output()
        .unwrap();
    assert_eq!(
        listed(&by_flag),
        ["slice::mine::kept"],
        "{}",
        text(&by_flag)
    );
    assert_eq!(listed(&by_flag), listed(&by_variable));
    // With the repository's sweeps asked for, their trials come back.
    let with_sweeps = runner()
        .arg("--specs")
        .arg(&specs.0)
        .arg("--sweeps")
        .arg(repository().join("sweeps"))
        .arg("--list")
        .output()
        .unwrap();
    assert!(listed(&with_sweeps).len() > 1000, "{}", text(&with_sweeps));
}

#[test]
fn the_summary_names_the_folders_it_read() {
    let specs = Scratch::temp("summary");
    let output = runner().arg("--specs").arg(&specs.0).output().unwrap();
    let text = text(&output);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains(&format!("spec folders: {}", specs.0.display())),
        "{text}"
    );
    assert!(text.contains("sweep folders: none"), "{text}");
}

#[test]
fn an_empty_spec_folder_is_not_a_green_run() {
    let empty = tempfile::tempdir().unwrap();
    let output = runner().arg("--specs").arg(empty.path()).output().unwrap();
    assert!(!output.status.success(), "{}", text(&output));
}

/// The `cargo test` harness binary (`tests/conformance.rs`), built beside this test.
fn conformance_harness() -> PathBuf {
    let deps = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::read_dir(&deps)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with("conformance-") && path.extension().is_none()
        })
        .max_by_key(|path| path.metadata().and_then(|m| m.modified()).ok())
        .expect("cargo test builds tests/conformance.rs beside this test")
}

#[test]
fn the_harness_resolves_relative_paths_against_the_repository_root() {
    // `OPSPEC_SPECS=target/<folder> cargo test`, typed at the repository root: cargo starts the
    // harness in runner/, and the folder must still be found.
    let specs = Scratch::new(&repository().join("target"), "relative");
    let relative = specs.0.strip_prefix(repository()).unwrap();
    let output = clean(Command::new(conformance_harness()))
        .current_dir(repository().join("runner"))
        .env("OPSPEC_SPECS", relative)
        .arg("--list")
        .output()
        .unwrap();
    assert_eq!(listed(&output), ["slice::mine::kept"], "{}", text(&output));
    // The runner binary resolves them against the folder it is started from.
    let output = runner()
        .current_dir(repository().join("target"))
        .arg("--specs")
        .arg(specs.0.file_name().unwrap())
        .arg("--list")
        .output()
        .unwrap();
    assert_eq!(listed(&output), ["slice::mine::kept"], "{}", text(&output));
}

const WRONG: &str = r#"
cases:
  - name: wrong
    source: "seed 004, example 'Slice', with one expected value changed"
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {dtype: float32, shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {dtype: float32, shape: [2, 2], data: [[0, 1], [3, 5]]}
"#;

/// The reference served over the protocol, as a backend command.
fn served_reference() -> String {
    format!("{} --serve", env!("CARGO_BIN_EXE_runner"))
}

#[test]
fn the_request_dump_holds_each_request_as_sent() {
    let specs = Scratch::temp("dump");
    let dump = specs.0.join("out").join("requests.jsonl");
    let output = runner()
        .arg("--specs")
        .arg(&specs.0)
        .args(["--backend", &served_reference()])
        .env("OPSPEC_DUMP_REQUESTS", &dump)
        .arg("--backend-log")
        .arg(specs.0.join("backend.log"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dumped = std::fs::read_to_string(&dump).unwrap();
    let lines: Vec<serde_json::Value> = dumped
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{dumped}");
    assert_eq!(lines[0]["type"], "run");
    assert_eq!(lines[0]["id"], "slice::mine::kept");
    assert_eq!(lines[0]["op"], "slice");
    assert_eq!(lines[0]["inputs"][0]["shape"], serde_json::json!([3, 3]));
    // Fed to a backend after a hello, the dump is answered as in the run.
    let hello = r#"{"type":"hello","protocol":1}"#;
    let mut backend = Command::new(env!("CARGO_BIN_EXE_runner"))
        .arg("--serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = backend.stdin.take().unwrap();
        writeln!(stdin, "{hello}\n{}", dumped.trim_end()).unwrap();
    }
    let replies = backend.wait_with_output().unwrap();
    let replies = String::from_utf8_lossy(&replies.stdout).into_owned();
    assert!(
        replies.lines().nth(1).unwrap().contains(r#""type":"ok""#),
        "{replies}"
    );
}

#[test]
fn no_two_requests_of_a_run_share_an_id() {
    // The whole suite, round trips included: each of their two steps is a request of its own.
    let scratch = Scratch::temp("ids");
    let dump = scratch.0.join("requests.jsonl");
    let output = runner()
        .current_dir(repository())
        .arg("--dump-requests")
        .arg(&dump)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let dumped = std::fs::read_to_string(&dump).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    let mut round_trip_steps = 0;
    for line in dumped.lines() {
        let request: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = request["id"].as_str().unwrap().to_owned();
        round_trip_steps += usize::from(id.contains("::metamorphic::"));
        *seen.entry(id).or_insert(0) += 1;
    }
    let shared: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        shared.is_empty(),
        "{} ids sent more than once, e.g. {:?}",
        shared.len(),
        &shared[..shared.len().min(3)]
    );
    assert!(
        round_trip_steps > 0 && round_trip_steps % 2 == 0,
        "{round_trip_steps}"
    );
}

#[test]
fn a_failure_report_ends_with_the_command_that_replays_it() {
    let specs = Scratch::temp("replay");
    std::fs::write(specs.0.join("slice").join("bad.yaml"), WRONG).unwrap();
    let backend = served_reference();
    let output = runner()
        .arg("--specs")
        .arg(&specs.0)
        .args(["--backend", &backend])
        .arg("--backend-log")
        .arg(specs.0.join("backend.log"))
        .output()
        .unwrap();
    let report = text(&output);
    assert!(!output.status.success(), "{report}");
    let line = report
        .lines()
        .find(|line| line.starts_with("replay: "))
        .unwrap_or_else(|| panic!("no replay line in:\n{report}"));
    // The command names the trial, the backend and the private spec folder.
    assert!(line.contains("replay slice::bad::wrong"), "{line}");
    assert!(line.contains(&backend), "{line}");
    assert!(line.contains(&specs.0.display().to_string()), "{line}");
    // The failure's own report (before the table) ends with it.
    let failure = report.split("failures:").nth(1).unwrap_or_default();
    let ends = failure
        .lines()
        .take_while(|line| !line.starts_with("failures:"))
        .filter(|line| !line.trim().is_empty())
        .last()
        .unwrap_or_default();
    assert!(ends.starts_with("replay: "), "{report}");

    // Running that command (it names the runner binary that ran) replays it.
    let command = line.strip_prefix("replay: ").unwrap();
    assert!(
        command.starts_with(&format!("{} replay ", env!("CARGO_BIN_EXE_runner"))),
        "{command}"
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{command} --backend-log {}",
            specs.0.join("backend.log").display()
        ))
        .output()
        .unwrap();
    let replay = text(&output);
    assert!(!output.status.success(), "{replay}");
    let message = |prefix: &str| -> serde_json::Value {
        let line = replay
            .lines()
            .find_map(|line| line.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in:\n{replay}"));
        serde_json::from_str(line).unwrap()
    };
    let request = message("request: ");
    assert_eq!(request["type"], "run");
    assert_eq!(request["id"], "slice::bad::wrong");
    assert_eq!(request["inputs"][0]["shape"], serde_json::json!([3, 3]));
    let reply = message("reply: ");
    assert_eq!(reply["type"], "ok");
    assert_eq!(reply["id"], "slice::bad::wrong");
    assert_eq!(reply["outputs"][0]["shape"], serde_json::json!([2, 2]));
    for needle in ["verdict: failed", "at [1, 1]: expected 5.0, got 4.0"] {
        assert!(replay.contains(needle), "missing {needle:?} in:\n{replay}");
    }
    // A passing trial replays as passed; an unknown one is an error.
    let output = runner()
        .args(["replay", "slice::mine::kept", "--specs"])
        .arg(&specs.0)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        text(&output).contains("verdict: passed"),
        "{}",
        text(&output)
    );
    let output = runner()
        .args(["replay", "slice::mine::nothing", "--specs"])
        .arg(&specs.0)
        .output()
        .unwrap();
    assert_usage_error(&output, "no trial named `slice::mine::nothing`");
}

/// `--list` shows what each trial is: a spec case, a sweep case, its round trip, a problem of
/// the suite; and an exact name with its kind, as cargo nextest passes a listed name back,
/// runs that one trial.
#[test]
fn list_shows_the_kind_of_each_trial() {
    let output = runner().arg("--list").output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.ends_with(": test")).collect();
    for (kind, part) in [
        ("[case] ", "::"),
        ("[generated] ", "::sweep::"),
        ("[round-trip] ", "::metamorphic::"),
    ] {
        assert!(
            (lines.iter()).any(|l| l.strip_prefix(kind).is_some_and(|name| name.contains(part))),
            "no {kind}trial"
        );
    }
    assert!(lines.iter().all(|l| l.starts_with('[')), "{stdout}");

    let specs = Scratch::temp("kinds");
    std::fs::write(specs.0.join("slice").join("broken.yaml"), "cases: [").unwrap();
    let output = runner()
        .arg("--specs")
        .arg(&specs.0)
        .arg("--list")
        .output()
        .unwrap();
    let listing = text(&output);
    assert!(
        (listing.lines()).any(|l| l.starts_with("[spec-problem] slice::")),
        "{listing}"
    );
    assert!(
        listing.contains("[case] slice::mine::kept: test"),
        "{listing}"
    );

    let specs = Scratch::temp("kinds-exact");
    let output = runner()
        .arg("--specs")
        .arg(&specs.0)
        .args(["--exact", "[case] slice::mine::kept"])
        .output()
        .unwrap();
    let all = text(&output);
    assert!(output.status.success(), "{all}");
    assert!(all.contains("1 passed"), "{all}");
}

#[test]
fn generated_trials_replay_too() {
    let names = listed(&runner().arg("--list").output().unwrap());
    for kind in ["::sweep::", "::metamorphic::"] {
        let name = names
            .iter()
            .find(|name| name.contains(kind))
            .unwrap_or_else(|| panic!("no {kind} trial"));
        let output = runner().args(["replay", name]).output().unwrap();
        let text = text(&output);
        assert!(output.status.success(), "{text}");
        assert!(text.contains("request: "), "{text}");
        assert!(text.contains("verdict: passed"), "{text}");
    }
}

#[cfg(unix)]
#[test]
fn an_unreadable_op_folder_fails_its_trial() {
    use std::os::unix::fs::PermissionsExt;
    let specs = Scratch::temp("unreadable");
    let folder = specs.0.join("shuffle");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Permissions do not stop root: run the runner without the capabilities that override
    // them then (still as root, so that a private TMPDIR stays reachable).
    let mut command = if std::fs::read_dir(&folder).is_ok() {
        let mut command = clean(Command::new("setpriv"));
        command.arg("--bounding-set=-dac_override,-dac_read_search");
        command.arg(env!("CARGO_BIN_EXE_runner"));
        command
    } else {
        runner()
    };
    let output = command.arg("--specs").arg(&specs.0).output();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = output.expect("setpriv runs the runner without those capabilities");
    let text = text(&output);
    assert!(!output.status.success(), "{text}");
    assert!(text.contains("shuffle::<folder>"), "{text}");
    assert!(
        text.contains(&format!("cannot read spec folder {}", folder.display())),
        "{text}"
    );
}

/// A checkout of the suite of its own under `dir`: the repository's clause catalogues, one
/// slice case (`slice::mine::kept`) and no sweeps.
fn second_checkout(dir: &Path) {
    std::fs::create_dir_all(dir.join("specs").join("slice")).unwrap();
    std::fs::create_dir_all(dir.join("sweeps")).unwrap();
    for entry in std::fs::read_dir(repository().join("specs")).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".clauses.yaml") {
            std::fs::copy(&path, dir.join("specs").join(path.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(dir.join("specs").join("slice").join("mine.yaml"), CASE).unwrap();
}

#[test]
fn a_runner_started_in_another_checkout_reads_that_checkout() {
    let scratch = tempfile::tempdir().unwrap();
    let checkout = scratch.path().join("clone");
    second_checkout(&checkout);
    let inside = checkout.join("deep").join("er");
    std::fs::create_dir_all(&inside).unwrap();
    let output = runner()
        .current_dir(&inside)
        .args(["--backend", &served_reference()])
        .output()
        .unwrap();
    let all = text(&output);
    assert!(output.status.success(), "{all}");
    assert!(
        all.contains(&format!(
            "spec folders: {}",
            checkout.join("specs").display()
        )),
        "{all}"
    );
    assert!(all.contains("1 passed"), "{all}");
    assert!(!all.contains("warning:"), "{all}");
    // The backend's log is under the checkout it read, not the one the runner was built in.
    assert!(checkout.join("target").join("opspec-backend.log").is_file());

    // Outside any checkout: the one it was built from, said on stderr.
    let outside = scratch.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let output = runner()
        .current_dir(&outside)
        .args(["--list"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        stderr.contains(&format!(
            "is in no opspec checkout (a folder holding specs/ and sweeps/); reading the one this runner was built from, {}",
            repository().display()
        )),
        "{stderr}"
    );
}

#[test]
fn replay_lines_name_the_runner_as_it_was_started() {
    let scratch = tempfile::tempdir().unwrap();
    let checkout = scratch.path().join("clone");
    second_checkout(&checkout);
    std::fs::write(
        checkout.join("specs").join("slice").join("mine.yaml"),
        CASE.replace("[[0, 1], [3, 4]]", "[[0, 1], [3, 5]]"),
    )
    .unwrap();
    let output = runner().current_dir(&checkout).output().unwrap();
    let all = text(&output);
    assert_eq!(output.status.code(), Some(101), "{all}");
    assert!(
        all.contains(&format!(
            "replay: {} replay slice::mine::kept\n",
            env!("CARGO_BIN_EXE_runner")
        )),
        "{all}"
    );
}

/// Started outside any checkout, the runner reads the one it was built from, but starts its
/// backend in the current folder (relative paths in the command are the user's) and writes
/// the backend log under the temporary folder, never into that checkout; the warning says so.
#[test]
fn a_runner_started_outside_a_checkout_starts_its_backend_here_and_logs_elsewhere() {
    let scratch = tempfile::tempdir().unwrap();
    let outside = scratch.path().join("elsewhere");
    let temporary = scratch.path().join("tmp");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&temporary).unwrap();
    let script = outside.join("backend.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho started-here >&2\nexec {}\n",
            served_reference()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = runner()
        .current_dir(&outside)
        .env("TMPDIR", &temporary)
        .args(["--backend", "./backend.sh", "-q", "slice::seed_examples::"])
        .output()
        .unwrap();
    let all = text(&output);
    assert!(output.status.success(), "{all}");
    assert!(all.contains("a backend starts in"), "{all}");
    let log = temporary.join("opspec").join("opspec-backend.log");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        logged.contains("started-here"),
        "{}: {logged}",
        log.display()
    );
}

/// A subcommand given after an option is read as a name filter: the error says so and how to
/// write it; `--backend ''` names no command and is refused as such.
#[test]
fn a_misplaced_subcommand_and_an_empty_backend_are_explained() {
    let output = runner()
        .args([
            "--specs",
            repository().join("specs").to_str().unwrap(),
            "coverage",
        ])
        .output()
        .unwrap();
    assert_usage_error(&output, "`coverage` is a subcommand");
    assert!(
        text(&output).contains("runner coverage --specs"),
        "{}",
        text(&output)
    );
    for empty in ["", "  "] {
        let output = runner().args(["--backend", empty]).output().unwrap();
        assert_usage_error(&output, "--backend");
        assert!(
            text(&output).contains("names no command"),
            "{}",
            text(&output)
        );
    }
}

/// A first argument one edit from a subcommand is a typo of it, never a name filter that runs
/// a few trials and passes: exit 2, naming the subcommand. After `--` it is a filter again.
#[test]
fn a_mistyped_subcommand_is_refused_naming_the_subcommand() {
    for (typo, meant) in [("dif", "diff"), ("mrege", "merge"), ("reprot", "report")] {
        let output = runner().arg(typo).output().unwrap();
        assert_usage_error(
            &output,
            &format!("`{typo}` is no subcommand (did you mean `{meant}`?)"),
        );
        assert!(
            text(&output).contains(&format!("runner -- {typo}")),
            "{}",
            text(&output)
        );
    }
    let filtered = runner().args(["-q", "--", "dif"]).output().unwrap();
    assert_eq!(filtered.status.code(), Some(0), "{}", text(&filtered));
}
