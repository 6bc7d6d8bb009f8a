//! A declaration of the hello that leaves out more than a quarter of an op's trials is said in
//! a warning line before the summary, never only counted (docs/protocol.md, "What the runner
//! does with a hello").

mod fixtures;

use std::process::Command;

#[test]
fn a_declaration_that_excludes_most_of_an_op_is_warned_of() {
    let dir = tempfile::Builder::new()
        .prefix("opspec-exclusions-")
        .tempdir()
        .unwrap();
    let hello = r#"{"type":"hello","protocol":1,"name":"three-formats","ops":["reformat","scale"],"attributes":{"reformat":{"format":["CHW4","HWC8","CHW32"]}}}"#;
    let output = Command::new(env!("CARGO_BIN_EXE_runner"))
        .env_remove("OPSPEC_ALLOW_SKIPS")
        .args(["-q", "--backend"])
        .arg(format!("{} --hello '{hello}'", fixtures::faulty_backend()))
        .arg("--backend-log")
        .arg(dir.path().join("log"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert!(
        warnings.iter().any(|w| w
            .starts_with("warning: the hello's declaration `reformat format=LINEAR` excludes ")
            && w.ends_with(" reformat trials")),
        "{text}"
    );
    // Before the summary, and not for scale, which the hello takes whole.
    let summary = text.find(" passed, ").unwrap();
    assert!(text.find("format=LINEAR").unwrap() < summary);
    assert!(
        warnings.iter().all(|w| !w.contains(" scale trials")),
        "{warnings:?}"
    );
}

/// Every trial a hello excludes is counted, never printed as ignored: a sweep case whose
/// output dtype (from its golden: Scale's `output_dtype: int8`) is one the hello leaves out is
/// excluded quietly, as a spec case is (issue 45 found 6 such trials printed).
#[test]
fn a_sweep_case_excluded_by_its_output_dtype_is_not_printed() {
    let dir = tempfile::Builder::new()
        .prefix("opspec-exclusions-")
        .tempdir()
        .unwrap();
    let hello = r#"{"type":"hello","protocol":1,"name":"mine","ops":["scale","reformat"],"dtypes":{"scale":["float32","float16"]},"attributes":{"reformat":{"format":["LINEAR","CHW4","HWC8"]}}}"#;
    let report = dir.path().join("report.json");
    let output = Command::new(env!("CARGO_BIN_EXE_runner"))
        .env_remove("OPSPEC_ALLOW_SKIPS")
        .env_remove("OPSPEC_LIST_EXCLUDED")
        .arg("--backend")
        .arg(format!("{} --hello '{hello}'", fixtures::faulty_backend()))
        .arg("--backend-log")
        .arg(dir.path().join("log"))
        .arg("--report-json")
        .arg(&report)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let ignored: Vec<&str> = text.lines().filter(|l| l.contains("... ignored")).collect();
    assert!(ignored.is_empty(), "{ignored:#?}");
    assert!(text.contains("; 0 ignored;"), "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let quantize: Vec<&serde_json::Value> = (report["trials"].as_array().unwrap().iter())
        .filter(|t| {
            let name = t["name"].as_str().unwrap();
            name.starts_with("scale::sweep::special::quantize_to_int8__")
                && name.ends_with("::float32")
        })
        .collect();
    assert_eq!(quantize.len(), 6, "{quantize:#?}");
    for trial in quantize {
        assert_eq!(trial["status"], "excluded", "{trial}");
        assert_eq!(trial["excluded_by"], "scale dtype int8", "{trial}");
    }
}
