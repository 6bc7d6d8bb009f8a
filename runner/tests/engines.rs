//! The engine adapters of `runner/backends/`: an adapter whose packages are missing makes the run
//! an error that names the install command, never a pass; docs/engines.md is what
//! scripts/engines_md.py writes from their known-failures files.

use std::path::PathBuf;
use std::process::Command;

const ADAPTERS: [&str; 3] = ["onnxruntime", "openvino", "xla"];

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
