//! Offline cases (docs/protocol.md, "Offline cases"): `runner export --cases DIR` writes the
//! cases as files, a harness that reads only those files answers them
//! (`scripts/audits/offline_answer.py`), and `runner judge DIR` makes of the answers the run a live
//! backend makes: the same JSON report trial for trial, the same JUnit file and exit code, known
//! failures and their conditions included; a wrong answer fails exactly its trial, and a missing
//! or malformed answer fails its trial naming the file and the field.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("opspec-offline-")
        .tempdir()
        .unwrap()
}

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    command.current_dir(repository());
    for variable in [
        "OPSPEC_BACKEND",
        "OPSPEC_ANSWERS",
        "OPSPEC_EXPECTATIONS",
        "OPSPEC_ALLOW_SKIPS",
    ] {
        command.env_remove(variable);
    }
    command
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn export(dir: &Path, args: &[&str]) {
    let output = runner()
        .args(["export", "--cases"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
}

/// Answers the cases of `dir` through `backend` with scripts/audits/offline_answer.py, wrong on the
/// cases `wrong` names.
fn answer(dir: &Path, backend: &str, wrong: &[&str]) {
    let mut command = Command::new("python3");
    command
        .current_dir(repository())
        .arg("scripts/audits/offline_answer.py")
        .arg(dir)
        .args(["--backend", backend]);
    for id in wrong {
        command.args(["--wrong", id]);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A run's exit code, console and reports (JSON, JUnit), with `args` and the report flags.
fn run(dir: &Path, label: &str, args: &[&str]) -> (Option<i32>, String, PathBuf, String) {
    let report = dir.join(format!("{label}.json"));
    let junit = dir.join(format!("{label}.xml"));
    let output = runner()
        .args(args)
        .arg("--report-json")
        .arg(&report)
        .arg("--junit")
        .arg(&junit)
        .arg("--backend-log")
        .arg(dir.join(format!("{label}.log")))
        .output()
        .unwrap();
    let junit = std::fs::read_to_string(&junit).unwrap_or_default();
    (output.status.code(), text(&output), report, junit)
}

/// A JUnit file without its times and with the replay commands' flags (which name how the
/// answers were had: `--backend CMD` or `--answers DIR`) left out.
fn comparable_junit(junit: &str, flags: &str) -> String {
    let mut out = String::new();
    for piece in junit.replace(flags, "").split(" time=\"") {
        match out.is_empty() {
            true => out.push_str(piece),
            false => out.push_str(piece.split_once('"').map_or(piece, |(_, rest)| rest)),
        }
        out.push('|');
    }
    out
}

/// The flags after the trial name in a report's first replay command.
fn replay_flags(report: &serde_json::Value) -> String {
    let trial = &report["trials"][0];
    let name = trial["name"].as_str().unwrap();
    let replay = trial["replay"].as_str().unwrap();
    replay.split_once(name).unwrap().1.to_owned()
}

/// scripts/audits/same_reports.py `pair`, leaving out what names how the answers were had.
fn differences(live: &Path, judged: &Path) -> String {
    let output = Command::new("python3")
        .current_dir(repository())
        .args(["scripts/audits/same_reports.py", "pair"])
        .arg(live)
        .arg(judged)
        .args(["--except", "replay", "--except", "run.backend_command"])
        .output()
        .unwrap();
    let all = text(&output);
    assert!(all.trim_end().ends_with(", 0 differences"), "{all}");
    assert!(output.status.success(), "{all}");
    all
}

#[test]
fn the_judge_of_offline_answers_makes_the_live_runs_report() {
    let scratch = scratch();
    let dir = scratch.path().join("cases");
    // A part of the whole suite: every op, spec and sweep cases, round trips, error cases.
    let part = ["--partition", "1/4"];
    export(&dir, &part);
    let index = json(&dir.join("index.json"));
    let cases = index["cases"].as_array().unwrap();
    let ops: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c["op"].as_str().unwrap()).collect();
    assert_eq!(ops.len(), 5, "{ops:?}");
    assert!(!index["left_out"].as_array().unwrap().is_empty());
    assert!(cases
        .iter()
        .any(|c| c["id"].as_str().unwrap().contains("::sweep::")));
    // The case answered wrong: a float32 slice case whose output has elements.
    let wrong = (cases.iter())
        .filter(|c| {
            let sizes = c["attrs"]["size"].as_array();
            sizes.is_some_and(|s| s.iter().all(|n| n.as_i64() > Some(0)))
                && c["attrs"].get("axes").is_none()
        })
        .map(|c| c["id"].as_str().unwrap())
        .find(|id| {
            id.starts_with("slice::") && !id.contains("::sweep::") && id.ends_with("::float32")
        })
        .expect("a float32 slice case in the part");
    let faulty = fixtures::faulty_backend();
    answer(&dir, &faulty, &[wrong]);
    // Nothing in the folder says what a case expects.
    let written = std::fs::read_to_string(dir.join("index.json")).unwrap();
    for word in ["expect", "golden", "\"error\"", "kind"] {
        assert!(!written.contains(word), "{word} in the index");
    }

    // The live run: the same backend, wrong on the same case the same way (a bit flipped).
    let live_backend = format!("{faulty} --lie {wrong}");
    let answers = dir.to_str().unwrap();
    let expectations = scratch.path().join("known-failures.txt");
    let known = ["--expectations", expectations.to_str().unwrap()];
    for (label, extra) in [("plain", &[][..]), ("known", &known[..])] {
        let mut live_args = vec!["--backend", &live_backend, "--skip", "::metamorphic::"];
        live_args.extend(part);
        live_args.extend(extra);
        let mut judge_args = vec!["judge", answers, "--skip", "::metamorphic::"];
        judge_args.extend(part);
        judge_args.extend(extra);
        let (live_code, live_text, live, live_junit) =
            run(scratch.path(), &format!("{label}-live"), &live_args);
        let (judged_code, judged_text, judged, judged_junit) =
            run(scratch.path(), &format!("{label}-judged"), &judge_args);
        assert_eq!(live_code, judged_code, "{live_text}\n{judged_text}");
        differences(&live, &judged);
        let (live, judged) = (json(&live), json(&judged));
        assert_eq!(
            comparable_junit(&live_junit, &replay_flags(&live)),
            comparable_junit(&judged_junit, &replay_flags(&judged)),
        );
        assert_eq!(replay_flags(&judged), format!(" --answers {answers}"));
        let not_passed: Vec<(&str, &str)> = (judged["trials"].as_array().unwrap().iter())
            .filter(|t| t["status"] != "passed")
            .map(|t| (t["name"].as_str().unwrap(), t["status"].as_str().unwrap()))
            .collect();
        match label {
            "plain" => {
                assert_eq!(judged_code, Some(101), "{judged_text}");
                assert_eq!(not_passed, [(wrong, "failed")], "{judged_text}");
                let trials = judged["trials"].as_array().unwrap();
                let trial = trials.iter().find(|t| t["name"] == wrong).unwrap();
                assert!(
                    trial["message"].as_str().unwrap().contains(" differ"),
                    "{trial}"
                );
                // Known on this machine (the facts the harness's hello gives), and an entry
                // whose condition holds nowhere here.
                let clause = trial["clauses"][0].as_str().unwrap();
                std::fs::write(
                    &expectations,
                    format!(
                        "{wrong} | {clause} | defect | one bit off | if arch == {} and os == {}\n\
                         clause | slice.wrap.modulo | semantics | not here | if os == plan9\n",
                        std::env::consts::ARCH,
                        std::env::consts::OS
                    ),
                )
                .unwrap();
            }
            _ => {
                assert_eq!(judged_code, Some(0), "{judged_text}");
                assert_eq!(not_passed, [(wrong, "known_failure")], "{judged_text}");
                let entries = judged["expectation_entries"].as_array().unwrap();
                assert_eq!(entries[0]["held"], true);
                assert_eq!(entries[1]["held"], false);
            }
        }
    }

    // Without the skip, the round trips the export left out are counted excluded, quietly.
    let (code, console, judged, _) = run(
        scratch.path(),
        "all",
        &["judge", answers, "--partition", "1/4", "-q"],
    );
    assert_eq!(code, Some(101), "{console}");
    let left_out = index["left_out"].as_array().unwrap().len();
    assert!(
        console.contains(&format!("excluded: {left_out} by offline round trip")),
        "{console}"
    );
    assert!(
        !console.contains("warning: the hello's declaration `offline"),
        "{console}"
    );
    let judged = json(&judged);
    assert_eq!(judged["excluded_by"]["offline round trip"], left_out);
}

/// docs/protocol.md's worked example is what the export writes, and judged as it says.
#[test]
fn the_documented_example_holds() {
    let docs = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    let section = docs.split("### Offline cases").nth(1).unwrap();
    let blocks: Vec<&str> = (section.split("```json\n").skip(1))
        .map(|block| block.split("```").next().unwrap().trim())
        .collect();
    let [line, reply, hello, ..] = blocks[..] else {
        panic!("three JSON blocks in the section: {blocks:?}");
    };
    let scratch = scratch();
    let dir = scratch.path().join("cases");
    export(&dir, &["--exact", "slice::wrap::wrap_runs_past_end::int8"]);
    let index = std::fs::read_to_string(dir.join("index.json")).unwrap();
    assert!(index.contains(&format!("\n    {line}\n")), "{index}");
    assert_eq!(
        std::fs::read(dir.join("cases/00001.in0.bin")).unwrap(),
        [5, 6, 7]
    );
    std::fs::write(dir.join("answers/00001.out0.bin"), [7, 5, 6, 7, 5]).unwrap();
    std::fs::write(dir.join("answers/00001.json"), reply).unwrap();
    std::fs::write(dir.join("answers/hello.json"), hello).unwrap();
    let report = scratch.path().join("report.json");
    let output = runner()
        .args(["judge"])
        .arg(&dir)
        .args([
            "--exact",
            "slice::wrap::wrap_runs_past_end::int8",
            "--report-json",
        ])
        .arg(&report)
        .output()
        .unwrap();
    let all = text(&output);
    assert_eq!(output.status.code(), Some(0), "{all}");
    assert!(
        all.contains("test [case] slice::wrap::wrap_runs_past_end::int8 ... ok"),
        "{all}"
    );
    let report = json(&report);
    assert_eq!(report["backend"], "my-npu");
    assert_eq!(
        report["facts"],
        serde_json::json!({"engine": "npu-sdk", "version": "3.1", "os": "linux", "arch": "aarch64"})
    );
    assert_eq!(report["passed"], 1);
}

#[test]
fn a_missing_or_malformed_answer_fails_its_trial_naming_the_file_and_field() {
    let scratch = scratch();
    let dir = scratch.path().join("cases");
    export(&dir, &["slice::wrap::"]);
    answer(&dir, &fixtures::faulty_backend(), &[]);
    let index = json(&dir.join("index.json"));
    let cases = index["cases"].as_array().unwrap();
    let key = |n: usize| cases[n]["key"].as_str().unwrap().to_owned();
    let id = |n: usize| cases[n]["id"].as_str().unwrap().to_owned();
    let answers = dir.join("answers");
    let path = |n: usize| answers.join(format!("{}.json", key(n)));
    std::fs::remove_file(path(0)).unwrap();
    std::fs::write(path(1), "{\"type\": \"ok\", \"outputs\": [").unwrap();
    let escape = serde_json::json!({"type": "ok", "outputs": [{"dtype": "int8", "shape": [3], "file": "../../../etc/passwd"}]});
    std::fs::write(path(2), escape.to_string()).unwrap();
    let dtype = serde_json::json!({"type": "ok", "outputs": [{"dtype": "float33", "shape": [3], "data": "AAAA"}]});
    std::fs::write(path(3), dtype.to_string()).unwrap();
    let kind = serde_json::json!({"type": "error", "kind": "broken"});
    std::fs::write(path(4), kind.to_string()).unwrap();
    std::fs::write(path(5), "[1, 2]").unwrap();
    let missing = serde_json::json!({"type": "ok", "outputs": [{"dtype": "int8", "shape": [3], "file": "answers/nothing.bin"}]});
    std::fs::write(path(6), missing.to_string()).unwrap();
    // The export's input changed since: the case is not the checkout's.
    std::fs::write(dir.join(format!("cases/{}.in0.bin", key(7))), [9, 9, 9]).unwrap();
    let report = scratch.path().join("report.json");
    let output = runner()
        .arg("judge")
        .arg(&dir)
        .arg("slice::wrap::")
        .arg("--report-json")
        .arg(&report)
        .output()
        .unwrap();
    let all = text(&output);
    assert_eq!(output.status.code(), Some(101), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    let report = json(&report);
    let failed: Vec<(String, String)> = (report["trials"].as_array().unwrap().iter())
        .filter(|t| t["status"] != "passed")
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        (0, format!("{}: no answer: the harness wrote none for case", path(0).display())),
        (1, format!("{}: not JSON: EOF while parsing", path(1).display())),
        (2, format!("{}: field `outputs[0].file`: \"../../../etc/passwd\" is not a relative path inside", path(2).display())),
        (3, format!("{}: output 0: unknown dtype \"float33\"", path(3).display())),
        (4, format!("{}: the backend reported an unknown error kind \"broken\"", path(4).display())),
        (5, format!("{}: not a JSON object", path(5).display())),
        (6, format!("{}: field `outputs[0].file`: {} does not exist", path(6).display(), answers.join("nothing.bin").display())),
        (7, format!("{} is not the case `{}` of this checkout", dir.join(format!("cases/{}.in0.bin", key(7))).display(), id(7))),
    ];
    assert_eq!(failed.len(), expected.len(), "{failed:#?}");
    for ((name, message), (n, fragment)) in failed.iter().zip(&expected) {
        assert_eq!(name, &id(*n));
        assert!(
            message.contains(fragment.as_str()),
            "{fragment}\nin\n{message}"
        );
    }
}

#[test]
fn a_folder_without_its_index_or_hello_is_an_error_naming_the_file_and_field() {
    let scratch = scratch();
    let dir = scratch.path().join("cases");
    let judge = |dir: &Path| {
        let output = runner().arg("judge").arg(dir).output().unwrap();
        let all = text(&output);
        assert_eq!(output.status.code(), Some(2), "{all}");
        assert!(!all.contains("panicked"), "{all}");
        all
    };
    std::fs::create_dir_all(&dir).unwrap();
    let all = judge(&dir);
    assert!(
        all.contains(&format!(
            "{}: no such file",
            dir.join("index.json").display()
        )),
        "{all}"
    );
    export(
        &dir.join("one"),
        &["--exact", "slice::wrap::wrap_runs_past_end::int8"],
    );
    let one = dir.join("one");
    let all = judge(&one);
    assert!(
        all.contains(&format!(
            "{}: no such file",
            one.join("answers/hello.json").display()
        )),
        "{all}"
    );
    std::fs::write(
        one.join("answers/hello.json"),
        r#"{"type": "hello", "protocol": 1, "name": "x", "ops": ["slice"], "engine": "onnx"}"#,
    )
    .unwrap();
    let all = judge(&one);
    assert!(
        all.contains("answers/hello.json: field `engine`: invalid type"),
        "{all}"
    );
    std::fs::write(
        one.join("answers/hello.json"),
        r#"{"type": "hello", "protocol": 1, "name": "x", "ops": ["slcie"]}"#,
    )
    .unwrap();
    let all = judge(&one);
    assert!(
        all.contains("answers/hello.json: the hello names unknown op \"slcie\""),
        "{all}"
    );
    std::fs::write(
        one.join("answers/hello.json"),
        r#"{"type": "hello", "protocol": 1, "name": "x", "ops": ["slice"], "env": ["BUG_PAD"]}"#,
    )
    .unwrap();
    let all = judge(&one);
    assert!(
        all.contains("answers/hello.json: field `env`: give the variables with their values"),
        "{all}"
    );
    let index = std::fs::read_to_string(one.join("index.json")).unwrap();
    std::fs::write(
        one.join("index.json"),
        index.replace("\"shape\":[3]", "\"shape\":\"3\""),
    )
    .unwrap();
    let all = judge(&one);
    assert!(
        all.contains("index.json: field `cases[0].inputs[0].shape`: invalid type"),
        "{all}"
    );
    // An export refuses a folder that holds anything.
    let output = runner()
        .args(["export", "--cases"])
        .arg(&one)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("is not empty"), "{}", text(&output));
}
