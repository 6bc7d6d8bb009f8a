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
            "# known failures of the faulty backend\n{lie}: it flips a bit\n{passing}: wrongly listed\nno::such::case*: matches nothing\n"
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

/// What a run of the runner gave: exit code, stdout, stderr, and the JSON report if written.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Option<serde_json::Value>,
}

/// Runs the runner through `backend` with extra `args` and environment `env`.
fn run_full(name: &str, backend: &str, args: &[&str], env: &[(&str, &str)]) -> Ran {
    let dir = scratch(name);
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
    std::fs::remove_dir_all(dir).unwrap();
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
    let command = format!("{} --unsupported ''", faulty_backend().display());
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
    let command = format!(
        "{} --unsupported slice::clamp::",
        faulty_backend().display()
    );
    let ran = run_full("few-unsupported", &command, &["slice::"], &[]);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    assert_eq!(ran.json.unwrap()["unsupported"], few);
    // The sweep about half of them.
    let command = format!(
        "{} --unsupported slice::sweep::",
        faulty_backend().display()
    );
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
/// nothing. A short timeout and one case: a runner that accepted the hello times out on it.
fn run_hello(hello: &str) -> (Option<i32>, String) {
    let backend = format!("read hello; echo '{hello}'; cat >/dev/null");
    let run = runner()
        .args(["--backend", &backend, "--timeout", "1"])
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
        "unknown op \"slcie\" in `ops` (known: shuffle, slice, as_strided, scale, reformat)",
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

#[test]
fn the_hello_dtypes_filter_every_tensor_and_keep_the_error_cases() {
    // An engine without int8 and fp8 slices: it says so, and rejects them if sent anyway.
    let hello = r#"{"type":"hello","protocol":1,"name":"no-int8","ops":["shuffle","slice","as_strided","scale","reformat"],"dtypes":{"slice":["bool","int4","uint8","int32","int64","float16","bfloat16","float32"]}}"#;
    let command = format!(
        "{} --hello '{hello}' --reject-dtypes int8,fp8",
        faulty_backend().display()
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
    let dir = scratch("expect-generated");
    let expectations = dir.join("faulty.expect");
    std::fs::write(
        &expectations,
        format!("{sweep}: it flips a bit\n{metamorphic}: it crashes\n"),
    )
    .unwrap();
    let command = format!(
        "{} --lie {sweep} --crash {metamorphic}",
        faulty_backend().display()
    );
    let ran = run_full(
        "expect-generated-run",
        &command,
        &["--expectations", expectations.to_str().unwrap()],
        &[],
    );
    std::fs::remove_dir_all(dir).unwrap();
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
    let command = format!("{} --flip-sign {trial}", faulty_backend().display());
    let ran = run_full("impl-defined", &command, &["scale::"], &[]);
    assert_eq!(ran.code, Some(0), "{}\n{}", ran.stdout, ran.stderr);
    let json = ran.json.unwrap();
    let (status, message) = trial_status(&json, trial);
    assert_eq!(status, "implementation_defined", "{message}");
    assert!(message.contains("differs from the reference"), "{message}");
    assert_eq!(json["implementation_defined"], 1);
    assert_eq!(json["unsupported"], 0);
}
