//! A bless is all or nothing per sweep: failed at any step, killed, or run beside others, it
//! leaves each sweep's manifest and goldens either exactly as they were or wholly new, never
//! a mix; what a killed bless leaves behind is reported and removed by the next one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("OPSPEC_") || name == "CI" {
            command.env_remove(name);
        }
    }
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every file under `dir`, relative, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(path.strip_prefix(root).unwrap().to_path_buf(), bytes);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn hidden(files: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<&PathBuf> {
    files
        .keys()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect()
}

/// A scratch copy of the as_strided sweep and its goldens, with two of its cases changed so
/// that a bless rewrites their goldens (and others of the sweep stay).
struct Scratch(tempfile::TempDir);

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("opspec-bless-")
            .tempdir()
            .unwrap();
        let root = dir.path();
        copy_dir(
            &workspace().join("sweeps/as_strided"),
            &root.join("sweeps/as_strided"),
        );
        copy_dir(
            &workspace().join("golden/as_strided"),
            &root.join("golden/as_strided"),
        );
        std::fs::create_dir_all(root.join("specs")).unwrap();
        let sweep = root.join("sweeps/as_strided/views.yaml");
        let text = std::fs::read_to_string(&sweep).unwrap();
        let changed = text.replace(
            "{name: every_other, size: [7], stride: [2]}",
            "{name: every_other, size: [6], stride: [2]}",
        );
        assert_ne!(changed, text);
        std::fs::write(&sweep, changed).unwrap();
        Scratch(dir)
    }

    fn golden(&self) -> PathBuf {
        self.0.path().join("golden")
    }

    fn command(&self, envs: &[(&str, &str)]) -> Command {
        let mut command = runner();
        command
            .env("OPSPEC_SPECS", self.0.path().join("specs"))
            .env("OPSPEC_SWEEPS", self.0.path().join("sweeps"))
            .envs(envs.iter().copied());
        command
    }

    fn run(&self, envs: &[(&str, &str)]) -> (Output, String) {
        let output = self.command(envs).output().unwrap();
        let text = text(&output);
        (output, text)
    }

    /// A run without blessing: the goldens on disk agree with their manifests (no hash or
    /// read failure), whatever they say about the changed cases.
    fn assert_consistent(&self) -> String {
        let (_, out) = self.run(&[]);
        for broken in ["fails its content hash", "cannot be read", "is not a valid"] {
            assert!(!out.contains(broken), "{broken}:\n{out}");
        }
        out
    }

    /// Blessing again succeeds, leaves no hidden file, and a plain run then passes.
    fn assert_blessing_finishes(&self) -> String {
        let (output, out) = self.run(&[("OPSPEC_BLESS", "1")]);
        assert!(output.status.success(), "{out}");
        let after = files(&self.golden());
        assert_eq!(hidden(&after), Vec::<&PathBuf>::new(), "{out}");
        let (output, again) = self.run(&[]);
        assert!(output.status.success(), "{again}");
        out
    }
}

#[test]
fn a_bless_failing_at_any_step_leaves_each_sweep_old_or_new_never_mixed() {
    for step in ["golden", "manifest", "switch", "link", "rename", "cleanup"] {
        let scratch = Scratch::new();
        let before = files(&scratch.golden());
        let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1"), ("OPSPEC_BLESS_FAULT", step)]);
        assert!(!output.status.success(), "{step}: {out}");
        assert!(
            out.contains("views.json") || out.contains("golden"),
            "{step}: {out}"
        );
        assert!(!out.contains("panicked"), "{step}: {out}");
        let after = files(&scratch.golden());
        if ["golden", "manifest", "switch"].contains(&step) {
            // Before the switch: exactly as they were, nothing left beside them.
            assert!(after == before, "{step}: the goldens changed:\n{out}");
            let out = scratch.assert_consistent();
            assert!(out.contains("stale golden"), "{step}: {out}");
        } else {
            // After the switch: the new goldens, whole, under the names the manifest gives.
            let out = scratch.assert_consistent();
            assert!(!out.contains("stale golden"), "{step}: {out}");
        }
        scratch.assert_blessing_finishes();
    }
}

/// Runs a bless that stops at `step` until killed, kills it (SIGKILL), and returns the golden
/// folder's files before and after.
fn killed_at(scratch: &Scratch, step: &str) {
    killed_at_unreaped(scratch, step).wait().unwrap();
}

/// As [`killed_at`], but the killed bless is not waited for: until its parent reaps it, it
/// is a zombie, whose `/proc` folder is still there.
fn killed_at_unreaped(scratch: &Scratch, step: &str) -> std::process::Child {
    let marker = scratch.0.path().join(format!("paused-{step}"));
    let fault = format!("pause:{step}:{}", marker.display());
    let mut child = scratch
        .command(&[("OPSPEC_BLESS", "1"), ("OPSPEC_BLESS_FAULT", &fault)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    while !marker.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{step}: the bless ended ({status}) before pausing");
        }
        assert!(Instant::now() < deadline, "{step}: the bless never paused");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child
}

/// A bless killed after staging its goldens (holding the bless lock), and not yet reaped by
/// its parent (a zombie, as under a script that kills and does not wait): the next bless
/// takes the lock over, removes and names the staged files, and leaves none.
#[test]
fn a_killed_bless_not_yet_reaped_leaves_nothing_after_the_next() {
    for step in ["golden", "manifest"] {
        let scratch = Scratch::new();
        let mut zombie = killed_at_unreaped(&scratch, step);
        // Killed, not reaped: its process is a zombie until the wait below.
        let stat = format!("/proc/{}/stat", zombie.id());
        let deadline = Instant::now() + Duration::from_secs(60);
        while !std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") Z ")) {
            assert!(Instant::now() < deadline, "{step}: no zombie");
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = scratch.assert_blessing_finishes();
        if step == "manifest" {
            assert!(
                out.contains("left by a bless that was stopped or failed"),
                "{step}: the leftovers are not reported:\n{out}"
            );
        }
        zombie.wait().unwrap();
    }
}

#[test]
fn a_bless_killed_at_any_step_leaves_a_whole_sweep_and_its_leftovers_go_next_time() {
    for step in ["manifest", "switch", "link", "rename", "cleanup"] {
        let scratch = Scratch::new();
        let before = files(&scratch.golden());
        killed_at(&scratch, step);
        let after = files(&scratch.golden());
        let visible = |files: &BTreeMap<PathBuf, Vec<u8>>| -> BTreeMap<PathBuf, Vec<u8>> {
            files
                .iter()
                .filter(|(p, _)| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
                .map(|(p, b)| (p.clone(), b.clone()))
                .collect()
        };
        if ["manifest", "switch"].contains(&step) {
            assert!(
                visible(&after) == visible(&before),
                "{step}: the goldens changed"
            );
        }
        // Killed, it may leave files of its own (hidden); the goldens agree with their manifest.
        assert!(!hidden(&after).is_empty(), "{step}: nothing staged?");
        scratch.assert_consistent();
        let out = scratch.assert_blessing_finishes();
        if ["manifest", "switch"].contains(&step) {
            assert!(
                out.contains("left by a bless that was stopped or failed"),
                "{step}: the leftovers are not reported:\n{out}"
            );
        }
    }
}

#[test]
fn concurrent_blesses_all_succeed_and_leave_one_whole_sweep() {
    let scratch = Scratch::new();
    let children: Vec<_> = (0..4)
        .map(|_| {
            scratch
                .command(&[("OPSPEC_BLESS", "1")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", text(&output));
    }
    let after = files(&scratch.golden());
    assert_eq!(hidden(&after), Vec::<&PathBuf>::new());
    let (output, out) = scratch.run(&[]);
    assert!(output.status.success(), "{out}");
}
