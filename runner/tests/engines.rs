//! The engine adapters of `runner/backends/`, each found by its manifest `engine.toml` (read
//! through scripts/engines/engines.py): an adapter whose packages are missing makes the run an error that
//! names the install command, never a pass; docs/engines.md is what scripts/engines/engines_md.py writes
//! from their known-failures files; each engine's reproducers and message patterns hold on it.
//!
//! The checks that start the engines themselves take minutes, so `cargo test` leaves them out
//! (`#[ignore]`); README.md names their command and CI runs it as a step of its own.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// An engine adapter, `runner/backends/<name>/`, as its manifest says.
struct Engine {
    name: String,
    /// The interpreter of backend.py, repro/ and test_errors.py.
    python: String,
    /// What `import` proves the engine installed.
    modules: String,
    install: String,
    backend: String,
    expectations: String,
}

/// Every engine, by name, from `python3 scripts/engines/engines.py json` (which validates the manifests).
fn engines() -> Vec<Engine> {
    let read = Command::new("python3")
        .current_dir(workspace())
        .args(["scripts/engines/engines.py", "json"])
        .output()
        .unwrap();
    assert!(
        read.status.success(),
        "scripts/engines/engines.py json: {}",
        String::from_utf8_lossy(&read.stderr)
    );
    let manifests: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&read.stdout).unwrap();
    let engines: Vec<Engine> = manifests
        .into_iter()
        .map(|(name, manifest)| {
            let field = |key: &str| manifest[key].as_str().unwrap().to_string();
            Engine {
                python: field("python"),
                modules: field("modules"),
                install: field("install"),
                backend: field("backend"),
                expectations: field("expectations"),
                name,
            }
        })
        .collect();
    assert!(!engines.is_empty(), "no runner/backends/*/engine.toml");
    engines
}

/// What each manifest says its adapter's hello leaves out (`not_declared`, from which
/// docs/engines.md marks ops, modes and formats "not run") is what the hello leaves out.
#[test]
#[ignore = "engine checks: cargo test -p opspec-runner --test engines --test engine_settings -- --ignored"]
fn every_manifest_says_what_its_hello_leaves_out() {
    for engine in engines() {
        if !engine_installed(&engine) {
            continue;
        }
        let (mut python, _scratch) = python("python3");
        let check = python
            .current_dir(workspace())
            .args(["scripts/engines/engines.py", "check-hello", &engine.name])
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
}

/// The manifests' reader and its checks (scripts/engines/test_engines.py).
#[test]
fn the_manifests_reader_validates_them() {
    assert_script_passes("python3", Path::new("scripts/engines/test_engines.py"));
}

/// The version matrix's checks of the reports and times it reads
/// (scripts/engines/test_version_matrix.py).
#[test]
fn the_version_matrix_checks_what_it_reads() {
    assert_script_passes(
        "python3",
        Path::new("scripts/engines/test_version_matrix.py"),
    );
}

#[test]
fn an_adapter_without_its_packages_stops_the_run_with_the_install_command() {
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("backend.log");
    for engine in engines() {
        let name = &engine.name;
        // `-S` leaves site-packages out: neither numpy nor the engine can be imported.
        let script = engine
            .backend
            .strip_prefix(&format!("{} ", engine.python))
            .unwrap_or_else(|| panic!("{name}: the backend does not start with {}", engine.python));
        let backend = format!("{} -S {script}", engine.python);
        let run = Command::new(env!("CARGO_BIN_EXE_runner"))
            .current_dir(workspace())
            .args(["--backend", &backend, "--backend-log"])
            .arg(&log)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{name}: {stderr}");
        for expected in [
            format!("the {name} adapter's packages are not installed (ModuleNotFoundError: No module named '"),
            format!("'); install them with: {}", engine.install),
        ] {
            assert!(stderr.contains(&expected), "{name}: {stderr}");
        }
        assert!(String::from_utf8_lossy(&run.stdout).trim().is_empty());
    }
}

/// docs/engines.md's counts are the runs' known failures (scripts/engines/test_engines_md.py: made-up
/// reports of every engine add up on the page, a missing or stale report stops the script, and
/// the page adds up to the runs docs/engine-runs.json records).
#[test]
fn the_engines_page_counts_what_the_runs_reports_count() {
    assert_script_passes("python3", Path::new("scripts/engines/test_engines_md.py"));
}

/// Every time, memory or thread figure of an adapter README and of docs/ is written by the
/// script that measured it, with its date, machine and command (scripts/benchmarks/test_figures.py).
#[test]
fn figures_are_written_by_the_scripts_that_measured_them() {
    assert_script_passes("python3", Path::new("scripts/benchmarks/test_figures.py"));
}

/// The page and README.md's list of engines are what scripts/engines/engines_md.py writes from the
/// manifests, the known-failures files (read through `runner expectations`) and the runs it
/// recorded in docs/engine-runs.json.
#[test]
fn the_engines_page_is_generated_from_the_known_failures_files() {
    let check = Command::new("python3")
        .current_dir(workspace())
        .args(["scripts/engines/engines_md.py", "--check", "--runner"])
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

/// The interpreter `python` with a temporary folder of its own, removed with the returned guard:
/// onnxruntime writes a `.ses` file into TMPDIR when it is imported, and a test leaves nothing
/// behind.
fn python(python: &str) -> (Command, tempfile::TempDir) {
    let scratch = tempfile::tempdir().unwrap();
    let mut command = Command::new(python);
    // A script that needs a known-failures file's entries reads them through this runner.
    command
        .env("TMPDIR", scratch.path())
        .env("OPSPEC_RUNNER", env!("CARGO_BIN_EXE_runner"));
    (command, scratch)
}

/// Runs `script` (from the repository root) with the interpreter `interpreter`, in a temporary
/// folder of its own, and asserts that it exits 0.
fn assert_script_passes(interpreter: &str, script: &Path) {
    let (mut command, _scratch) = python(interpreter);
    let run = command
        .arg(script)
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}:\n{}{}",
        script.display(),
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Whether an engine's packages can be imported; without them the test is skipped with the
/// install command, unless `CI` is set, where it is required.
fn engine_installed(engine: &Engine) -> bool {
    let (mut python, _scratch) = python(&engine.python);
    let probe = python
        .args(["-c", &format!("import {}", engine.modules)])
        .output();
    if matches!(&probe, Ok(out) if out.status.success()) {
        return true;
    }
    let (name, install) = (&engine.name, &engine.install);
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but {name} cannot be imported; install it with: {install}"
    );
    eprintln!("skipped: {name} is not installed; install it with: {install}");
    false
}

fn python_scripts(dir: &Path) -> Vec<PathBuf> {
    let mut scripts: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "py"))
            .collect(),
        Err(_) => Vec::new(),
    };
    scripts.sort();
    scripts
}

/// The entries of an engine's known-failures file as the runner reads them (`runner
/// expectations FILE --json`), never parsed here.
fn entries(engine: &Engine) -> Vec<serde_json::Value> {
    let listed = Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(workspace())
        .args(["expectations", &engine.expectations, "--json"])
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}: {}",
        engine.expectations,
        String::from_utf8_lossy(&listed.stderr)
    );
    let listing: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    listing["entries"].as_array().unwrap().clone()
}

/// The reproducers the `defect` entries of an engine's known-failures file name
/// (`repro/<name>.py` in the reason), as paths from the repository root.
fn named_reproducers(engine: &Engine) -> Vec<String> {
    let mut named = Vec::new();
    for entry in entries(engine) {
        if entry["class"] != "defect" {
            continue;
        }
        let reason = entry["reason"].as_str().unwrap();
        let scripts: Vec<&str> = reason
            .split(|c: char| c.is_whitespace() || c == ';' || c == ',' || c == '(' || c == ')')
            .filter(|word| word.starts_with("repro/") && word.ends_with(".py"))
            .collect();
        assert!(
            !scripts.is_empty(),
            "{} line {}: a defect entry names no reproducer: {reason}",
            engine.expectations,
            entry["line"]
        );
        named.extend(
            scripts
                .into_iter()
                .map(|s| format!("runner/backends/{}/{s}", engine.name)),
        );
    }
    named
}

#[test]
fn every_defect_entry_names_a_reproducer_that_exists() {
    for engine in engines() {
        for script in named_reproducers(&engine) {
            assert!(
                workspace().join(&script).is_file(),
                "{}: a defect entry names {script}, which does not exist",
                engine.name
            );
        }
    }
}

/// Every `runner/backends/<engine>/repro/*.py` calls the engine directly and exits 0 while the
/// defect it shows is still there, 1 once it is gone (so an engine fix is noticed: the
/// known-failures entry and docs/engines.md then need updating), 3 when this machine cannot show
/// it (a note, not a failure). An engine with no defect found (XLA) has none.
#[test]
#[ignore = "engine checks: cargo test -p opspec-runner --test engines --test engine_settings -- --ignored"]
fn every_engine_reproducer_still_reproduces() {
    for engine in engines() {
        let scripts = python_scripts(
            &workspace()
                .join("runner/backends")
                .join(&engine.name)
                .join("repro"),
        );
        if scripts.is_empty() || !engine_installed(&engine) {
            continue;
        }
        for script in scripts {
            let (mut python, _scratch) = python(&engine.python);
            let run = python
                .arg(&script)
                .current_dir(workspace())
                .output()
                .unwrap();
            let output = format!(
                "{}{}",
                String::from_utf8_lossy(&run.stdout),
                String::from_utf8_lossy(&run.stderr)
            );
            match run.status.code() {
                Some(0) => {}
                Some(3) => eprintln!("{}: cannot be shown on this machine:\n{output}", script.display()),
                Some(1) => panic!(
                    "{} no longer reproduces: the engine changed; update its known-failures entry and docs/engines.md\n{output}",
                    script.display()
                ),
                code => panic!("{} failed to run (exit status {code:?}):\n{output}", script.display()),
            }
        }
    }
}

/// Each adapter's own tests on its engine (`test_*.py` beside its backend.py): the message
/// patterns from which it gives error kinds (`errors.py`) against the engine's real messages
/// (`test_errors.py`), and its choices where the engine has a defect (MNN's `test_backend.py`).
#[test]
#[ignore = "engine checks: cargo test -p opspec-runner --test engines --test engine_settings -- --ignored"]
fn adapter_tests_pass_on_their_engines() {
    for engine in engines() {
        if !engine_installed(&engine) {
            continue;
        }
        let folder = workspace().join("runner/backends").join(&engine.name);
        let mut tests: Vec<PathBuf> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                let name = path.file_name().unwrap().to_string_lossy();
                name.starts_with("test_") && name.ends_with(".py")
            })
            .collect();
        tests.sort();
        for test in tests {
            assert_script_passes(&engine.python, &test);
        }
    }
}

/// Every claim of an engine's known-failures file that is not the adapter's own limit, shown on
/// the engine directly, where the adapter has such scripts (`check_*.py`: XLA's, torch's and
/// MNN's `check_claims.py`, torch's `check_as_strided.py`; each claim's smallest program, and a
/// claim a script does not show is itself a failure).
#[test]
#[ignore = "engine checks: cargo test -p opspec-runner --test engines --test engine_settings -- --ignored"]
fn every_claim_checked_on_its_engine_holds() {
    let mut checked = Vec::new();
    for engine in engines() {
        let folder = workspace().join("runner/backends").join(&engine.name);
        let mut scripts: Vec<PathBuf> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let file = p.file_name().unwrap().to_string_lossy().into_owned();
                file.starts_with("check_") && file.ends_with(".py")
            })
            .collect();
        scripts.sort();
        if scripts.is_empty() || !engine_installed(&engine) {
            continue;
        }
        for script in scripts {
            let relative = script.strip_prefix(workspace()).unwrap().to_path_buf();
            assert_script_passes(&engine.python, &relative);
            checked.push(relative);
        }
    }
    if std::env::var_os("CI").is_some() {
        assert!(checked.len() >= 3, "{checked:?}");
    }
}

/// Batching never changes a verdict (docs/protocol.md, "Batches"): every engine whose hello
/// declares `batch`, run on a sample of its trials (one part in 16, by name) with its batches
/// and with `--batch 1`, gives the same report trial for trial (scripts/audits/same_reports.py
/// `batched`; BENCHMARKS.md "Batched trials" has the whole runs).
#[test]
#[ignore = "engine checks: cargo test -p opspec-runner --test engines --test engine_settings -- --ignored"]
fn every_engine_batched_gives_the_verdicts_of_single_requests() {
    for engine in engines() {
        if !engine_installed(&engine) {
            continue;
        }
        let (mut python, _scratch) = python("python3");
        let run = python
            .current_dir(workspace())
            .env("OPSPEC_RUNNER", env!("CARGO_BIN_EXE_runner"))
            .args(["scripts/audits/same_reports.py", "batched", &engine.name])
            .args(["--partition", "1/16"])
            .output()
            .unwrap();
        let output = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(
            run.status.success() && output.contains(", 0 differences"),
            "{}: batched and single runs differ:\n{output}",
            engine.name
        );
        eprintln!("{output}");
    }
}
