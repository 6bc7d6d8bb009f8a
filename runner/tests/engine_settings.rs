//! An adapter's engine settings that are set for speed must not change a verdict: a fixed
//! sample run both ways gives every trial the same status (the adapters' READMEs, "Settings").

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether `python3` imports `modules`; without them the test is skipped with the install
/// command, unless `CI` is set, where it is required.
fn installed(modules: &str, install: &str) -> bool {
    let scratch = tempfile::tempdir().unwrap();
    let probe = Command::new("python3")
        .env("TMPDIR", scratch.path())
        .args(["-c", &format!("import {modules}")])
        .output();
    if matches!(&probe, Ok(out) if out.status.success()) {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but {modules} cannot be imported; install it with: {install}"
    );
    eprintln!("skipped: {modules} is not installed; install it with: {install}");
    false
}

/// Each trial's status in a run of `backend` on the trials `filter` selects, with `env` set.
fn statuses(backend: &str, filter: &str, env: (&str, &str)) -> BTreeMap<String, String> {
    let scratch = tempfile::tempdir().unwrap();
    let report = scratch.path().join("report.json");
    let run = Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(workspace())
        .env("TMPDIR", scratch.path())
        .env(env.0, env.1)
        .args([
            "-q",
            "--allow-skips",
            "--timeout",
            "60",
            "--backend",
            backend,
        ])
        .arg("--backend-log")
        .arg(scratch.path().join("backend.log"))
        .arg("--report-json")
        .arg(&report)
        .arg(filter)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&report).unwrap_or_else(|e| {
        panic!(
            "no report ({e}): {}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        )
    });
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    (json["trials"].as_array().unwrap().iter())
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_owned();
            (name, t["status"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[test]
#[ignore = "engine checks: cargo test -p opspec-runner --test engines --test engine_settings -- --ignored"]
fn onnxruntime_thread_pools_change_no_verdict() {
    let install = "python3 -m pip install -r runner/backends/onnxruntime/requirements.txt";
    if !installed("onnxruntime, onnx", install) {
        return;
    }
    let backend = "python3 runner/backends/onnxruntime/backend.py";
    // Scale's float arithmetic, where a split of the work could show, and its quantization.
    for filter in ["scale::channel", "scale::sweep::special"] {
        let one = statuses(backend, filter, ("OPSPEC_ORT_THREADS", "1"));
        let default = statuses(backend, filter, ("OPSPEC_ORT_THREADS", "0"));
        assert!(one.len() > 20, "{filter}: {one:?}");
        assert_eq!(one, default, "{filter}");
    }
}

#[test]
#[ignore = "engine checks: cargo test -p opspec-runner --test engines --test engine_settings -- --ignored"]
fn xla_llvm_optimization_level_changes_no_verdict() {
    let install = "python3 -m pip install -r runner/backends/xla/requirements.txt";
    if !installed("numpy, jax", install) {
        return;
    }
    let backend = "python3 runner/backends/xla/backend.py";
    // The level the adapter sets for speed (0) against XLA's default (2), on Scale's float
    // arithmetic, where code generation could show.
    let filter = "scale::channel";
    let fast = statuses(
        backend,
        filter,
        ("XLA_FLAGS", "--xla_backend_optimization_level=0"),
    );
    let default = statuses(
        backend,
        filter,
        ("XLA_FLAGS", "--xla_backend_optimization_level=2"),
    );
    assert!(fast.len() > 20, "{fast:?}");
    assert_eq!(fast, default);
}
