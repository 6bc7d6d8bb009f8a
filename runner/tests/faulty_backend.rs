//! The runner survives a misbehaving backend (`runner/test-backends/src/bin/faulty_backend.rs`): a crash, a
//! hang or a lie fails exactly its case, each with a clear reason, every other case passes, and
//! no process is left behind.

mod fixtures;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use opspec_runner::backend::process::{ProcessBackend, StartError};
use opspec_runner::Backend;
use opspec_spec::Case;

use fixtures::faulty_backend;

fn runner() -> Command {
    Command::new(env!("CARGO_BIN_EXE_runner"))
}

/// A fresh scratch folder for one test, removed when dropped (also when the test fails).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("opspec-{name}-"))
        .tempdir()
        .unwrap()
}

/// Runs the suite through `backend` with extra `args`: whether the run succeeded, its stdout,
/// and its JSON report.
fn run_with_report(name: &str, backend: &str, args: &[&str]) -> (bool, String, serde_json::Value) {
    let ran = run_full(name, backend, args, &[]);
    (ran.code == Some(0), ran.stdout, ran.json.unwrap())
}

/// How many trials start with `prefix`.
fn count(prefix: &str) -> usize {
    trial_names()
        .iter()
        .filter(|n| n.starts_with(prefix))
        .count()
}

/// Every trial name, as `runner --list` prints them.
fn trial_names() -> Vec<String> {
    let listing = runner().arg("--list").output().unwrap();
    String::from_utf8(listing.stdout)
        .unwrap()
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
    let marker = marker("crash-hang-lie");
    let command = format!(
        "{} --crash {crash} --hang {hang} --lie {lie} --marker {marker}",
        faulty_backend()
    );
    // Every case but the hung one is answered well within the timeout, even on a loaded machine.
    let args = ["--timeout", "5", "--test-threads", "1"];
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
        message(&hang).contains("did not answer within 5 s"),
        "{}",
        message(&hang)
    );
    assert!(
        message(&lie).contains("elements differ"),
        "{}",
        message(&lie)
    );
    assert_eq!(json["passed"].as_u64().unwrap() as usize, names.len() - 3);
    assert_no_process_with(&marker);
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
    let loaded = opspec_spec::load_dirs(&specs, None, opspec::tensor::Limits::DEFAULT);
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
        .filter(|t| t["status"] == "excluded")
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

/// The name of the first trial starting with `prefix` and the first clause its case cites (an
/// entry must cite one of them).
fn named(prefix: &str) -> (String, String) {
    let case = spec_cases()
        .into_iter()
        .find(|c| c.trial_name().starts_with(prefix))
        .unwrap();
    (case.trial_name(), case.clauses[0].clone())
}

#[test]
fn expectations_excuse_known_failures_and_flag_stale_entries() {
    let (lie, lie_clause) = named("slice::seed");
    let (passing, passing_clause) = named("shuffle::seed");
    let scratch = scratch("expect");
    let dir = scratch.path();
    let expectations = dir.join("faulty.expect");
    std::fs::write(
        &expectations,
        format!(
            "# known failures of the faulty backend\n{lie} | {lie_clause} | defect | it flips a bit\n{passing} | {passing_clause} | defect | wrongly listed\nno::such::case* | common.input.required | adapter | matches nothing\n"
        ),
    )
    .unwrap();
    let command = format!("{} --lie {lie}", faulty_backend());
    let (success, stdout, json) = run_with_report(
        "expect-run",
        &command,
        &["--expectations", expectations.to_str().unwrap()],
    );
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

/// An entry whose condition does not hold on the run's facts covers no trial: its trial fails
/// as without it, and over a passing trial it is not stale. The report lists every entry
/// with its condition and whether it held.
#[test]
fn conditional_entries_hold_only_where_their_condition_does() {
    let (lie, lie_clause) = named("slice::seed");
    let (passing, passing_clause) = named("shuffle::seed");
    let os = std::env::consts::OS;
    let run = |entries: String| {
        let scratch = scratch("conditional");
        let expectations = scratch.path().join("faulty.expect");
        std::fs::write(&expectations, entries).unwrap();
        let command = format!("{} --lie {lie}", faulty_backend());
        run_with_report(
            "conditional-run",
            &command,
            &["--expectations", expectations.to_str().unwrap()],
        )
    };
    let status = |json: &serde_json::Value, name: &str| {
        let trials = json["trials"].as_array().unwrap();
        let trial = trials.iter().find(|t| t["name"] == name).unwrap();
        trial["status"].as_str().unwrap().to_owned()
    };
    // Elsewhere only: the lie fails, and the entry over the passing trial is not stale.
    let (success, stdout, json) = run(format!(
        "{lie} | {lie_clause} | defect | flips a bit on plan9 | if os == plan9\n\
         {passing} | {passing_clause} | defect | fails on plan9 | if os == plan9 or version < 0\n"
    ));
    assert!(!success, "{stdout}");
    assert_eq!(status(&json, &lie), "failed");
    assert_eq!(status(&json, &passing), "passed");
    assert_eq!(json["failed"], 1, "{stdout}");
    let entries = json["expectation_entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["condition"], "os == plan9");
    assert_eq!(entries[0]["held"], false);
    // The faulty backend's hello names no engine version: the test of it is false, and said.
    assert_eq!(entries[1]["unknown_facts"], serde_json::json!(["version"]));
    assert_eq!(json["facts"]["os"], os);
    // Here too: the first entry that holds covers the lie.
    let (success, stdout, json) = run(format!(
        "{lie} | {lie_clause} | defect | flips a bit on plan9 | if os == plan9\n\
         {lie} | {lie_clause} | defect | flips a bit here | if os == {os} and os != plan9\n"
    ));
    assert!(success, "{stdout}");
    assert_eq!(status(&json, &lie), "known_failure");
    let trials = json["trials"].as_array().unwrap();
    let known = &trials.iter().find(|t| t["name"] == *lie).unwrap()["known"];
    assert_eq!(known["line"], 2);
    assert_eq!(known["condition"], format!("os == {os} and os != plan9"));
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

/// What a run of the runner gave: exit code, stdout, stderr, and the JSON report if written.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Option<serde_json::Value>,
}

/// Runs the runner through `backend` with extra `args` and environment `env`.
fn run_full(name: &str, backend: &str, args: &[&str], env: &[(&str, &str)]) -> Ran {
    let scratch = scratch(name);
    let dir = scratch.path();
    let report = dir.join("report.json");
    let run = runner()
        .env_remove("OPSPEC_ALLOW_SKIPS")
        .envs(env.iter().copied())
        .args(["--backend", backend])
        .args(args)
        .arg("--report-json")
        .arg(&report)
        .arg("--backend-log")
        .arg(dir.join("backend.log"))
        .output()
        .unwrap();
    let json = std::fs::read(&report)
        .ok()
        .map(|bytes| serde_json::from_slice(&bytes).unwrap());
    Ran {
        code: run.status.code(),
        stdout: String::from_utf8_lossy(&run.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&run.stderr).into_owned(),
        json,
    }
}

/// The `(status, message)` of trial `name` in a JSON report.
fn trial_status(json: &serde_json::Value, name: &str) -> (String, String) {
    let trial = json["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no trial {name} in the report"));
    (
        trial["status"].as_str().unwrap().to_owned(),
        trial["message"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_backend_that_answers_unsupported_to_every_case_fails_the_run() {
    let command = format!("{} --unsupported ''", faulty_backend());
    let ran = run_full("all-unsupported", &command, &["slice::"], &[]);
    assert_eq!(ran.code, Some(1), "{}\n{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains("nothing passed"),
        "{}\n{}",
        ran.stdout,
        ran.stderr
    );
    let json = ran.json.unwrap();
    assert_eq!(json["passed"], 0);
    assert_eq!(json["unsupported"], count("slice::"), "{}", ran.stdout);
    assert!(
        json["problems"][0]
            .as_str()
            .unwrap()
            .contains("nothing passed"),
        "{json:?}"
    );
    // The user can say these skips are expected.
    let allowed = run_full(
        "all-unsupported-allowed",
        &command,
        &["slice::"],
        &[("OPSPEC_ALLOW_SKIPS", "1")],
    );
    assert_eq!(allowed.code, Some(0), "{}", allowed.stderr);
    let flag = run_full(
        "all-unsupported-flag",
        &command,
        &["slice::", "--allow-skips"],
        &[],
    );
    assert_eq!(flag.code, Some(0), "{}", flag.stderr);
}

#[test]
fn unsupported_replies_beyond_a_tenth_of_the_trials_fail_the_run() {
    let (all, few, many) = (
        count("slice::"),
        count("slice::clamp::"),
        count("slice::sweep::"),
    );
    // The clamp cases are about 4 % of the slice trials: within the share.
    assert!(few * 20 < all, "{few} of {all}");
    let command = format!("{} --unsupported slice::clamp::", faulty_backend());
    let ran = run_full("few-unsupported", &command, &["slice::"], &[]);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json.unwrap()["unsupported"], few);
    // The sweep about half of them.
    let command = format!("{} --unsupported slice::sweep::", faulty_backend());
    let ran = run_full("many-unsupported", &command, &["slice::"], &[]);
    assert_eq!(ran.code, Some(1), "{}\n{}", ran.stdout, ran.stderr);
    let share = 100.0 * many as f64 / all as f64;
    assert!(
        ran.stderr.contains(&format!(
            "{many} of {all} trials sent to the backend ({share:.1} %) were answered `unsupported`"
        )),
        "{}",
        ran.stderr
    );
}

/// The exit code and stderr of a run whose backend answers the hello with `hello` and then
/// nothing. One case: a runner that accepted the hello times out on it (the timeout leaves the
/// shell ample time to answer the hello on a loaded machine).
fn run_hello(hello: &str) -> (Option<i32>, String) {
    let backend = format!("read hello; echo '{hello}'; cat >/dev/null");
    let run = runner()
        .args(["--backend", &backend, "--timeout", "10"])
        .arg("slice::axes::axes_first_axis::int8")
        .output()
        .unwrap();
    (
        run.status.code(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

#[test]
fn unknown_names_in_the_hello_are_an_error_listing_the_known_ones() {
    let (code, stderr) = run_hello(
        r#"{"type":"hello","protocol":1,"name":"typo","ops":["slice","slcie"],"dtypes":{"slice":["float32","fp16"]},"targets":["gpu"]}"#,
    );
    assert_eq!(code, Some(2), "{stderr}");
    for expected in [
        "unknown op \"slcie\" in `ops` (known: shuffle, slice, as_strided, scale, reformat) (did you mean `slice`?)",
        "unknown dtype \"fp16\" in `dtypes.slice` (known: bool, int4, int8, uint8, int32, int64, fp8, float16, bfloat16, float32)",
        "unknown target \"gpu\" in `targets` (known: dla)",
    ] {
        assert!(stderr.contains(expected), "{expected}\n{stderr}");
    }
    // An op name as a key of `dtypes` is checked too.
    let (code, stderr) = run_hello(
        r#"{"type":"hello","protocol":1,"name":"typo","ops":["slice"],"dtypes":{"slcie":["float32"]}}"#,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown op \"slcie\" in `dtypes`"),
        "{stderr}"
    );
}

/// A hello with a field of the wrong type (or a string JSON cannot hold) is an error naming
/// the field and the type it should have.
#[test]
fn a_bad_hello_names_the_field_and_the_type() {
    let start = r#"{"type":"hello","protocol":1,"name":"x","ops":["slice"],"#;
    for (rest, expected) in [
        (r#""engine":"onnx"}"#, "field `engine`: invalid type: string \"onnx\", expected an object {\"name\": string, \"version\": string}"),
        (r#""engine":{"name":5}}"#, "field `engine.name`: invalid type: integer `5`, expected a string"),
        (r#""engine":{"name":"e","version":1.2}}"#, "field `engine.version`: invalid type: floating point `1.2`, expected a string"),
        (r#""platform":{"cpu_flags":"avx"}}"#, "field `platform.cpu_flags`: invalid type: string \"avx\", expected a list"),
        (r#""platform":{"engine_flags":[1,2]}}"#, "field `platform.engine_flags[0]`: invalid type: integer `1`, expected a string"),
        (r#""engine":{"name":"\ud800"}}"#, "a line that is not JSON (in field `engine.name`:"),
    ] {
        let (code, stderr) = run_hello(&format!("{start}{rest}"));
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains(expected), "{expected}\n{stderr}");
    }
}

/// Control characters in a hello's strings (ESC, BEL, NUL, a newline) are escaped on the
/// console; a huge `cpu_model` or list of `engine_flags` is bounded in the reports.
#[test]
fn a_hellos_strings_are_escaped_on_the_console_and_bounded_in_reports() {
    let model = "m".repeat(60_000);
    let flags: Vec<String> = (0..5000).map(|k| format!("F{k}")).collect();
    let hello = serde_json::json!({
        "type": "hello", "protocol": 1, "name": "nm\u{1b}[31mRED\u{7}\u{0}\nx",
        "ops": ["shuffle", "slice", "as_strided", "scale", "reformat"],
        "engine": {"name": "eng\u{1b}[2J", "version": "1\n2"},
        "platform": {"cpu_model": model, "engine_flags": flags},
    });
    let command = format!("{} --hello '{hello}'", faulty_backend());
    let ran = run_full(
        "hello-strings",
        &command,
        &["shuffle::seed_examples::"],
        &[],
    );
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    let line = (ran.stdout.lines())
        .find(|l| l.starts_with("backend: "))
        .unwrap_or_else(|| panic!("{}", ran.stdout));
    assert!(
        line.starts_with("backend: nm\\u{1b}[31mRED\\u{7}\\0\\nx (eng\\u{1b}[2J 1\\n2, "),
        "{line}"
    );
    assert!(
        !ran.stdout.contains(['\u{1b}', '\u{7}', '\u{0}']),
        "raw control characters on the console"
    );
    let facts = &ran.json.unwrap()["facts"];
    let shown = facts["cpu_model"].as_str().unwrap();
    assert!(
        shown.len() < 300 && shown.ends_with("(60000 bytes)"),
        "{shown}"
    );
    let listed = facts["engine_flags"].as_array().unwrap();
    assert_eq!(listed.len(), 1025);
    assert_eq!(listed[1024], "… (3976 more)");
}

#[test]
fn unknown_attributes_in_the_hello_are_an_error_listing_the_known_ones() {
    let (code, stderr) = run_hello(
        r#"{"type":"hello","protocol":1,"name":"typo","ops":["slice"],"attributes":{"slice":{"mode":["wrap","reflekt"],"modes":["wrap"]},"reformat":{"format":["CHW5"]},"slcie":{"mode":[]}}}"#,
    );
    assert_eq!(code, Some(2), "{stderr}");
    for expected in [
        "unknown value \"reflekt\" in `attributes.slice.mode` (known: strict_bounds, wrap, clamp, fill, reflect)",
        "unknown attribute \"modes\" in `attributes.slice` (known: mode)",
        "unknown value \"CHW5\" in `attributes.reformat.format` (known: LINEAR, CHW2,",
        "unknown op \"slcie\" in `attributes`",
    ] {
        assert!(stderr.contains(expected), "{expected}\n{stderr}");
    }
}

#[test]
fn the_hello_attributes_exclude_the_cases_using_other_values_and_count_them() {
    // An engine whose slice has no strict_bounds mode: no request that needs it is sent, the
    // round trips that come back through it included.
    let hello = r#"{"type":"hello","protocol":1,"name":"no-strict","ops":["shuffle","slice","as_strided","scale","reformat"],"attributes":{"slice":{"mode":["wrap","clamp","fill","reflect"]}}}"#;
    let command = format!("{} --hello '{hello}'", faulty_backend());
    let scratch = scratch("attributes-dump");
    let dir = scratch.path();
    let dump = dir.join("requests.jsonl");
    let ran = run_full(
        "attributes",
        &command,
        &["slice::", "--dump-requests", dump.to_str().unwrap()],
        &[],
    );
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let requests = std::fs::read_to_string(&dump).unwrap();
    let mut sent = 0;
    for line in requests.lines() {
        let request: serde_json::Value = serde_json::from_str(line).unwrap();
        let mode = request["attrs"]["mode"].as_str().unwrap_or("strict_bounds");
        assert_ne!(mode, "strict_bounds", "sent: {line:.300}");
        sent += 1;
    }
    assert!(sent > 0);
    let json = ran.json.unwrap();
    let by_strict: Vec<&serde_json::Value> = json["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["excluded_by"] == "slice mode=strict_bounds")
        .collect();
    assert!(by_strict.iter().all(|t| t["status"] == "excluded"));
    // A spec case, an error case and a round trip (fill, then strict_bounds on the way back).
    for name in [
        "slice::axes::axes_first_axis::int8",
        "slice::strict_bounds::strict_negative_start",
        "slice::metamorphic::",
    ] {
        assert!(
            by_strict
                .iter()
                .any(|t| t["name"].as_str().unwrap().starts_with(name)),
            "{name} not excluded by strict_bounds"
        );
    }
    let n = by_strict.len();
    assert_eq!(json["excluded_by"]["slice mode=strict_bounds"], n);
    assert_eq!(json["excluded"], n, "only strict_bounds is left out");
    assert!(
        ran.stdout
            .contains(&format!("excluded: {n} by slice mode=strict_bounds")),
        "{}",
        ran.stdout
    );
    assert_eq!(json["failed"], 0);
}

#[test]
fn the_hello_dtypes_filter_every_tensor_and_keep_the_error_cases() {
    // An engine without int8 and fp8 slices: it says so, and rejects them if sent anyway.
    let hello = r#"{"type":"hello","protocol":1,"name":"no-int8","ops":["shuffle","slice","as_strided","scale","reformat"],"dtypes":{"slice":["bool","int4","uint8","int32","int64","float16","bfloat16","float32"]}}"#;
    let command = format!(
        "{} --hello '{hello}' --reject-dtypes int8,fp8",
        faulty_backend()
    );
    let ran = run_full("dtypes", &command, &["slice::"], &[]);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let json = ran.json.unwrap();
    // Its input is fp8 and its fill float32; the case lists no dtypes.
    let (status, message) = trial_status(&json, "slice::fill::fill_converts_float32_to_fp8");
    assert_eq!(status, "excluded", "{message}");
    assert!(message.contains("fp8"), "{message}");
    // An error case in int8 is still sent, and `unsupported_dtype` answers it.
    let (status, message) = trial_status(&json, "slice::axes::axes_out_of_range::int8");
    assert_eq!(status, "passed", "{message}");
    // Every trial has its dtype, and the fill case both of its dtypes.
    let trials = json["trials"].as_array().unwrap();
    let fill = trials
        .iter()
        .find(|t| t["name"] == "slice::fill::fill_converts_float32_to_fp8")
        .unwrap();
    assert_eq!(fill["dtype"], "fp8");
    assert_eq!(fill["dtypes"], serde_json::json!(["fp8", "float32"]));
    let uint8 = trials
        .iter()
        .find(|t| t["name"] == "slice::errors::uint8_is_not_a_slice_type")
        .unwrap();
    assert_eq!(uint8["dtype"], "uint8");
    assert!(trials.iter().all(|t| t["dtype"].is_string()), "{json:?}");
    // The table has a uint8 column with the slice error case in it.
    let table = ran
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("pass/fail"))
        .collect::<Vec<_>>();
    let header: Vec<&str> = table[0].split_whitespace().collect();
    let column = header.iter().position(|h| *h == "uint8").unwrap();
    let slice: Vec<&str> = table
        .iter()
        .find(|l| l.starts_with("slice"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_ne!(slice[column], ".", "{}", table.join("\n"));
    assert!(!header.contains(&"-"), "{}", table.join("\n"));
    // What was dropped is counted, and nothing failed.
    assert_eq!(json["failed"], 0);
    assert!(json["excluded"].as_u64().unwrap() > 0);
    assert!(
        ran.stdout.contains("excluded by the hello"),
        "{}",
        ran.stdout
    );
}

#[test]
fn known_failures_can_name_generated_trials() {
    let names = trial_names();
    let first = |prefix: &str| {
        names
            .iter()
            .find(|n| n.starts_with(prefix))
            .unwrap()
            .clone()
    };
    let (sweep, metamorphic) = (first("shuffle::sweep::"), first("shuffle::metamorphic::"));
    let scratch = scratch("expect-generated");
    let dir = scratch.path();
    let expectations = dir.join("faulty.expect");
    std::fs::write(
        &expectations,
        format!(
            "{sweep} | shuffle.data.bits-unchanged | defect | it flips a bit\n{metamorphic} | shuffle.data.bits-unchanged | defect | it crashes\n"
        ),
    )
    .unwrap();
    let command = format!("{} --lie {sweep} --crash {metamorphic}", faulty_backend());
    let ran = run_full(
        "expect-generated-run",
        &command,
        &["--expectations", expectations.to_str().unwrap()],
        &[],
    );
    let json = ran.json.unwrap();
    assert_eq!(trial_status(&json, &sweep).0, "known_failure");
    assert_eq!(trial_status(&json, &metamorphic).0, "known_failure");
    assert_eq!(json["failed"], 0, "{}", ran.stdout);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
}

#[test]
fn an_implementation_defined_divergence_has_its_own_status() {
    // Expects -8 first; the backend answers 8.
    let trial = "scale::special_values::negative_base_integer_power::float32";
    let command = format!("{} --flip-sign {trial}", faulty_backend());
    let ran = run_full("impl-defined", &command, &["scale::"], &[]);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let json = ran.json.unwrap();
    let (status, message) = trial_status(&json, trial);
    assert_eq!(status, "implementation_defined", "{message}");
    assert!(message.contains("differs from the reference"), "{message}");
    assert_eq!(json["implementation_defined"], 1);
    assert_eq!(json["unsupported"], 0);
}

/// A string no other process has in its command line.
fn marker(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("opspec-marker-{name}-{}-{nanos}", std::process::id())
}

/// The live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

/// Fails when a process with `marker` is still alive a moment after its backend was stopped
/// (a killed process takes a few milliseconds to disappear, longer on a loaded machine).
fn assert_no_process_with(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_with(marker);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes left behind: {left:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The cases of the repository's spec files.
fn spec_cases() -> Vec<Case> {
    let specs = opspec_runner::Config::from_env().unwrap().specs;
    opspec_spec::load_dirs(&specs, None, opspec::tensor::Limits::DEFAULT).cases
}

/// The first `count` cases that expect outputs, in trial-name order.
fn output_cases(count: usize) -> Vec<Case> {
    let mut cases: Vec<Case> = spec_cases()
        .into_iter()
        .filter(|c| matches!(c.expect, opspec_spec::Expectation::Outputs(_)))
        .collect();
    cases.sort_by_key(Case::trial_name);
    cases.truncate(count);
    cases
}

/// Starts the faulty backend with `flags` in process, logging into `dir`.
fn start_faulty(flags: &str, timeout: f64, dir: &Path) -> Result<ProcessBackend, StartError> {
    ProcessBackend::start(
        &format!("{} {flags}", faulty_backend()),
        Duration::from_secs_f64(timeout),
        dir.join("backend.log"),
    )
}

fn assert_backend_and_child(marker: &str) {
    // The backend answers its hello without waiting for its child to be running, so on a
    // loaded machine the child may appear a moment later: poll to a deadline.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let found = processes_with(marker);
        if found.len() == 2 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "not the backend and its child: {found:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The timeout of the tests that wait for a hang: it is spent on every such run, yet leaves a
/// loaded machine ample time to start the backend and answer the hello (tens of
/// milliseconds at a load of 20 on 2 cores).
const HANG_TIMEOUT: f64 = 2.0;

/// The timeout of the tests that wait for anything but a hang: never reached when they pass.
const LONG_TIMEOUT: f64 = 60.0;

/// Fails when 30 s or more passed since `started`: half of [`LONG_TIMEOUT`], so an answer
/// within it is no timeout, and far below the hour a faulty backend sleeps, so the runner
/// did not wait for it. A loaded machine takes seconds where an idle one takes milliseconds:
/// the bound says which of these happened, not how fast.
fn assert_quick(started: Instant, context: &str) {
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}: {context}");
}

#[test]
fn a_hung_backend_and_its_child_leave_no_process() {
    let scratch = scratch("hung-child");
    let dir = scratch.path();
    let marker = marker("hung-child");
    let case = &output_cases(1)[0];
    let id = case.trial_name();
    let backend = start_faulty(
        &format!("--child --marker {marker} --hang {id}"),
        HANG_TIMEOUT,
        dir,
    )
    .unwrap();
    assert_backend_and_child(&marker);
    let error = backend.run(case).unwrap_err().to_string();
    assert!(
        error.contains(&format!("did not answer within {HANG_TIMEOUT} s")),
        "{error}"
    );
    // The hung session is stopped with its whole process group, child included.
    assert_no_process_with(&marker);
    drop(backend);
}

#[test]
fn a_backend_that_ignores_the_end_of_its_input_is_stopped_with_its_child() {
    let scratch = scratch("ignore-eof");
    let dir = scratch.path();
    let marker = marker("ignore-eof");
    let backend = start_faulty(
        &format!("--child --ignore-eof --marker {marker}"),
        HANG_TIMEOUT,
        dir,
    )
    .unwrap();
    let case = &output_cases(1)[0];
    assert!(backend.run(case).is_ok());
    assert_backend_and_child(&marker);
    let started = Instant::now();
    drop(backend);
    assert_quick(started, "");
    assert_no_process_with(&marker);
}

#[test]
fn a_failed_handshake_stops_the_backend() {
    let scratch = scratch("hang-hello");
    let dir = scratch.path();
    let marker = marker("hang-hello");
    let started = Instant::now();
    let error = start_faulty(
        &format!("--child --hang-hello --marker {marker}"),
        HANG_TIMEOUT,
        dir,
    )
    .err()
    .unwrap();
    assert!(matches!(error, StartError::Handshake(_)), "{error:?}");
    let error = error.to_string();
    assert!(error.contains("failed the handshake"), "{error}");
    assert!(
        error.contains("hanging on the hello"),
        "stderr tail missing: {error}"
    );
    assert_quick(started, "");
    assert_no_process_with(&marker);
}

/// The error of the first output case on the faulty backend with `flags` (given the case's
/// id), with [`LONG_TIMEOUT`]: it must come well before it, and not as a hang. Leaves no
/// process with `marker`.
fn prompt_error(name: &str, marker: &str, flags: impl Fn(&str) -> String) -> String {
    let scratch = scratch(name);
    let dir = scratch.path();
    let case = &output_cases(1)[0];
    let backend = start_faulty(&flags(&case.trial_name()), LONG_TIMEOUT, dir).unwrap();
    let started = Instant::now();
    let error = backend.run(case).unwrap_err().to_string();
    assert_quick(started, &error);
    assert!(!error.contains("hung"), "{error}");
    drop(backend);
    assert_no_process_with(marker);
    error
}

#[test]
fn a_backend_that_exits_while_its_child_holds_stdout_is_reported_at_once() {
    let marker = marker("exit-child");
    let error = prompt_error("exit-child", &marker, |id| {
        format!("--child --marker {marker} --crash {id}")
    });
    assert!(error.contains("exited (exit status: 3)"), "{error}");
    assert!(
        error.contains("faulty backend: crashing on"),
        "stderr tail missing: {error}"
    );
}

#[test]
fn a_backend_that_closes_its_output_is_reported_at_once() {
    let marker = marker("close-output");
    let error = prompt_error("close-output", &marker, |id| {
        format!("--close-output {id} --marker {marker}")
    });
    assert!(error.contains("closed its output"), "{error}");
}

#[test]
fn a_command_that_is_not_found_shows_the_shell_message() {
    let scratch = scratch("not-found");
    let dir = scratch.path();
    let error = ProcessBackend::start(
        "opspec-no-such-backend --flag",
        Duration::from_secs_f64(LONG_TIMEOUT),
        dir.join("backend.log"),
    )
    .err()
    .unwrap();
    assert!(matches!(error, StartError::Handshake(_)), "{error:?}");
    let error = error.to_string();
    assert!(error.contains("exit status: 127"), "{error}");
    assert!(
        error.contains("opspec-no-such-backend: not found"),
        "the shell's message is missing: {error}"
    );
}

#[test]
fn the_backend_log_starts_empty_each_run_and_is_capped() {
    let scratch = scratch("log");
    let dir = scratch.path();
    let log = dir.join("backend.log");
    std::fs::write(&log, "stderr of an earlier run\n").unwrap();
    let flood = opspec_runner::backend::process::BACKEND_LOG_LIMIT + (1 << 20);
    let backend = start_faulty(&format!("--flood {flood}"), LONG_TIMEOUT, dir).unwrap();
    drop(backend);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("earlier run"),
        "the log was not started afresh"
    );
    assert!(
        (text.len() as u64) < opspec_runner::backend::process::BACKEND_LOG_LIMIT + 4096,
        "{} bytes",
        text.len()
    );
    assert!(
        text.contains("discarded"),
        "no note of the cut: {}",
        &text[text.len() - 300..]
    );
}

/// A big request (an identity shuffle of 256 Ki int8 elements, 350 KiB on the wire).
fn big_case() -> Case {
    let mut case = opspec_generate::new_case(
        opspec::Op::Shuffle,
        "big",
        Path::new("big"),
        "big_request",
        None,
    );
    let elements = 1 << 18;
    case.invocation.inputs[0] = Some(opspec::Tensor::from_bits(
        opspec::DType::Int8,
        vec![elements],
        vec![1; elements],
    ));
    case
}

#[test]
fn a_backend_that_stops_reading_fails_the_case_within_the_timeout() {
    let scratch = scratch("deaf");
    let dir = scratch.path();
    let marker = marker("deaf");
    let backend = start_faulty(&format!("--deaf --marker {marker}"), HANG_TIMEOUT, dir).unwrap();
    // Before the write was covered by the timeout, this call never returned: run it aside.
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = backend
            .run(&big_case())
            .map(|_| ())
            .map_err(|e| e.to_string());
        drop(backend);
        let _ = sender.send(result);
    });
    let error = receiver
        .recv_timeout(Duration::from_secs_f64(LONG_TIMEOUT))
        .expect("the runner hangs writing to a backend that stopped reading")
        .unwrap_err();
    assert!(
        error.contains(&format!("did not read the request within {HANG_TIMEOUT} s")),
        "{error}"
    );
    assert_no_process_with(&marker);
}

/// Runs `runner` with `args`, its stdout into `dir`: whether it succeeded, its stdout and its
/// peak resident memory in bytes.
#[allow(clippy::zombie_processes)] // reaped by wait4, which gives its resource usage
fn run_measured(args: &[&str], dir: &Path) -> (bool, String, u64) {
    let stdout_path = dir.join("stdout");
    let child = runner()
        .args(args)
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; `status` and `usage` are valid for writes.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let success = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let stdout = std::fs::read_to_string(stdout_path).unwrap();
    (success, stdout, usage.ru_maxrss as u64 * 1024)
}

#[test]
fn an_endless_reply_line_fails_its_case_with_bounded_memory() {
    let scratch = scratch("endless");
    let dir = scratch.path();
    let marker = marker("endless");
    let case = &output_cases(1)[0];
    let id = case.trial_name();
    let command = format!("{} --endless {id} --marker {marker}", faulty_backend());
    let report = dir.join("report.json");
    // The limit, not this timeout, must end the case (the message says which did).
    let (success, stdout, peak) = run_measured(
        &[
            "--backend",
            &command,
            "--timeout",
            &LONG_TIMEOUT.to_string(),
            "--backend-log",
            dir.join("backend.log").to_str().unwrap(),
            "--report-json",
            report.to_str().unwrap(),
            "--exact",
            &id,
        ],
        dir,
    );
    assert!(!success, "{stdout}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let message = json["trials"][0]["message"].as_str().unwrap();
    assert!(message.contains("reply line is longer than"), "{message}");
    let limit = opspec_runner::backend::process::MIN_REPLY_LINE_LIMIT as u64;
    assert!(peak < 3 * limit + (128 << 20), "peak RSS {peak} bytes");
    assert_no_process_with(&marker);
}

#[test]
fn after_repeated_failed_starts_the_remaining_cases_are_not_run() {
    let scratch = scratch("failed-starts");
    let dir = scratch.path();
    let starts = dir.join("starts");
    let names = trial_names();
    let selected: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("shuffle::seed_examples::"))
        .collect();
    assert!(selected.len() > 6, "{selected:?}");
    // The first start passes its hello and crashes on the first case; every restart hangs on
    // its hello.
    let command = format!(
        "{} --starts {} --hang-hello-after 1 --crash {}",
        faulty_backend(),
        starts.display(),
        selected[0]
    );
    let (success, stdout, json) = run_with_report(
        "failed-starts-run",
        &command,
        &[
            "--timeout",
            &HANG_TIMEOUT.to_string(),
            "--hello-timeout",
            &HANG_TIMEOUT.to_string(),
            "--test-threads",
            "1",
            "shuffle::seed_examples::",
        ],
    );
    assert!(!success, "a run with cases not run must fail:\n{stdout}");
    let limit = opspec_runner::backend::process::MAX_FAILED_STARTS;
    let starts_made = std::fs::read_to_string(&starts).unwrap().lines().count();
    // No start after the last failed one: the cases not run cost no timeout.
    assert_eq!(starts_made, 1 + limit as usize, "{stdout}");
    let trials = json["trials"].as_array().unwrap();
    let with_status = |status: &str| trials.iter().filter(|t| t["status"] == status).count();
    // Only the case that crashed failed: a case whose start failed was never sent, so it is
    // not failed but not run.
    assert_eq!(with_status("failed"), 1, "{stdout}");
    assert_eq!(with_status("not_run"), selected.len() - 1, "{stdout}");
    assert_eq!(json["not_run"], selected.len() - 1);
    for trial in trials.iter().filter(|t| t["status"] == "not_run") {
        let message = trial["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("failed to start {limit} times in a row")),
            "{message}"
        );
    }
}

#[test]
fn fail_fast_sends_nothing_after_the_first_failure() {
    let names = trial_names();
    let selected: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("shuffle::seed_examples::cookbook_case_zero::"))
        .collect();
    assert!(selected.len() > 4, "{selected:?}");
    let lie = selected[2];
    let command = format!("{} --lie {lie}", faulty_backend());
    for (flags, env) in [
        (&["--fail-fast"][..], &[][..]),
        (&[][..], &[("OPSPEC_FAIL_FAST", "1")][..]),
    ] {
        let scratch = scratch("fail-fast");
        let dump = scratch.path().join("requests.jsonl");
        let mut args = vec!["--test-threads", "1", "--dump-requests"];
        args.push(dump.to_str().unwrap());
        args.extend(flags);
        args.push("shuffle::seed_examples::cookbook_case_zero::");
        let ran = run_full("fail-fast-run", &command, &args, env);
        // libtest's exit status for failed trials.
        assert_eq!(ran.code, Some(101), "{}\n{}", ran.stdout, ran.stderr);
        let json = ran.json.unwrap();
        for (i, name) in selected.iter().enumerate() {
            let (status, message) = trial_status(&json, name);
            let expected = match i {
                0 | 1 => "passed",
                2 => "failed",
                _ => "not_run",
            };
            assert_eq!(status, expected, "{name}: {message}");
            if i > 2 {
                assert_eq!(
                    message,
                    format!("not run: --fail-fast stopped the run at the failure of {lie}")
                );
            }
        }
        assert_eq!(json["not_run"], selected.len() - 3);
        // libtest counts the trials not run as ignored, so the one failure is the only one.
        assert!(
            ran.stdout
                .contains(&format!("1 failed; {} ignored", selected.len() - 3)),
            "{}",
            ran.stdout
        );
        // Nothing was sent after the failing trial.
        let sent = std::fs::read_to_string(&dump).unwrap();
        let ids: Vec<String> = sent
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
            .collect();
        assert_eq!(ids.len(), 3, "{sent}");
        assert!(ids[2].contains(lie.as_str()), "{ids:?}");
    }
}

/// Kills every process whose command line holds `marker` when dropped, so that a test that
/// fails because one survived leaves none behind either.
struct Reaper(String);

impl Drop for Reaper {
    fn drop(&mut self) {
        for line in processes_with(&self.0) {
            if let Some(pid) = line.split(':').next().and_then(|p| p.parse::<i32>().ok()) {
                // SAFETY: kill(2) with a pid and a signal number only.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

#[test]
fn a_setsid_grandchild_is_gone_after_the_run_and_after_replay() {
    let marker = marker("setsid");
    let _reaper = Reaper(marker.clone());
    let trial = output_cases(1)[0].trial_name();
    let command = format!("{} --setsid-child --marker {marker}", faulty_backend());
    // In process: dropping the backend stops the grandchild too.
    let scratch = scratch("setsid");
    let backend = start_faulty(
        &format!("--setsid-child --marker {marker}"),
        LONG_TIMEOUT,
        scratch.path(),
    )
    .unwrap();
    assert!(backend.run(&output_cases(1)[0]).is_ok());
    drop(backend);
    assert_no_process_with(&marker);
    // A whole run.
    let ran = run_full("setsid-run", &command, &["--exact", &trial], &[]);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    assert_no_process_with(&marker);
    // `runner replay`.
    let replay = runner()
        .args(["replay", &trial, "--backend", &command])
        .arg("--backend-log")
        .arg(scratch.path().join("replay.log"))
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    assert_no_process_with(&marker);
}

/// Runs the shuffle seed examples one at a time through the faulty backend with `flag` on the
/// one at `position` (from the end when negative): that one fails, saying it was answered
/// twice, and every other passes.
fn doubled_reply_blames(flag: &str, position: isize) -> String {
    let names = trial_names();
    let selected: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("shuffle::seed_examples::cookbook_case_zero::"))
        .collect();
    assert!(selected.len() > 3, "{selected:?}");
    let guilty = selected[position.rem_euclid(selected.len() as isize) as usize];
    let command = format!("{} {flag} {guilty}", faulty_backend());
    let ran = run_full(
        "doubled",
        &command,
        &[
            "--test-threads",
            "1",
            "shuffle::seed_examples::cookbook_case_zero::",
        ],
        &[],
    );
    let json = ran
        .json
        .unwrap_or_else(|| panic!("no report: {}", ran.stderr));
    for name in &selected {
        let (status, message) = trial_status(&json, name);
        if *name == guilty {
            assert_eq!(status, "failed", "{name}: {message}");
            assert!(message.contains("more than one reply"), "{message}");
        } else {
            assert_eq!(status, "passed", "{name} is innocent: {message}");
        }
    }
    assert_ne!(ran.code, Some(0), "{}", ran.stdout);
    ran.stderr
}

#[test]
fn a_doubled_reply_fails_its_own_case_not_the_next() {
    doubled_reply_blames("--twice", 1);
}

#[test]
fn a_late_second_reply_fails_its_own_case_not_the_next() {
    doubled_reply_blames("--twice-late", 1);
}

/// The second reply to the last case comes only as the backend ends: that case fails after
/// its verdict, and the run says so.
#[test]
fn a_second_reply_to_the_last_case_fails_it_at_the_end() {
    let stderr = doubled_reply_blames("--twice-late", -1);
    assert!(stderr.contains("failed after its verdict"), "{stderr}");
}

/// Kills, when dropped, every process whose command line holds its marker: a test that fails
/// leaves none behind either.
struct KillOnDrop(String);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for line in processes_with(&self.0) {
            if let Some(Ok(pid)) = line.split(':').next().map(str::parse::<i32>) {
                // SAFETY: kill(2) of one process found by its command line.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// SIGKILL to a `--jobs 2` run whose backend copies each started a child that left for a
/// session of its own (`setsid`) and ignores SIGTERM: no process of the run is left. The
/// backends get their parent-death signal; the grandchildren, out of reach of both, are killed
/// by the runner's guard process once the runner is gone.
#[test]
fn a_runner_killed_outright_leaves_no_setsid_grandchild() {
    let scratch = scratch("sigkill-setsid");
    let dir = scratch.path();
    let marker = marker("sigkill-setsid");
    let _cleanup = KillOnDrop(marker.clone());
    let backend = format!(
        "{} --setsid-child --ignore-term --marker {marker} --sleep-ms 3600000",
        faulty_backend()
    );
    let dump = dir.join("requests.jsonl");
    let mut runner = runner()
        .args(["--backend", &backend, "--jobs", "2"])
        .args(["--timeout", "3600", "shuffle::seed_examples::"])
        .arg("--dump-requests")
        .arg(&dump)
        .arg("--backend-log")
        .arg(dir.join("backend.log"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&dump).map_or(0, |t| t.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "no request sent");
        std::thread::sleep(Duration::from_millis(20));
    }
    let runner_line = format!("{}: ", runner.id());
    let others = || {
        let mut found = processes_with(&marker);
        found.retain(|line| !line.starts_with(&runner_line));
        found
    };
    // Two backends and their two grandchildren.
    assert_eq!(others().len(), 4, "{:?}", others());
    runner.kill().unwrap();
    runner.wait().unwrap();
    assert_no_process_with(&marker);
}

/// SIGINT or SIGTERM to the runner while every backend process (each with a child) works on a
/// case, with one process, with four, and with two taking batches of 4: the runner stops every
/// backend process as at the end of a run, writes the report of what it has, marked
/// interrupted, and exits 130 or 143.
#[test]
fn a_signal_mid_run_stops_every_backend_and_writes_an_interrupted_report() {
    for (signal, name, code) in [
        (libc::SIGINT, "SIGINT", 130),
        (libc::SIGTERM, "SIGTERM", 143),
    ] {
        for (jobs, batch) in [(1usize, ""), (4, ""), (2, " --batch 4")] {
            let scratch = scratch("signal");
            let dir = scratch.path();
            let marker = marker(&format!("signal-{jobs}"));
            let _cleanup = KillOnDrop(marker.clone());
            let backend = format!(
                "{} --child --marker {marker} --sleep-ms 3600000{batch}",
                faulty_backend()
            );
            let (report, dump) = (dir.join("report.json"), dir.join("requests.jsonl"));
            let mut runner = runner()
                .args(["--backend", &backend, "--jobs", &jobs.to_string()])
                .args(["--timeout", "3600", "shuffle::seed_examples::"])
                .arg("--report-json")
                .arg(&report)
                .arg("--dump-requests")
                .arg(&dump)
                .arg("--backend-log")
                .arg(dir.join("backend.log"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            // Mid-run: each copy has a request it works on for an hour.
            let deadline = Instant::now() + Duration::from_secs(120);
            let sent = || std::fs::read_to_string(&dump).map_or(0, |t| t.lines().count());
            while sent() < jobs {
                assert!(
                    Instant::now() < deadline,
                    "{name}, --jobs {jobs}: {} requests sent",
                    sent()
                );
                assert!(runner.try_wait().unwrap().is_none(), "the run ended early");
                std::thread::sleep(Duration::from_millis(20));
            }
            // SAFETY: kill(2) of the runner this test started.
            unsafe { libc::kill(runner.id() as i32, signal) };
            let deadline = Instant::now() + Duration::from_secs(60);
            let status = loop {
                if let Some(status) = runner.try_wait().unwrap() {
                    break status;
                }
                if Instant::now() >= deadline {
                    let _ = runner.kill();
                    let _ = runner.wait();
                    panic!("{name}, --jobs {jobs}: the runner did not end");
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            assert_eq!(
                status.code(),
                Some(code),
                "{name}, --jobs {jobs}: {status:?}"
            );
            assert_no_process_with(&marker);
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
            let problems = json["problems"].to_string();
            assert!(
                problems.contains(&format!("interrupted by {name}")),
                "{name}, --jobs {jobs}: {problems}"
            );
            assert!(json["not_run"].as_u64().unwrap() > 0, "{json}");
        }
    }
}

/// SIGKILL, which nothing catches, to the runner mid-run: its backend processes get their
/// parent-death signal and end too.
#[test]
fn a_runner_killed_outright_leaves_no_backend_process() {
    let scratch = scratch("sigkill");
    let dir = scratch.path();
    let marker = marker("sigkill");
    let _cleanup = KillOnDrop(marker.clone());
    let backend = format!("{} --marker {marker} --sleep-ms 3600000", faulty_backend());
    let dump = dir.join("requests.jsonl");
    let mut runner = runner()
        .args(["--backend", &backend, "--jobs", "2"])
        .args(["--timeout", "3600", "shuffle::seed_examples::"])
        .arg("--dump-requests")
        .arg(&dump)
        .arg("--backend-log")
        .arg(dir.join("backend.log"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::read_to_string(&dump).map_or(0, |t| t.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "no request sent");
        std::thread::sleep(Duration::from_millis(20));
    }
    let runner_line = format!("{}: ", runner.id());
    let backends = || {
        let mut found = processes_with(&marker);
        found.retain(|line| !line.starts_with(&runner_line));
        found
    };
    assert_eq!(backends().len(), 2, "{:?}", backends());
    runner.kill().unwrap();
    runner.wait().unwrap();
    assert_no_process_with(&marker);
}
