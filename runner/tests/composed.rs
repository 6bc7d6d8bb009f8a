//! Composed as it happened (docs/protocol.md): a trial counts as composed by the adapter
//! exactly when its reply names a key of the hello's `composed`, whatever its attributes; a
//! key no reply names is reported; a reply naming a key the hello lacks fails its case.

mod fixtures;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use fixtures::faulty_backend;

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for variable in ["OPSPEC_ALLOW_SKIPS", "OPSPEC_BATCH", "OPSPEC_JOBS"] {
        command.env_remove(variable);
    }
    command
}

fn text(output: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A run of the as_strided trials, its replies to `as_strided::views::` naming `slice:gather`
/// (`--compose`), with `catalogue` as the hello's `composed`.
fn run(dir: &Path, catalogue: &str, batch: &str) -> (Output, Value) {
    let hello = format!(
        r#"{{"type":"hello","protocol":1,"name":"composing","ops":["as_strided"],"batch":8,"composed":{catalogue}}}"#
    );
    let backend = format!(
        "{} --batch 8 --compose slice:gather@as_strided::views:: --hello '{hello}'",
        faulty_backend()
    );
    let report = dir.join("report.json");
    let output = runner()
        .args(["--backend", &backend, "--batch", batch, "--report-json"])
        .arg(&report)
        .arg("--backend-log")
        .arg(dir.join("log"))
        .arg("as_strided::")
        .output()
        .unwrap();
    let report = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (output, report)
}

#[test]
fn a_trial_is_composed_when_its_reply_says_so() {
    let dir = tempfile::Builder::new()
        .prefix("opspec-composed-")
        .tempdir()
        .unwrap();
    let catalogue =
        r#"{"slice:gather":"a Gather of computed coordinates","as_strided":"never used"}"#;
    for batch in ["1", "8"] {
        let (output, report) = run(dir.path(), catalogue, batch);
        assert_eq!(output.status.code(), Some(0), "{}", text(&output));
        let trials = report["trials"].as_array().unwrap();
        // The views cases answered with outputs name the path; those rejected name none.
        let composed: Vec<&str> = (trials.iter())
            .filter(|t| !t["composed"].is_null())
            .map(|t| {
                assert_eq!(t["composed"], serde_json::json!(["slice:gather"]), "{t}");
                t["name"].as_str().unwrap()
            })
            .collect();
        assert!(composed
            .iter()
            .all(|n| n.starts_with("as_strided::views::")));
        let views = composed.len();
        assert!(views > 10, "{composed:?}");
        assert_eq!(report["composed_counts"]["slice:gather"]["trials"], views);
        // The op's own key matches every trial's op, but no reply named it.
        assert_eq!(report["composed_unused"], serde_json::json!(["as_strided"]));
        let console = text(&output);
        assert!(
            console.contains(&format!(
                "native: {} trials ({} passed); composed by the adapter, not the engine's own: {views} ({views} passed): slice:gather {views}/{views}",
                trials.len() - views,
                trials.len() - views,
            )),
            "{console}"
        );
        assert!(
            console.contains("composed paths the hello lists and no reply named: as_strided"),
            "{console}"
        );
    }
}

#[test]
fn a_reply_naming_a_path_the_hello_lacks_fails_its_case() {
    let dir = tempfile::Builder::new()
        .prefix("opspec-composed-")
        .tempdir()
        .unwrap();
    let (output, report) = run(dir.path(), r#"{"as_strided":"a Gather"}"#, "8");
    assert_eq!(output.status.code(), Some(101), "{}", text(&output));
    let failed: Vec<&Value> = (report["trials"].as_array().unwrap().iter())
        .filter(|t| t["status"] == "failed")
        .collect();
    assert!(failed.len() > 10, "{}", text(&output));
    for trial in failed {
        assert!(trial["name"]
            .as_str()
            .unwrap()
            .starts_with("as_strided::views::"));
        let message = trial["message"].as_str().unwrap();
        assert!(
            message.contains("\"slice:gather\", which the `composed` of its hello does not list"),
            "{message}"
        );
    }
}
