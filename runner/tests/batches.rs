//! Batches (docs/protocol.md, "Batches"): a backend whose hello declares `batch` gets several
//! cases in one request, and every trial gets the status and message it gets when each case
//! is sent alone, whatever went wrong inside a batch. The backends are `faulty_backend --batch
//! N` (runner/test-backends), the reference behind the faults its flags ask for.

mod fixtures;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use serde_json::Value;

use fixtures::faulty_backend;

/// The repository's spec folder: given alone, it leaves the sweeps out (spec cases only).
const SPECS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs");

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for variable in [
        "OPSPEC_ALLOW_SKIPS",
        "OPSPEC_BATCH",
        "OPSPEC_DUMP_REQUESTS",
        "OPSPEC_JOBS",
        "OPSPEC_PARTITION",
        "OPSPEC_TIMEOUT",
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

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Each trial of a report by name, without its time.
fn trials(report: &Value) -> BTreeMap<String, Value> {
    (report["trials"].as_array().unwrap().iter())
        .map(|t| {
            let mut t = t.clone();
            t.as_object_mut().unwrap().remove("seconds");
            (t["name"].as_str().unwrap().to_owned(), t)
        })
        .collect()
}

/// The names of the trials `filter` selects, as `--list` prints them.
fn listed(filter: &str) -> Vec<String> {
    let listing = runner().args(["--list", filter]).output().unwrap();
    String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(|l| l.split_once("] ").map_or(l, |(_, name)| name).to_owned())
        .collect()
}

/// A run of `backend` over `filter` with `flags`, its JSON report in `dir` under `label`.
struct Ran {
    output: Output,
    report: Value,
    dump: PathBuf,
}

fn run(dir: &Path, label: &str, backend: &str, flags: &[&str], filter: &str) -> Ran {
    let report = dir.join(format!("{label}.json"));
    let dump = dir.join(format!("{label}.jsonl"));
    let output = runner()
        .args(["--backend", backend])
        .args(flags)
        .arg("--report-json")
        .arg(&report)
        .arg("--dump-requests")
        .arg(&dump)
        // One log for every run of a test: a failure's message names it.
        .arg("--backend-log")
        .arg(dir.join("backend.log"))
        .arg(filter)
        .output()
        .unwrap();
    let report = read_json(&report);
    Ran {
        output,
        report,
        dump,
    }
}

/// The requests of a dump: per line, the ids it holds and whether it was a batch.
fn requests(dump: &Path) -> Vec<(bool, Vec<String>)> {
    let text = std::fs::read_to_string(dump).unwrap();
    (text.lines())
        .map(|line| {
            let request: Value = serde_json::from_str(line).unwrap();
            match request["type"].as_str() {
                Some("batch") => (
                    true,
                    (request["cases"].as_array().unwrap().iter())
                        .map(|c| {
                            assert_eq!(c["type"], "run", "a batch holds run requests: {c}");
                            c["id"].as_str().unwrap().to_owned()
                        })
                        .collect(),
                ),
                _ => (false, vec![request["id"].as_str().unwrap().to_owned()]),
            }
        })
        .collect()
}

/// A crash, a lie, a hang, a case answered twice and one the batch leaves unanswered, among
/// the as_strided trials: batched (in batches of 8, answered last first), with one process
/// and with two, every trial has the status and message it has when each case is sent alone.
#[test]
fn a_batched_run_reports_what_single_requests_report() {
    let all = listed("as_strided::");
    assert!(all.len() > 100, "{all:?}");
    let first = |prefix: &str| all.iter().find(|n| n.starts_with(prefix)).unwrap();
    let last = |prefix: &str| all.iter().rev().find(|n| n.starts_with(prefix)).unwrap();
    let (crash, twice) = (first("as_strided::views::"), last("as_strided::views::"));
    let (lie, dropped) = (first("as_strided::sweep::"), last("as_strided::sweep::"));
    let hang = first("as_strided::bounds::");
    let backend = format!(
        "{} --batch 8 --batch-reverse --crash {crash} --lie {lie} --hang {hang} --twice {twice} --batch-drop {dropped}",
        faulty_backend()
    );
    let dir = scratch("batches");
    let timeout = ["--timeout", "1"];
    let single = run(
        dir.path(),
        "single",
        &backend,
        &[&timeout[..], &["--batch", "1"]].concat(),
        "as_strided::",
    );
    assert_eq!(
        single.output.status.code(),
        Some(101),
        "{}",
        text(&single.output)
    );
    assert_eq!(single.report["run"]["batch"], 1);
    assert!(
        requests(&single.dump).iter().all(|(batch, _)| !batch),
        "--batch 1 sends every case alone"
    );
    let expected = trials(&single.report);
    let failed: Vec<&String> = (expected.iter())
        .filter(|(_, t)| t["status"] == "failed")
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        failed.len(),
        4,
        "crash, lie, hang and twice fail: {failed:?}"
    );
    for jobs in ["1", "2"] {
        let batched = run(
            dir.path(),
            &format!("jobs-{jobs}"),
            &backend,
            &[&timeout[..], &["--jobs", jobs]].concat(),
            "as_strided::",
        );
        assert_eq!(
            batched.output.status.code(),
            Some(101),
            "{}",
            text(&batched.output)
        );
        assert_eq!(batched.report["run"]["batch"], 8);
        let got = trials(&batched.report);
        assert_eq!(got.len(), expected.len());
        for (name, trial) in &expected {
            assert_eq!(&got[name], trial, "--jobs {jobs}: {name} differs");
        }
        let sent = requests(&batched.dump);
        assert!(
            sent.iter().filter(|(batch, _)| *batch).count() > 10,
            "the cases went in batches: {sent:?}"
        );
        // The guilty cases were sent again alone, and nothing else was (round trips go alone
        // anyway: their second step needs the first's output).
        let alone: Vec<&String> = (sent.iter())
            .filter(|(batch, _)| !batch)
            .map(|(_, ids)| &ids[0])
            .filter(|id| !id.contains("::metamorphic::"))
            .collect();
        for guilty in [crash, hang, twice, dropped] {
            assert!(
                alone.contains(&guilty),
                "{guilty} was sent again alone: {alone:?}"
            );
        }
    }
}

/// A batch is a run of consecutive cases in the order the trials run (by name), cut every N
/// cases: nothing else, such as which cases expect an error, decides where a case goes.
#[test]
fn batches_are_cut_from_the_trials_order_alone() {
    let dir = scratch("batch-order");
    let backend = format!("{} --batch 5", faulty_backend());
    let ran = run(
        dir.path(),
        "order",
        &backend,
        &["--specs", SPECS],
        "slice::",
    );
    assert_eq!(ran.output.status.code(), Some(0), "{}", text(&ran.output));
    let batches: Vec<Vec<String>> = (requests(&ran.dump).into_iter())
        .filter(|(batch, _)| *batch)
        .map(|(_, ids)| ids)
        .collect();
    let mut order: Vec<String> = batches.concat();
    order.sort();
    // Every batch is a window of the sorted names: its cases are consecutive.
    let mut starts = Vec::new();
    for batch in &batches {
        let at = order.iter().position(|id| *id == batch[0]).unwrap();
        assert_eq!(&order[at..at + batch.len()], batch.as_slice());
        starts.push(at);
    }
    starts.sort();
    // ... every window starts at a multiple of 5, and only the last may be shorter.
    assert!(
        starts.iter().enumerate().all(|(k, &at)| at == 5 * k),
        "{starts:?}"
    );
    let short = batches.iter().filter(|b| b.len() < 5).count();
    assert!(short <= 1, "{batches:?}");
}

/// The slow compiler: each request costs the backend 60 ms, as a build does, whatever it
/// holds. Batches of 32 pay it once per 32 of Scale's spec cases (counted from the requests
/// sent, which no load on the machine changes), with the same statuses; the run's time falls
/// with it (BENCHMARKS.md, "Batched trials", has the measured speed-up: the time check here
/// only asks for half, so that a loaded machine's runner overhead cannot fail it).
#[test]
fn batches_pay_a_slow_compiler_once_per_batch() {
    let dir = scratch("slow-compiler");
    let backend = format!("{} --batch 32 --sleep-ms 60", faulty_backend());
    let timed = |label: &str, flags: &[&str]| {
        let started = Instant::now();
        let ran = run(dir.path(), label, &backend, flags, "scale::");
        let seconds = started.elapsed().as_secs_f64();
        assert_eq!(ran.output.status.code(), Some(0), "{}", text(&ran.output));
        (ran, seconds)
    };
    let (single, single_seconds) = timed("single", &["--specs", SPECS, "--batch", "1"]);
    let (batched, batched_seconds) = timed("batched", &["--specs", SPECS]);
    let cases = trials(&single.report).len();
    assert!(cases > 250, "{cases} scale cases");
    // Alone, every case pays the 60 ms: that much is certain.
    assert!(single_seconds >= cases as f64 * 0.06);
    let sent = requests(&batched.dump);
    assert_eq!(sent.len(), cases.div_ceil(32), "one request per 32 cases");
    // At least 5 times fewer programs paid for (here 32 times).
    assert!(5 * sent.len() <= cases);
    assert!(
        batched_seconds * 2.0 <= single_seconds,
        "batched {batched_seconds:.2} s, single {single_seconds:.2} s"
    );
    assert_eq!(trials(&single.report), trials(&batched.report));
}

/// `OPSPEC_BATCH` caps the batch as `--batch` does; a hello declaring `batch: 0` is refused.
#[test]
fn the_batch_is_capped_by_the_variable_and_a_zero_batch_is_refused() {
    let dir = scratch("batch-cap");
    let report = dir.path().join("capped.json");
    let dump = dir.path().join("capped.jsonl");
    let ran = runner()
        .env("OPSPEC_BATCH", "3")
        .args(["--backend", &format!("{} --batch 64", faulty_backend())])
        .args(["--specs", SPECS, "--report-json"])
        .arg(&report)
        .arg("--dump-requests")
        .arg(&dump)
        .arg("--backend-log")
        .arg(dir.path().join("log"))
        .arg("as_strided::")
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
    assert_eq!(read_json(&report)["run"]["batch"], 3);
    let sent = requests(&dump);
    assert!(sent.iter().all(|(_, ids)| ids.len() <= 3), "{sent:?}");
    assert!(sent.iter().any(|(batch, _)| *batch));

    let hello = r#"{"type":"hello","protocol":1,"name":"zero","ops":["as_strided"],"batch":0}"#;
    let refused = runner()
        .args([
            "--backend",
            &format!("{} --hello '{hello}'", faulty_backend()),
        ])
        .arg("--backend-log")
        .arg(dir.path().join("log"))
        .arg("as_strided::")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("`batch: 0`"), "{}", text(&refused));
}

/// The two parts of a partitioned batched run merge into the report of the whole run sent
/// alone, trial for trial.
#[test]
fn parts_of_a_batched_run_merge_into_the_single_run() {
    let dir = scratch("batch-parts");
    let backend = format!("{} --batch 16", faulty_backend());
    let whole = run(
        dir.path(),
        "whole",
        &backend,
        &["--batch", "1"],
        "reformat::",
    );
    assert_eq!(
        whole.output.status.code(),
        Some(0),
        "{}",
        text(&whole.output)
    );
    let mut parts = Vec::new();
    for part in ["1/2", "2/2"] {
        let label = format!("part-{}", &part[..1]);
        let ran = run(
            dir.path(),
            &label,
            &backend,
            &["--partition", part],
            "reformat::",
        );
        assert_eq!(ran.output.status.code(), Some(0), "{}", text(&ran.output));
        parts.push(dir.path().join(format!("{label}.json")));
    }
    let merged = dir.path().join("merged.json");
    let joined = runner()
        .arg("merge")
        .args(&parts)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert_eq!(joined.status.code(), Some(0), "{}", text(&joined));
    assert_eq!(trials(&read_json(&merged)), trials(&whole.report));
}
