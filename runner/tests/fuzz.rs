//! `opspec-fuzz` against a deliberately broken backend (Slice REFLECT off by one): with its
//! default budget it finds the bug and writes a minimal YAML case that fails against that
//! backend and passes against the reference. Against the reference served over the protocol it
//! finds nothing.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use opspec::Op;
use opspec_spec::{load_file, Expectation};

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// A scratch folder, removed when dropped (also when the test fails).
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("opspec-fuzz-{name}-"))
        .tempdir()
        .unwrap()
}

fn fuzz(args: &[&str]) -> (Output, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_opspec-fuzz"))
        .args(args)
        .arg("--quiet")
        .output()
        .unwrap();
    let text = text(&output);
    (output, text)
}

/// The runner on the spec folder `specs` alone.
fn run_specs(specs: &Path, backend: Option<&Path>) -> (Output, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for var in [
        "CI",
        "OPSPEC_BLESS",
        "OPSPEC_BACKEND",
        "OPSPEC_SWEEPS",
        "OPSPEC_GOLDEN",
    ] {
        command.env_remove(var);
    }
    command.env("OPSPEC_SPECS", specs);
    if let Some(backend) = backend {
        command.arg("--backend").arg(backend);
    }
    let output = command.output().unwrap();
    let text = text(&output);
    (output, text)
}

#[test]
fn a_reflect_off_by_one_is_found_shrunk_and_written_as_a_case() {
    let scratch = scratch("broken");
    let out = scratch.path().join("out");
    let backend = fixtures::broken_reflect_backend();
    let (output, report) = fuzz(&["--backend", &backend, "--out", out.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(report.contains("disagreement at case"), "{report}");
    assert!(report.contains("(slice: different outputs)"), "{report}");
    let written: Vec<PathBuf> = std::fs::read_dir(out.join("slice"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let yaml = std::fs::read_to_string(&written[0]).unwrap();
    assert!(yaml.contains("source: \"opspec-fuzz seed 1"), "{yaml}");
    assert!(yaml.contains("REFERENCE INTERPRETER"), "{yaml}");
    assert!(yaml.contains("mode: reflect"), "{yaml}");

    // Minimal: one axis of 3 (the smallest extent where the mirror differs), a few elements.
    let (cases, errors) = load_file(Op::Slice, &written[0], opspec::tensor::Limits::DEFAULT);
    assert!(errors.is_empty(), "{errors:?}");
    let case = &cases[0];
    let input = case.invocation.inputs[0].as_ref().unwrap();
    assert_eq!(input.shape, vec![3], "{yaml}");
    let Expectation::Outputs(expected) = &case.expect else {
        panic!("expects outputs: {yaml}")
    };
    assert!(expected[0].len() <= 2, "{yaml}");

    // The case fails against the broken backend and passes against the reference.
    let (broken, text) = run_specs(&out, Some(Path::new(&backend)));
    assert!(!broken.status.success(), "{text}");
    assert!(text.contains("0 passed; 1 failed"), "{text}");
    let (reference, text) = run_specs(&out, None);
    assert!(reference.status.success(), "{text}");
    assert!(text.contains("1 passed; 0 failed"), "{text}");
}

#[test]
fn the_reference_over_the_protocol_agrees_with_the_reference() {
    let scratch = scratch("serve");
    let out = scratch.path().join("out");
    let backend = format!("{} --serve", env!("CARGO_BIN_EXE_runner"));
    let (output, report) = fuzz(&[
        "--backend",
        &backend,
        "--cases",
        "3000",
        "--seed",
        "7",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{report}");
    assert!(report.contains("3000 cases in"), "{report}");
    assert!(
        report.contains("no disagreement with the reference"),
        "{report}"
    );
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn the_built_in_reference_is_fuzzed_quickly() {
    let (output, report) = fuzz(&["--cases", "20000", "--seed", "3"]);
    assert!(output.status.success(), "{report}");
    let rate: f64 = report
        .split(" cases/s")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rate in {report}"));
    // The target is 10,000 cases/s for an optimized build; a debug build on a busy test
    // machine gets a lower floor.
    let floor = if cfg!(debug_assertions) {
        1_000.0
    } else {
        10_000.0
    };
    assert!(rate >= floor, "{rate} cases/s: {report}");
}
