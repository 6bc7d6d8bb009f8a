//! The engine adapters of `runner/backends/`: an adapter whose packages are missing makes the run
//! an error that names the install command, never a pass; docs/engines.md is what
//! scripts/engines_md.py writes from their known-failures files.

use std::path::PathBuf;
use std::process::Command;

const ADAPTERS: [&str; 4] = ["onnxruntime", "openvino", "xla", "tensorrt_rtx"];

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn an_adapter_without_its_packages_stops_the_run_with_the_install_command() {
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("backend.log");
    for adapter in ADAPTERS {
        // `python3 -S` leaves site-packages out: neither numpy nor the engine can be imported.
        let backend = format!("python3 -S runner/backends/{adapter}/backend.py");
        let run = Command::new(env!("CARGO_BIN_EXE_runner"))
            .current_dir(workspace())
            .args(["--backend", &backend, "--backend-log"])
            .arg(&log)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{adapter}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "packages are not installed (ModuleNotFoundError: No module named 'numpy'); \
                 install them with: python3 -m pip install -r runner/backends/{adapter}/requirements.txt"
            )),
            "{adapter}: {stderr}"
        );
        assert!(String::from_utf8_lossy(&run.stdout).trim().is_empty());
    }
}

#[test]
fn the_engines_page_is_generated_from_the_known_failures_files() {
    let check = Command::new("python3")
        .current_dir(workspace())
        .args(["scripts/engines_md.py", "--check", "--runner"])
        .arg(env!("CARGO_BIN_EXE_runner"))
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

/// The TensorRT-RTX adapter gives an error kind only where the builder's message names the rule:
/// each of its message patterns is checked on a real message of the pinned builder
/// (runner/backends/tensorrt_rtx/test_errors.py); and every reproducer of a builder defect
/// (runner/backends/tensorrt_rtx/repro/) still reproduces. Skipped with the install command when
/// the builder is not installed, except under CI, which installs it (`.ci/run`).
#[test]
fn tensorrt_rtx_error_kinds_come_from_real_messages_and_its_defects_still_reproduce() {
    let installed = Command::new("python3")
        .args(["-c", "import numpy, tensorrt_rtx"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        let install = "python3 -m pip install -r runner/backends/tensorrt_rtx/requirements.txt";
        assert!(
            std::env::var_os("CI").is_none(),
            "tensorrt_rtx is not installed, but CI must check the adapter's messages: {install}"
        );
        eprintln!("tensorrt_rtx is not installed: skipping its message patterns; {install}");
        return;
    }
    let run = Command::new("python3")
        .current_dir(workspace())
        .args(["-B", "runner/backends/tensorrt_rtx/test_errors.py"])
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(run.status.success(), "{out}");
    assert!(out.contains("OK"), "{out}");
    // Each reproducer calls the builder directly and exits 0 while its defect is still there,
    // 1 once it is gone (its known-failures entries and docs/engines.md then need updating).
    let repro = workspace().join("runner/backends/tensorrt_rtx/repro");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&repro)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty());
    for script in scripts {
        let run = Command::new("python3")
            .arg("-B")
            .arg(&script)
            .current_dir(workspace())
            .output()
            .unwrap();
        let out = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert_eq!(
            run.status.code(),
            Some(0),
            "{} no longer reproduces, or failed to run:\n{out}",
            script.display()
        );
    }
}
