//! Generated cases, goldens and blessing, as a contributor meets them: the suite's generated
//! trials are many and fast; a changed golden byte, a removed case, a changed case each fail
//! with a message saying what to do; blessing fixes them, and is refused in CI; a wrong
//! backend is told where each wrong element came from.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The runner with none of the configuration of the calling environment.
fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for var in [
        "CI",
        "OPSPEC_BLESS",
        "OPSPEC_BACKEND",
        "OPSPEC_SPECS",
        "OPSPEC_SWEEPS",
        "OPSPEC_GOLDEN",
        "OPSPEC_EXPECTATIONS",
    ] {
        command.env_remove(var);
    }
    command
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

/// Whether libtest reported `name` as failed (its lines pad kinds and names to one width).
fn failed(out: &str, name: &str) -> bool {
    out.lines().any(|l| {
        l.strip_prefix("test [")
            .and_then(|rest| rest.split_once(']'))
            .and_then(|(_, rest)| rest.trim_start().strip_prefix(name))
            .is_some_and(|rest| rest.starts_with(' ') && rest.trim_end().ends_with("FAILED"))
    })
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

/// A scratch copy of the as_strided sweep and its goldens, with an empty spec folder:
/// `<dir>/sweeps`, `<dir>/golden`, `<dir>/specs`.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("opspec-golden-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(
            &workspace().join("sweeps").join("as_strided"),
            &dir.join("sweeps").join("as_strided"),
        );
        copy_dir(
            &workspace().join("golden").join("as_strided"),
            &dir.join("golden").join("as_strided"),
        );
        std::fs::create_dir_all(dir.join("specs")).unwrap();
        Scratch(dir)
    }

    fn run(&self, envs: &[(&str, &str)], args: &[&str]) -> (Output, String) {
        let output = runner()
            .env("OPSPEC_SPECS", self.0.join("specs"))
            .env("OPSPEC_SWEEPS", self.0.join("sweeps"))
            .envs(envs.iter().copied())
            .args(args)
            .output()
            .unwrap();
        let text = text(&output);
        (output, text)
    }

    fn golden(&self, relative: &str) -> PathBuf {
        self.0.join("golden").join("as_strided").join(relative)
    }

    fn sweep(&self) -> PathBuf {
        self.0.join("sweeps").join("as_strided").join("views.yaml")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn at_least_2000_generated_trials_run_in_seconds() {
    let listing = runner().arg("--list").output().unwrap();
    let names: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(|l| l.split_once("] ").map_or(l, |(_, name)| name).to_owned())
        .collect();
    let generated = names
        .iter()
        .filter(|n| n.contains("::sweep::") || n.contains("::metamorphic::"))
        .count();
    assert!(generated >= 2000, "only {generated} generated trials");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "trials are listed sorted");
    let run = runner().arg("::sweep::").output().unwrap();
    let out = text(&run);
    assert!(run.status.success(), "{out}");
    let seconds: f64 = out
        .lines()
        .find_map(|l| l.split("finished in ").nth(1))
        .and_then(|t| t.trim_end_matches('s').trim().parse().ok())
        .unwrap_or_else(|| panic!("no timing in {out}"));
    // Wall time, so generous: a few seconds on a machine at a load of 20 on 2 cores, and
    // minutes only if a trial's cost exploded.
    assert!(seconds < 60.0, "generated trials took {seconds} s");
}

#[test]
fn a_changed_golden_byte_fails_its_trial_with_a_hash_error() {
    let scratch = Scratch::new("byte");
    let (output, out) = scratch.run(&[], &[]);
    assert!(output.status.success(), "{out}");
    let path = scratch.golden("views/views__diagonal__0.float16.npy");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&path, bytes).unwrap();
    let (output, out) = scratch.run(&[], &[]);
    assert!(!output.status.success(), "{out}");
    assert!(
        failed(
            &out,
            "as_strided::sweep::views::views__diagonal__0::float16"
        ),
        "{out}"
    );
    assert!(
        out.contains("views__diagonal__0.float16.npy fails its content hash"),
        "{out}"
    );
    assert!(out.contains("OPSPEC_BLESS=1 cargo test"), "{out}");
    assert!(
        out.contains(" 1 failed;"),
        "exactly that trial fails:\n{out}"
    );
}

#[test]
fn a_removed_case_reports_its_golden_as_unused_until_blessed() {
    let scratch = Scratch::new("unused");
    let sweep = std::fs::read_to_string(scratch.sweep()).unwrap();
    let removed = sweep.replace("        - {name: diagonal, size: [4], stride: [7]}\n", "");
    assert_ne!(removed, sweep);
    std::fs::write(scratch.sweep(), removed).unwrap();
    let (output, out) = scratch.run(&[], &[]);
    assert!(!output.status.success(), "{out}");
    for offset in [0, 3, 10] {
        for dtype in ["float16", "int64"] {
            let name =
                format!("golden::unused::as_strided/views/views__diagonal__{offset}::{dtype}");
            assert!(failed(&out, &name), "{name} in\n{out}");
        }
    }
    assert!(out.contains("is not used by any generated case"), "{out}");
    // Blessing removes them, entries and files.
    let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1")], &[]);
    assert!(output.status.success(), "{out}");
    assert!(
        out.contains("blessed: 0 golden(s) written, 6 removed"),
        "{out}"
    );
    assert!(!scratch
        .golden("views/views__diagonal__0.float16.npy")
        .exists());
    let manifest = std::fs::read_to_string(scratch.golden("views.json")).unwrap();
    assert!(!manifest.contains("diagonal"), "{manifest}");
    let (output, out) = scratch.run(&[], &[]);
    assert!(output.status.success(), "{out}");
}

#[test]
fn a_changed_case_makes_its_golden_stale_until_blessed() {
    let scratch = Scratch::new("stale");
    let sweep = std::fs::read_to_string(scratch.sweep()).unwrap();
    let changed = sweep.replace(
        "{name: diagonal, size: [4], stride: [7]}",
        "{name: diagonal, size: [3], stride: [7]}",
    );
    std::fs::write(scratch.sweep(), changed).unwrap();
    let (output, out) = scratch.run(&[], &[]);
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("stale golden: the case `views__diagonal__0::float16`"),
        "{out}"
    );
    assert!(out.contains(" 6 failed;"), "{out}");
    // A new seed makes every golden stale: they record the seed they were generated with.
    let reseeded = std::fs::read_to_string(scratch.sweep())
        .unwrap()
        .replace("seed: 1", "seed: 2");
    std::fs::write(scratch.sweep(), reseeded).unwrap();
    let (_, out) = scratch.run(&[], &["views__contiguous__0::int64"]);
    assert!(out.contains("was generated by opspec-sweep version 1 with seed 1; the sweep is now generated by version 1 with seed 2"), "{out}");
    let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1")], &[]);
    assert!(output.status.success(), "{out}");
    assert!(out.contains("blessed: 94 golden(s) written"), "{out}");
    let (output, out) = scratch.run(&[], &[]);
    assert!(output.status.success(), "{out}");
}

#[test]
fn blessing_is_refused_under_ci() {
    let scratch = Scratch::new("ci");
    let path = scratch.golden("views/views__diagonal__0.float16.npy");
    std::fs::remove_file(&path).unwrap();
    let before = std::fs::read_to_string(scratch.golden("views.json")).unwrap();
    let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1"), ("CI", "true")], &[]);
    assert_eq!(output.status.code(), Some(2), "{out}");
    assert!(
        out.contains("blessing (--bless or OPSPEC_BLESS) is asked for while CI is set: goldens are never written in CI"),
        "{out}"
    );
    assert!(!path.exists(), "nothing is written");
    assert_eq!(
        std::fs::read_to_string(scratch.golden("views.json")).unwrap(),
        before
    );
    // Without CI the same run writes it back.
    let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1")], &[]);
    assert!(output.status.success(), "{out}");
    assert!(path.exists());
}

#[test]
fn a_wrong_element_names_the_input_element_it_came_from() {
    let backend = fixtures::broken_reflect_backend();
    let name = "slice::sweep::modes::mode_stride_start__reflect__2__3::float32";
    let output = runner()
        .args(["--backend", &backend, "--exact", name])
        .output()
        .unwrap();
    let out = text(&output);
    assert!(!output.status.success(), "{out}");
    assert!(out.contains("out[1] holds in[4], expected in[3]"), "{out}");
    assert!(out.contains("out[2] holds in[2], expected in[1]"), "{out}");
}

#[test]
fn a_broken_round_trip_names_the_elements() {
    let backend = fixtures::faulty_backend();
    // The faulty backend flips a bit of element 0 of the output of the way back (its request
    // has an id of its own): in the round trip's result that is the input's in[0,0].
    let name = "slice::metamorphic::fill::pad__before::float32";
    let back = "slice::metamorphic::fill::pad__before::back::float32";
    let output = runner()
        .args([
            "--backend",
            &format!("{backend} --lie {back}"),
            "--exact",
            name,
        ])
        .output()
        .unwrap();
    let out = text(&output);
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("round trip: pad by FILL then STRICT_BOUNDS slice back"),
        "{out}"
    );
    assert!(
        out.contains("the round trip did not give the input back"),
        "{out}"
    );
    assert!(
        out.contains("(no input element), expected in[0,0]"),
        "{out}"
    );
}

#[test]
fn goldens_are_readable_by_numpy_without_this_project() {
    let has_numpy = Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_numpy {
        // A developer's machine may lack numpy (README's install step); CI installs it, so
        // there the check must run.
        assert!(
            std::env::var_os("CI").is_none(),
            "numpy is not installed, but CI must check golden/verify.py"
        );
        eprintln!("numpy is not installed: skipping golden/verify.py (CI installs it)");
        return;
    }
    let output = Command::new("python3")
        .arg(workspace().join("golden").join("verify.py"))
        .output()
        .unwrap();
    let out = text(&output);
    assert!(output.status.success(), "{out}");
    assert!(out.contains(", 0 problems"), "{out}");
}

#[test]
fn sweep_clauses_are_in_the_catalogue() {
    let specs = workspace().join("specs");
    let mut known = String::new();
    for entry in std::fs::read_dir(&specs).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".clauses.yaml") {
            known.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    let sweeps = opspec_generate::sweep::load_dirs(
        &[workspace().join("sweeps")],
        None,
        opspec::tensor::Limits::DEFAULT,
    );
    assert!(sweeps.errors.is_empty(), "{:?}", sweeps.errors);
    for generated in &sweeps.cases {
        for clause in &generated.case.clauses {
            assert!(
                known.contains(&format!("id: {clause}\n")),
                "{}: unknown clause {clause}",
                generated.case.trial_name()
            );
        }
    }
}

/// The `.npy` files under `dir`, recursively, as paths relative to it.
fn npy_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "npy") {
                let relative = path.strip_prefix(dir).unwrap();
                found.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

/// Which of `before` are no longer under `dir`.
fn missing(dir: &Path, before: &[String]) -> Vec<String> {
    let now = npy_files(dir);
    before
        .iter()
        .filter(|f| !now.contains(f))
        .cloned()
        .collect()
}

#[test]
fn blessing_with_a_missing_or_corrupt_manifest_keeps_every_golden() {
    let scratch = Scratch::new("manifest");
    let golden = scratch.0.join("golden");
    let before = npy_files(&golden);
    assert_eq!(before.len(), 70);
    for broken in [None, Some("{\"about\": \"cut short"), Some("")] {
        match broken {
            None => std::fs::remove_file(scratch.golden("views.json")).unwrap(),
            Some(text) => std::fs::write(scratch.golden("views.json"), text).unwrap(),
        }
        let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1")], &[]);
        assert!(output.status.success(), "{broken:?}: {out}");
        assert!(
            out.contains("blessed: 94 golden(s) written, 0 removed"),
            "{broken:?}: {out}"
        );
        assert_eq!(
            missing(&golden, &before),
            Vec::<String>::new(),
            "{broken:?}: {out}"
        );
        let (output, out) = scratch.run(&[], &[]);
        assert!(output.status.success(), "{broken:?}: the next run\n{out}");
    }
}

#[test]
fn blessing_with_a_private_sweeps_folder_keeps_the_goldens_of_other_sweeps() {
    // A private sweeps folder beside the repository's `golden/` (the default golden folder of
    // `OPSPEC_SWEEPS=private`) loads none of the repository's sweeps: blessing must not take
    // their goldens for unused ones.
    let scratch = Scratch::new("private");
    copy_dir(
        &workspace().join("golden").join("shuffle"),
        &scratch.0.join("golden").join("shuffle"),
    );
    let golden = scratch.0.join("golden");
    let before = npy_files(&golden);
    assert!(before.iter().any(|f| f.starts_with("shuffle")));
    let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1")], &[]);
    assert!(output.status.success(), "{out}");
    assert_eq!(missing(&golden, &before), Vec::<String>::new(), "{out}");
    assert!(scratch.0.join("golden/shuffle/bits.json").exists(), "{out}");
    assert!(
        scratch.0.join("golden/shuffle/transpose.json").exists(),
        "{out}"
    );
    assert!(out.contains("0 removed"), "{out}");
    let kept = format!(
        "kept: {} and",
        scratch.0.join("golden/shuffle/bits.json").display()
    );
    assert!(
        out.lines().any(|l| l.starts_with(&kept)),
        "the summary names what it kept:\n{out}"
    );
    // Without blessing they are still reported, never silently ignored.
    let (output, out) = scratch.run(&[], &[]);
    assert!(!output.status.success(), "{out}");
    assert!(failed(&out, "golden::unused::shuffle/bits.json"), "{out}");
}

#[test]
fn blessing_replaces_files_whole_and_lists_each_removal() {
    let scratch = Scratch::new("atomic");
    let sweep = std::fs::read_to_string(scratch.sweep()).unwrap();
    let changed = sweep
        .replace("        - {name: diagonal, size: [4], stride: [7]}\n", "")
        .replace(
            "{name: every_other, size: [7], stride: [2]}",
            "{name: every_other, size: [6], stride: [2]}",
        );
    std::fs::write(scratch.sweep(), changed).unwrap();
    // Second names for a manifest and a golden that blessing rewrites: a file rewritten in
    // place changes under both names; one replaced by a rename leaves the old one intact.
    let links = scratch.0.join("links");
    std::fs::create_dir_all(&links).unwrap();
    let rewritten = ["views.json", "views/views__every_other__0.float16.npy"];
    let mut old = Vec::new();
    for (i, relative) in rewritten.iter().enumerate() {
        let link = links.join(i.to_string());
        std::fs::hard_link(scratch.golden(relative), &link).unwrap();
        old.push(std::fs::read(&link).unwrap());
    }
    let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1")], &[]);
    assert!(output.status.success(), "{out}");
    for (i, relative) in rewritten.iter().enumerate() {
        let link = links.join(i.to_string());
        let kept = std::fs::read(&link).unwrap() == old[i];
        assert!(kept, "{relative} was written in place");
        let replaced = std::fs::read(scratch.golden(relative)).unwrap() != old[i];
        assert!(replaced, "{relative} was not rewritten:\n{out}");
    }
    assert!(out.contains("6 golden(s) written, 6 removed"), "{out}");
    // At offset 0 the diagonal has outputs, files; at 3 and 10 it expects an error, an entry.
    for dtype in ["float16", "int64"] {
        let line = format!(
            "removed: {}",
            scratch
                .golden(&format!("views/views__diagonal__0.{dtype}.npy"))
                .display()
        );
        assert!(out.lines().any(|l| l == line), "{line} in\n{out}");
        for offset in [3, 10] {
            let line = format!(
                "removed: entry `views__diagonal__{offset}::{dtype}` of {}",
                scratch.golden("views.json").display()
            );
            assert!(out.lines().any(|l| l == line), "{line} in\n{out}");
        }
    }
    // Nothing half-written or temporary is left beside the goldens.
    let mut names: Vec<String> = std::fs::read_dir(scratch.golden("views"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.retain(|n| !n.ends_with(".npy"));
    assert_eq!(names, Vec::<String>::new());
    let (output, out) = scratch.run(&[], &[]);
    assert!(output.status.success(), "{out}");
}

#[test]
fn an_expectation_naming_a_generated_trial_matches_it() {
    let scratch = Scratch::new("expect");
    let trial = "as_strided::sweep::views::offsets__0::float16";
    let expectations = scratch.0.join("known.txt");
    std::fs::write(
        &expectations,
        format!("{trial} | as_strided.view.formula | defect | listed although it passes\n"),
    )
    .unwrap();
    let (output, out) = scratch.run(&[], &["--expectations", expectations.to_str().unwrap()]);
    assert!(!output.status.success(), "{out}");
    // The entry is matched (and stale, since the reference passes the trial), not unmatched.
    assert!(failed(&out, trial), "{out}");
    assert!(
        out.contains("stale expectation: this case now passes"),
        "{out}"
    );
    assert!(!out.contains("matches no case"), "{out}");
}

#[test]
fn a_bless_that_cannot_write_its_manifest_leaves_the_goldens_as_they_were() {
    // The manifest cannot be written (a fault injected there): no golden of that sweep may
    // have been replaced, or the old manifest would describe new files.
    let scratch = Scratch::new("interrupted");
    let sweep = std::fs::read_to_string(scratch.sweep()).unwrap();
    let changed = sweep.replace(
        "{name: every_other, size: [7], stride: [2]}",
        "{name: every_other, size: [6], stride: [2]}",
    );
    std::fs::write(scratch.sweep(), changed).unwrap();
    let golden = scratch.golden("views/views__every_other__0.float16.npy");
    let old = std::fs::read(&golden).unwrap();
    let (output, out) = scratch.run(
        &[("OPSPEC_BLESS", "1"), ("OPSPEC_BLESS_FAULT", "manifest")],
        &[],
    );
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("views.json"),
        "the error names the manifest:\n{out}"
    );
    assert!(std::fs::read(&golden).unwrap() == old, "{out}");
    // The goldens still match their manifest: the changed cases are stale, none is corrupt.
    let (output, out) = scratch.run(&[], &[]);
    assert!(!output.status.success(), "{out}");
    assert!(!out.contains("fails its content hash"), "{out}");
    assert!(
        out.contains("stale golden: the case `views__every_other__0::float16`"),
        "{out}"
    );
    // Blessing again finishes the job and leaves no temporary file.
    let (output, out) = scratch.run(&[("OPSPEC_BLESS", "1")], &[]);
    assert!(output.status.success(), "{out}");
    let hidden: Vec<_> = std::fs::read_dir(scratch.golden("views"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert_eq!(hidden, Vec::<String>::new());
    let (output, out) = scratch.run(&[], &[]);
    assert!(output.status.success(), "{out}");
}
