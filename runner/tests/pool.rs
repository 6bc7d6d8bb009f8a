//! A pool of backend processes (`--jobs N`) gives the report one process gives, and the parts
//! of a partitioned run (`--partition K/N`) hold every trial once and merge (`runner merge`)
//! into the whole run's report.

mod fixtures;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use fixtures::faulty_backend;

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for variable in [
        "OPSPEC_ALLOW_SKIPS",
        "OPSPEC_JOBS",
        "OPSPEC_PARTITION",
        "TEST_TOTAL_SHARDS",
        "TEST_SHARD_INDEX",
        "TEST_SHARD_STATUS_FILE",
    ] {
        command.env_remove(variable);
    }
    command
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("opspec-{name}-"))
        .tempdir()
        .unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The trials of a report without their timings, in report order.
fn trials(report: &Value) -> Vec<Value> {
    report["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let mut t = t.clone();
            t.as_object_mut().unwrap().remove("seconds");
            t
        })
        .collect()
}

fn names(report: &Value) -> BTreeSet<String> {
    report["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Runs `runner` with `args` and a JSON report at `report`.
fn run(args: &[&str], report: &Path) -> Output {
    runner()
        .args(args)
        .arg("--report-json")
        .arg(report)
        .output()
        .unwrap()
}

/// A crash, a lie and a hung case among the as_strided trials: `--jobs 3` reports every trial
/// with the status and message `--jobs 1` gives, in the same order, and the other workers go
/// on while one hangs.
#[test]
fn a_pool_reports_what_one_process_reports() {
    let listing = runner().args(["--list", "as_strided::"]).output().unwrap();
    let all: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(|l| l.split_once("] ").map_or(l, |(_, name)| name).to_owned())
        .collect();
    assert!(all.len() > 100, "{all:?}");
    let pick = |part: &str| all.iter().find(|n| n.contains(part)).unwrap().clone();
    let (crash, lie, hang) = (pick("::views::"), pick("::sweep::"), pick("::bounds::"));
    let command = format!(
        "{} --crash {crash} --lie {lie} --hang {hang}",
        faulty_backend()
    );
    let scratch = scratch("pool");
    let log = scratch.path().join("backend.log");
    let mut reports = Vec::new();
    for jobs in ["1", "3"] {
        let report = scratch.path().join(format!("jobs-{jobs}.json"));
        let ran = run(
            &[
                "--backend",
                &command,
                "--jobs",
                jobs,
                "--timeout",
                "2",
                "--backend-log",
                log.to_str().unwrap(),
                "as_strided::",
            ],
            &report,
        );
        assert_eq!(ran.status.code(), Some(101), "{}", text(&ran));
        if jobs == "3" {
            let log = std::fs::read_to_string(&log).unwrap();
            for worker in 1..=3 {
                assert!(
                    log.contains(&format!("[worker {worker}] [runner] started")),
                    "{log}"
                );
            }
            // Each line of the log is one worker's.
            assert!(log.lines().all(|l| l.starts_with("[worker ")), "{log}");
        }
        reports.push(read_json(&report));
    }
    let (one, pool) = (&reports[0], &reports[1]);
    assert_eq!(trials(one), trials(pool));
    for field in [
        "passed",
        "failed",
        "unsupported",
        "excluded",
        "not_run",
        "problems",
    ] {
        assert_eq!(one[field], pool[field], "{field}");
    }
    let failed: BTreeSet<&str> = one["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "failed")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        BTreeSet::from([crash.as_str(), lie.as_str(), hang.as_str()])
    );
}

/// With `--fail-fast` the first failure stops every worker: one trial fails, none after it is
/// sent, and the rest are not run.
#[test]
fn fail_fast_stops_every_worker() {
    let scratch = scratch("pool-fail-fast");
    let report = scratch.path().join("report.json");
    let listing = runner().args(["--list", "as_strided::"]).output().unwrap();
    let first = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim_end_matches(": test")
        .split_once("] ")
        .expect("a listed trial has its kind")
        .1
        .to_owned();
    // Every worker answers slowly, so that most trials are still waiting at the failure.
    let command = format!("{} --sleep-ms 20 --lie {first}", faulty_backend());
    let ran = run(
        &[
            "--backend",
            &command,
            "--jobs",
            "3",
            "--fail-fast",
            "--backend-log",
            scratch.path().join("backend.log").to_str().unwrap(),
            "as_strided::",
        ],
        &report,
    );
    assert_eq!(ran.status.code(), Some(101), "{}", text(&ran));
    let json = read_json(&report);
    assert_eq!(json["failed"], 1, "{}", text(&ran));
    // Each trial once: a case in flight when the run stopped is recorded once, as not run.
    assert_eq!(names(&json).len(), json["trials"].as_array().unwrap().len());
    assert!(
        json["not_run"].as_u64().unwrap() > 100,
        "{}",
        json["not_run"]
    );
    for trial in json["trials"].as_array().unwrap() {
        if trial["status"] == "not_run" {
            assert_eq!(
                trial["message"],
                format!("not run: --fail-fast stopped the run at the failure of {first}")
            );
        }
    }
}

/// The three parts of the whole run are disjoint and cover it, generated and metamorphic
/// trials included; their merge equals the whole run's report trial by trial, and `runner diff`
/// and `runner report --html` read it.
#[test]
fn three_parts_merge_into_the_whole_run() {
    let scratch = scratch("partition");
    let dir = scratch.path();
    let whole = dir.join("whole.json");
    let ran = run(&["-q"], &whole);
    assert!(ran.status.success(), "{}", text(&ran));
    let whole = read_json(&whole);
    let mut parts: Vec<PathBuf> = Vec::new();
    let mut seen = BTreeSet::new();
    for k in 1..=3 {
        let part = dir.join(format!("part-{k}.json"));
        let ran = run(&["-q", "--partition", &format!("{k}/3")], &part);
        assert!(ran.status.success(), "{}", text(&ran));
        let held = names(&read_json(&part));
        assert!(!held.is_empty());
        assert!(seen.is_disjoint(&held), "part {k} overlaps an earlier one");
        seen.extend(held);
        parts.push(part);
    }
    assert_eq!(seen, names(&whole));
    assert!(seen.iter().any(|n| n.contains("::metamorphic::")));
    assert!(seen.iter().any(|n| n.contains("::sweep::")));

    let merged = dir.join("merged.json");
    let merge = runner()
        .arg("merge")
        .args(&parts)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(merge.status.success(), "{}", text(&merge));
    let merged_json = read_json(&merged);
    assert_eq!(trials(&merged_json), trials(&whole));
    let without_trials = |mut report: Value| {
        report.as_object_mut().unwrap().remove("trials");
        report
    };
    assert_eq!(without_trials(merged_json), without_trials(whole.clone()));

    let whole_path = dir.join("whole.json");
    let diff = runner()
        .args(["diff"])
        .arg(&whole_path)
        .arg(&merged)
        .output()
        .unwrap();
    assert!(diff.status.success(), "{}", text(&diff));
    let html = dir.join("report.html");
    let page = runner()
        .arg("report")
        .arg(&merged)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert!(page.status.success(), "{}", text(&page));
    assert!(std::fs::metadata(&html).unwrap().len() > 0);

    // Refused: a missing part, a part twice, a whole run, another backend.
    let refused = |inputs: &[&Path], expected: &str| {
        let out = dir.join("refused.json");
        let merge = runner()
            .arg("merge")
            .args(inputs)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(merge.status.code(), Some(2), "{}", text(&merge));
        let stderr = String::from_utf8_lossy(&merge.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!out.exists());
    };
    refused(&[&parts[0], &parts[1]], "part(s) 3/3 of 3 missing");
    refused(
        &[&parts[0], &parts[1], &parts[1], &parts[2]],
        "are both part 2/3",
    );
    refused(&[&parts[0], &whole_path], "not the report of a part");
    let other = dir.join("other.json");
    let mut renamed = read_json(&parts[2]);
    renamed["backend"] = "someone-else".into();
    std::fs::write(&other, renamed.to_string()).unwrap();
    refused(
        &[&parts[0], &parts[1], &other],
        "from backend \"someone-else\"",
    );
    // A part whose trial was dropped: the run's fingerprint no longer matches.
    let mut short = read_json(&parts[2]);
    short["trials"].as_array_mut().unwrap().pop();
    std::fs::write(&other, short.to_string()).unwrap();
    refused(&[&parts[0], &parts[1], &other], "trials are missing");
}

/// A backend that declares only some ops: the trials its hello excludes (recorded without a
/// libtest trial) fall in one part each too, and the parts merge into the whole run.
#[test]
fn parts_of_a_run_with_excluded_ops_merge_into_the_whole_run() {
    let scratch = scratch("partition-excluded");
    let dir = scratch.path();
    let hello = r#"{"type":"hello","protocol":1,"name":"slices","ops":["slice"]}"#;
    let backend = format!("{} --hello '{hello}'", faulty_backend());
    let specs = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = ["-q", "--specs", specs, "--backend", &backend]
            .iter()
            .map(|a| a.to_string())
            .collect();
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    };
    let whole_path = dir.join("whole.json");
    let whole_args = args(&[]);
    let ran = run(
        &whole_args.iter().map(String::as_str).collect::<Vec<_>>(),
        &whole_path,
    );
    assert!(ran.status.success(), "{}", text(&ran));
    let whole = read_json(&whole_path);
    assert!(whole["excluded"].as_u64().unwrap() > 100);
    let mut parts = Vec::new();
    let mut seen = BTreeSet::new();
    for k in 1..=2 {
        let part = dir.join(format!("part-{k}.json"));
        let part_args = args(&["--partition", &format!("{k}/2")]);
        let ran = run(
            &part_args.iter().map(String::as_str).collect::<Vec<_>>(),
            &part,
        );
        assert!(ran.status.success(), "{}", text(&ran));
        let held = names(&read_json(&part));
        assert!(seen.is_disjoint(&held), "part {k} overlaps part 1");
        seen.extend(held);
        parts.push(part);
    }
    assert_eq!(seen, names(&whole));
    let merged = dir.join("merged.json");
    let merge = runner()
        .arg("merge")
        .args(&parts)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(merge.status.success(), "{}", text(&merge));
    assert_eq!(trials(&read_json(&merged)), trials(&whole));
}

/// Bazel's sharding variables select the same part as `--partition`, and the status file is
/// touched.
#[test]
fn bazel_sharding_selects_the_part() {
    let scratch = scratch("bazel");
    let status = scratch.path().join("shard-status");
    let list = |command: &mut Command| -> BTreeSet<String> {
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .map(|l| l.split_once("] ").map_or(l, |(_, name)| name).to_owned())
            .collect()
    };
    let flagged = list(runner().args(["--list", "--partition", "2/3"]));
    let bazel = list(
        runner()
            .args(["--list"])
            .env("TEST_TOTAL_SHARDS", "3")
            .env("TEST_SHARD_INDEX", "1")
            .env("TEST_SHARD_STATUS_FILE", &status),
    );
    assert!(!flagged.is_empty());
    assert_eq!(flagged, bazel);
    // A run (not a listing) touches the status file.
    let ran = runner()
        .args(["-q", "slice::seed_examples::"])
        .env("TEST_TOTAL_SHARDS", "3")
        .env("TEST_SHARD_INDEX", "0")
        .env("TEST_SHARD_STATUS_FILE", &status)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(status.exists());
}

/// The lines of a `--starts` file: how many copies the backend started.
fn starts_made(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

/// A copy after the first that exits before its hello, or answers it after the hello's
/// deadline, is stopped and started again when a case needs it, as a copy that crashes: the
/// run goes on with the others and reports what one process reports. Only when no copy
/// starts does the run stop.
#[test]
fn a_copy_that_fails_its_hello_is_restarted_and_the_run_goes_on() {
    let scratch = scratch("pool-hello");
    let filter = "shuffle::seed_examples::";
    let one = scratch.path().join("one.json");
    let ran = run(&["--backend", &faulty_backend(), filter], &one);
    assert!(ran.status.success(), "{}", text(&ran));
    let one = read_json(&one);
    for (name, flags) in [
        ("exit", "--exit-before-hello 2"),
        ("slow", "--slow-hello 3 --slow-hello-ms 3600000"),
    ] {
        let starts = scratch.path().join(format!("{name}.starts"));
        let command = format!("{} --starts {} {flags}", faulty_backend(), starts.display());
        let report = scratch.path().join(format!("{name}.json"));
        let ran = run(
            &[
                "--backend",
                &command,
                "--jobs",
                "4",
                // Well above what a sound copy needs on a loaded machine; the slow copy takes
                // an hour.
                "--hello-timeout",
                "10",
                filter,
            ],
            &report,
        );
        assert!(ran.status.success(), "{name}: {}", text(&ran));
        assert!(
            text(&ran).contains("is started again when a case needs it"),
            "{name}: {}",
            text(&ran)
        );
        let without_replay = |report: &Value| -> Vec<Value> {
            let mut trials = trials(report);
            for trial in &mut trials {
                trial.as_object_mut().unwrap().remove("replay");
            }
            trials
        };
        assert_eq!(
            without_replay(&read_json(&report)),
            without_replay(&one),
            "{name}"
        );
    }
    let starts = scratch.path().join("none.starts");
    let command = format!(
        "{} --starts {} --exit-before-hello 1,2,3,4",
        faulty_backend(),
        starts.display()
    );
    let report = scratch.path().join("none.json");
    let ran = run(&["--backend", &command, "--jobs", "4", filter], &report);
    assert_eq!(ran.status.code(), Some(2), "{}", text(&ran));
    assert!(
        text(&ran).contains("failed the handshake"),
        "{}",
        text(&ran)
    );
    assert!(!report.exists());
}

/// Copies that never get through their hello (every start after the first exits before it,
/// or hangs on it past `--hello-timeout`) fail no case: a case whose copy cannot start is not
/// sent to the engine, so it goes to a copy that can, and the run reports what one process
/// reports.
#[test]
fn copies_that_cannot_start_fail_no_case_the_engine_never_saw() {
    let scratch = scratch("pool-no-start");
    let filter = "shuffle::seed_examples::";
    let one = scratch.path().join("one.json");
    let ran = run(&["--backend", &faulty_backend(), filter], &one);
    assert!(ran.status.success(), "{}", text(&ran));
    let without_replay = |report: &Value| -> Vec<Value> {
        let mut trials = trials(report);
        for trial in &mut trials {
            trial.as_object_mut().unwrap().remove("replay");
        }
        trials
    };
    let one = without_replay(&read_json(&one));
    let every_later_start = (2..=40)
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(",");
    for (name, flags, jobs) in [
        (
            "exit",
            format!("--exit-before-hello {every_later_start}"),
            "4",
        ),
        ("hang", "--hang-hello-after 1".to_owned(), "3"),
    ] {
        let starts = scratch.path().join(format!("{name}.starts"));
        let command = format!("{} --starts {} {flags}", faulty_backend(), starts.display());
        let report = scratch.path().join(format!("{name}.json"));
        let ran = run(
            &[
                "--backend",
                &command,
                "--jobs",
                jobs,
                "--hello-timeout",
                "5",
                filter,
            ],
            &report,
        );
        assert!(ran.status.success(), "{name}: {}", text(&ran));
        assert_eq!(without_replay(&read_json(&report)), one, "{name}");
    }
}

/// The hello has a deadline of its own (`--hello-timeout`, by default longer than a case's):
/// an engine that loads for longer than one case may take is waited for.
#[test]
fn the_hello_has_its_own_deadline() {
    let scratch = scratch("hello-deadline");
    let command = |starts: &str| {
        format!(
            "{} --starts {} --slow-hello 1 --slow-hello-ms 2000",
            faulty_backend(),
            scratch.path().join(starts).display()
        )
    };
    let report = scratch.path().join("report.json");
    let filter = "shuffle::seed_examples::";
    let ran = run(
        &["--backend", &command("a"), "--timeout", "1", filter],
        &report,
    );
    assert!(ran.status.success(), "{}", text(&ran));
    assert_eq!(starts_made(&scratch.path().join("a")), 1);
    // Given shorter, it is kept to.
    let command = command("b");
    let ran = run(
        &[
            "--backend",
            &command,
            "--timeout",
            "1",
            "--hello-timeout",
            "0.5",
            filter,
        ],
        &report,
    );
    assert_eq!(ran.status.code(), Some(2), "{}", text(&ran));
    assert!(
        text(&ran).contains("failed the handshake"),
        "{}",
        text(&ran)
    );
}

/// `--jobs 256` on a few cases starts no more copies than there are cases to send.
#[test]
fn a_pool_starts_no_more_copies_than_cases() {
    let scratch = scratch("pool-cap");
    let starts = scratch.path().join("starts");
    let command = format!("{} --starts {}", faulty_backend(), starts.display());
    let report = scratch.path().join("report.json");
    let filter = "shuffle::seed_examples::";
    let ran = run(&["--backend", &command, "--jobs", "256", filter], &report);
    assert!(ran.status.success(), "{}", text(&ran));
    let cases = names(&read_json(&report)).len();
    assert!(cases > 1 && cases < 64, "{cases}");
    assert!(
        starts_made(&starts) <= cases,
        "{} copies for {cases} cases",
        starts_made(&starts)
    );
}

/// A part that holds none of the selected trials says so (and is no failure: a shard may be
/// empty); a shard status file that cannot be touched is reported, naming the variable.
#[test]
fn an_empty_part_says_so_and_shard_status_problems_are_reported() {
    let ran = runner()
        .args(["--partition", "1/1000000", "slice::seed_examples::"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(text(&ran).contains("holds none of the"), "{}", text(&ran));
    let scratch = scratch("shard-status");
    let status = scratch.path().join("missing/folder/status");
    let ran = runner()
        .args(["-q", "slice::seed_examples::"])
        .env("TEST_TOTAL_SHARDS", "3")
        .env("TEST_SHARD_INDEX", "0")
        .env("TEST_SHARD_STATUS_FILE", &status)
        .output()
        .unwrap();
    assert!(
        text(&ran).contains("TEST_SHARD_STATUS_FILE"),
        "{}",
        text(&ran)
    );
}

/// The faulty backend's `--starts` gives copies started at the same moment a number each: the
/// pool tests above rely on exactly one start being the first (a lost count once made every
/// copy of a run a later start, and the run fail its handshake).
#[test]
fn copies_started_at_once_each_count_their_own_start() {
    let scratch = scratch("starts-at-once");
    let starts = scratch.path().join("at-once.starts");
    let copies = 16;
    let every_start = (1..=copies)
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let command = format!(
        "{} --starts {} --exit-before-hello {every_start}",
        faulty_backend(),
        starts.display()
    );
    let children: Vec<_> = (0..copies)
        .map(|_| {
            std::process::Command::new("sh")
                .args(["-c", &command])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut numbers: Vec<usize> = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            let text = String::from_utf8_lossy(&output.stderr).into_owned();
            text.split("start ")
                .nth(1)
                .and_then(|rest| rest.split(',').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no start number in {text:?}"))
        })
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=copies).collect::<Vec<_>>());
}
