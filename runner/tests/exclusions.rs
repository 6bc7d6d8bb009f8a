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
