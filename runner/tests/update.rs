//! `runner update-expectations`: a known-failures file rewritten from a run's report keeps
//! every entry's words, drops what is stale, and adds new failures as untriaged entries that
//! fail the next run until a person triages them.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    command.current_dir(workspace());
    command
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn update(report: &Path, file: &Path) -> Output {
    runner()
        .arg("update-expectations")
        .args([report, file])
        .output()
        .unwrap()
}

/// The fingerprint a report gives the known-failures file its run read (`run.expectations`):
/// the 64-bit FNV-1a hash of its bytes, in 16 hex digits.
fn fingerprint(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// A JSON report of `trials` from a whole run that read a known-failures file of fingerprint
/// `expectations` (empty: none).
fn report_json(trials: &[serde_json::Value], expectations: &str) -> String {
    serde_json::json!({
        "backend": "engine",
        "trials": trials,
        "run": {
            "runner": "0.1.0", "selected": trials.len(), "fingerprint": "0", "judged": true,
            "expectations": expectations,
        },
    })
    .to_string()
}

/// Every engine adapter's known-failures file.
fn engine_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace().join("runner/backends"))
        .unwrap()
        .map(|e| e.unwrap().path().join("known-failures.txt"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    files
}

/// A trial the entry at `line` covered, still failing.
fn covered(line: usize) -> serde_json::Value {
    serde_json::json!({
        "name": format!("x::covered::{line}"), "op": "slice", "dtype": null,
        "status": "known_failure", "message": "known failure", "seconds": 0.0,
        "clauses": ["slice.reflect.mirror"],
        "known": {"selector": "", "clause": "", "class": "semantics", "reason": "", "line": line},
    })
}

/// The trial of a stale entry at `line`: its case passes now.
fn passes_now(line: usize) -> serde_json::Value {
    serde_json::json!({
        "name": format!("x::stale::{line}"), "op": "slice", "dtype": null, "status": "failed",
        "seconds": 0.0,
        "message": format!("stale expectation: this case now passes; remove line {line} (`x: y`) from the expectations file"),
        "clauses": ["slice.reflect.mirror"],
    })
}

/// The entry lines of a known-failures file, with their numbers.
fn numbered(text: &str) -> Vec<(usize, &str)> {
    (text.lines().enumerate())
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// The entry lines of a known-failures file (no comments, no blank lines).
fn entries(text: &str) -> Vec<&str> {
    (text.lines().map(str::trim))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

/// On a copy of each engine's file, with a report in which every entry covered a trial but
/// the first, which is stale, and one trial newly fails: every other entry is kept word for
/// word (its reason and condition too), the stale one goes, the new failure is untriaged.
#[test]
fn every_engines_file_keeps_its_reasons() {
    let scratch = tempfile::tempdir().unwrap();
    for original in engine_files() {
        let old = std::fs::read_to_string(&original).unwrap();
        let numbered: Vec<(usize, &str)> = (old.lines().enumerate())
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
            .collect();
        let (stale_line, stale_text) = numbered[0];
        let mut trials: Vec<serde_json::Value> = numbered[1..]
            .iter()
            .map(|(line, _)| {
                serde_json::json!({
                    "name": format!("x::covered::{line}"), "op": "slice", "dtype": null,
                    "status": "known_failure", "message": "known failure", "seconds": 0.0,
                    "clauses": ["slice.reflect.mirror"],
                    "known": {"selector": "", "clause": "", "class": "semantics", "reason": "", "line": line},
                })
            })
            .collect();
        trials.push(serde_json::json!({
            "name": "x::stale", "op": "slice", "dtype": null, "status": "failed", "seconds": 0.0,
            "message": format!("stale expectation: this case now passes; remove line {stale_line} (`x: y`) from the expectations file"),
            "clauses": ["slice.reflect.mirror"],
        }));
        trials.push(serde_json::json!({
            "name": "slice::reflect::new_failure::float32", "op": "slice", "dtype": "float32",
            "status": "failed", "seconds": 0.0, "clauses": ["slice.reflect.mirror"],
            "message": "case:   slice::reflect::new_failure::float32\nat [3]: expected 2, got 1\nreplay: r",
        }));
        let report = scratch.path().join("report.json");
        std::fs::write(&report, report_json(&trials, &fingerprint(old.as_bytes()))).unwrap();
        let copy = scratch.path().join("known-failures.txt");
        std::fs::write(&copy, &old).unwrap();
        let run = update(&report, &copy);
        assert!(
            run.status.success(),
            "{}: {}",
            original.display(),
            text(&run)
        );
        let new = std::fs::read_to_string(&copy).unwrap();
        let kept = entries(&new);
        for (_, line) in &numbered[1..] {
            assert!(
                kept.contains(line),
                "{}: the entry `{line}` is lost",
                original.display()
            );
        }
        assert!(
            !kept.contains(&stale_text) || numbered[1..].iter().any(|(_, l)| *l == stale_text),
            "{}: the stale entry is kept",
            original.display()
        );
        assert_eq!(
            kept.last(),
            Some(
                &"slice::reflect::new_failure::float32 | slice.reflect.mirror | untriaged | at [3]: expected 2, got 1"
            ),
            "{}",
            original.display()
        );
        assert_eq!(kept.len(), numbered.len(), "{}", original.display());
    }
}

/// A run with the file, the update, a run with the updated file that is no pass while an
/// entry is untriaged, and a green run once it is triaged.
#[test]
fn untriaged_entries_fail_the_run_until_triaged() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("known.txt");
    let report = scratch.path().join("report.json");
    let backend = fixtures::broken_reflect_backend();
    // The hand-written REFLECT cases only: the broken REFLECT of the sweeps is new.
    std::fs::write(
        &file,
        "clause in slice::reflect::* | slice.reflect.mirror | semantics | reflects one off\n",
    )
    .unwrap();
    let run = |file: &Path| {
        runner()
            .args(["-q", "--backend", &backend, "--expectations"])
            .arg(file)
            .arg("--report-json")
            .arg(&report)
            .arg("--backend-log")
            .arg(scratch.path().join("backend.log"))
            .output()
            .unwrap()
    };
    let first = run(&file);
    assert_eq!(first.status.code(), Some(101), "{}", text(&first));
    let updated = update(&report, &file);
    assert!(updated.status.success(), "{}", text(&updated));
    let new = std::fs::read_to_string(&file).unwrap();
    assert!(new.contains("untriaged"), "{new}");
    assert!(
        text(&updated).contains("untriaged added"),
        "{}",
        text(&updated)
    );
    let second = run(&file);
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    assert!(
        text(&second).contains("are of untriaged entries"),
        "{}",
        text(&second)
    );
    std::fs::write(&file, new.replace("| untriaged |", "| semantics |")).unwrap();
    let third = run(&file);
    assert_eq!(third.status.code(), Some(0), "{}", text(&third));
    // Nothing changed since: the file comes back byte for byte, and is not written.
    let triaged = std::fs::read(&file).unwrap();
    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    let same = update(&report, &file);
    assert!(same.status.success(), "{}", text(&same));
    assert!(text(&same).contains("unchanged"), "{}", text(&same));
    assert_eq!(std::fs::read(&file).unwrap(), triaged);
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        modified
    );
    // Edited after the run (a comment line on top shifts every line): refused, the file kept.
    let edited = [b"# a note\n".as_slice(), &triaged].concat();
    std::fs::write(&file, &edited).unwrap();
    let refused = update(&report, &file);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert_eq!(std::fs::read(&file).unwrap(), edited);
}

/// Every engine's file, after a run in which every entry covered a failing trial: the update
/// leaves it byte for byte as it was. Edited after the run (two comment lines on top, so that
/// every line number moves), or another engine's file: refused, naming both files, nothing
/// written, so no entry is lost.
#[test]
fn the_update_applies_a_report_only_to_the_file_its_run_read() {
    let scratch = tempfile::tempdir().unwrap();
    let files = engine_files();
    for (k, original) in files.iter().enumerate() {
        let old = std::fs::read(original).unwrap();
        let text_of = String::from_utf8(old.clone()).unwrap();
        let trials: Vec<serde_json::Value> = numbered(&text_of)
            .iter()
            .map(|(line, _)| covered(*line))
            .collect();
        let report = scratch.path().join("report.json");
        std::fs::write(&report, report_json(&trials, &fingerprint(&old))).unwrap();
        let copy = scratch.path().join("known-failures.txt");
        std::fs::write(&copy, &old).unwrap();
        let same = update(&report, &copy);
        assert!(
            same.status.success(),
            "{}: {}",
            original.display(),
            text(&same)
        );
        assert!(text(&same).contains("unchanged"), "{}", text(&same));
        assert_eq!(std::fs::read(&copy).unwrap(), old, "{}", original.display());
        // Two comment lines added on top since the run: the stale entry of the report's
        // line 4 is now another one.
        let stale: Vec<serde_json::Value> = numbered(&text_of)
            .iter()
            .enumerate()
            .map(|(i, (line, _))| {
                if i == 0 {
                    passes_now(*line)
                } else {
                    covered(*line)
                }
            })
            .collect();
        std::fs::write(&report, report_json(&stale, &fingerprint(&old))).unwrap();
        let edited = [b"# one\n# two\n".as_slice(), &old].concat();
        std::fs::write(&copy, &edited).unwrap();
        let refused = update(&report, &copy);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        let message = text(&refused);
        assert!(
            message.contains(&copy.display().to_string())
                && message.contains(&report.display().to_string())
                && message.contains("is not the known-failures file the run of")
                && message.contains("nothing was written"),
            "{message}"
        );
        assert_eq!(std::fs::read(&copy).unwrap(), edited);
        // Another engine's file.
        let other = std::fs::read(&files[(k + 1) % files.len()]).unwrap();
        std::fs::write(&copy, &other).unwrap();
        let refused = update(&report, &copy);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert_eq!(std::fs::read(&copy).unwrap(), other);
    }
}

/// A report that cannot say which file its run read (none, an older runner), or holds one
/// part of a run or the trials a name filter selected, is refused; a run without a known-failures file may write a new one.
#[test]
fn reports_that_cannot_vouch_for_the_file_are_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("k.txt");
    let entry = "slice::a::* | slice.reflect.mirror | semantics | why\n";
    std::fs::write(&file, entry).unwrap();
    let report = scratch.path().join("r.json");
    let failed = serde_json::json!({
        "name": "slice::reflect::x::int8", "op": "slice", "dtype": "int8", "status": "failed",
        "seconds": 0.0, "clauses": ["slice.reflect.mirror"], "message": "at [0]: wrong",
    });
    let cases = [
        (
            serde_json::json!({"backend": "b", "trials": [failed]}).to_string(),
            "does not say which known-failures file",
        ),
        (
            report_json(std::slice::from_ref(&failed), ""),
            "read no known-failures file",
        ),
        (
            report_json(
                std::slice::from_ref(&failed),
                &fingerprint(entry.as_bytes()),
            )
            .replace("\"judged\"", "\"partition\": \"1/2\", \"judged\""),
            "is the report of part 1/2",
        ),
        (
            report_json(
                std::slice::from_ref(&failed),
                &fingerprint(entry.as_bytes()),
            )
            .replace("\"judged\"", "\"filter\": \"slice::reflect\", \"judged\""),
            "the trials `slice::reflect` selects",
        ),
    ];
    for (json, expected) in cases {
        std::fs::write(&report, json).unwrap();
        let refused = update(&report, &file);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert!(text(&refused).contains(expected), "{}", text(&refused));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), entry);
    }
    // No known-failures file at the run, and none yet: written new.
    std::fs::write(&report, report_json(&[failed], "")).unwrap();
    let new = scratch.path().join("new.txt");
    let made = update(&report, &new);
    assert!(made.status.success(), "{}", text(&made));
    assert!(std::fs::read_to_string(&new)
        .unwrap()
        .contains("slice::reflect::x::int8 | slice.reflect.mirror | untriaged | at [0]: wrong"),);
}

/// `--out` naming the report (or FILE being the report) is refused before anything is read
/// or written; the report is kept.
#[test]
fn an_output_onto_the_report_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("k.txt");
    let entry = "slice::a::* | slice.reflect.mirror | semantics | why\n";
    std::fs::write(&file, entry).unwrap();
    let report = scratch.path().join("r.json");
    let json = report_json(&[covered(1)], &fingerprint(entry.as_bytes()));
    std::fs::write(&report, &json).unwrap();
    let link = scratch.path().join("link.json");
    std::os::unix::fs::symlink(&report, &link).unwrap();
    for out in [&report, &link, &scratch.path().join("./r.json")] {
        let refused = runner()
            .arg("update-expectations")
            .args([&report, &file])
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert!(
            text(&refused).contains("is the report") && text(&refused).contains("--out"),
            "{}",
            text(&refused)
        );
        assert_eq!(std::fs::read_to_string(&report).unwrap(), json);
    }
    let refused = update(&report, &report);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert_eq!(std::fs::read_to_string(&report).unwrap(), json);
}

/// A known-failures file that is a FIFO, or a link to `/dev/zero`, is refused before it is
/// read (nothing waits, nothing fills the memory), as `--expectations` refuses it.
#[test]
fn a_known_failures_file_that_is_not_a_regular_file_is_refused_without_waiting() {
    let scratch = tempfile::tempdir().unwrap();
    let fifo = scratch.path().join("fifo.txt");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let zero = scratch.path().join("zero.txt");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let report = scratch.path().join("r.json");
    std::fs::write(&report, report_json(&[covered(1)], "0123456789abcdef")).unwrap();
    for (file, what) in [(&fifo, "FIFO"), (&zero, "character device")] {
        let started = std::time::Instant::now();
        let mut child = runner()
            .arg("update-expectations")
            .args([&report, file])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = started + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("the update waited on {}", file.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        assert!(text(&output).contains(what), "{}", text(&output));
    }
}

/// The new file keeps the old one's permission bits; a file with a second hard link, or a
/// read-only one, is refused (a new file would part it from the other link, and writing in
/// place could leave it half written), both links kept as they were; a symbolic link is
/// written through and kept.
#[test]
fn the_update_keeps_the_mode_and_refuses_hard_links_and_read_only_files() {
    use std::os::unix::fs::PermissionsExt;
    let scratch = tempfile::tempdir().unwrap();
    let old = "slice::a::* | slice.reflect.mirror | semantics | gone\nslice::b::* | slice.reflect.mirror | semantics | kept\n";
    let report = scratch.path().join("r.json");
    std::fs::write(
        &report,
        report_json(&[passes_now(1), covered(2)], &fingerprint(old.as_bytes())),
    )
    .unwrap();
    let file = scratch.path().join("k.txt");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    let set_mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    std::fs::write(&file, old).unwrap();
    set_mode(&file, 0o640);
    let done = update(&report, &file);
    assert!(done.status.success(), "{}", text(&done));
    assert!(
        text(&done).contains("1 entry removed (line 1)"),
        "{}",
        text(&done)
    );
    assert_eq!(mode(&file), 0o640);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "slice::b::* | slice.reflect.mirror | semantics | kept\n"
    );
    // A second hard link, read-only or not.
    for permissions in [0o644, 0o444] {
        let _ = std::fs::remove_file(&file);
        std::fs::write(&file, old).unwrap();
        let other = scratch.path().join(format!("other-{permissions:o}.txt"));
        std::fs::hard_link(&file, &other).unwrap();
        set_mode(&file, permissions);
        let refused = update(&report, &file);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert!(
            text(&refused).contains("has 2 hard links"),
            "{}",
            text(&refused)
        );
        assert_eq!(std::fs::read_to_string(&other).unwrap(), old);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), old);
        assert_eq!(mode(&file), permissions);
        std::fs::remove_file(&other).unwrap();
    }
    // Read-only, one link.
    set_mode(&file, 0o444);
    let refused = update(&report, &file);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("is read-only (mode 0444)"),
        "{}",
        text(&refused)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), old);
    set_mode(&file, 0o644);
    // Through a symbolic link: the target is replaced, the link kept.
    let link = scratch.path().join("link.txt");
    std::os::unix::fs::symlink("k.txt", &link).unwrap();
    let done = update(&report, &link);
    assert!(done.status.success(), "{}", text(&done));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&file).unwrap().ends_with("kept\n"));
}

/// The files in `folder` whose names end in `.writing`: temporary files of a write.
fn temporaries(folder: &Path) -> Vec<String> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".writing"))
        .collect()
}

/// SIGTERM, SIGINT or SIGHUP while the new file is written leaves no temporary file: the signal
/// takes effect once the file is replaced, so the file is the new one, whole. The write pauses
/// at a marker file until the signal is pending, so the signal comes during it however loaded
/// the machine (no race between the test's polling and the write). A
/// temporary that an update killed outright (SIGKILL) left is removed by the next one, which
/// names it.
#[test]
fn a_signal_during_the_write_leaves_no_temporary_file() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("k.txt");
    let old = "slice::a::* | slice.reflect.mirror | semantics | gone\n\
               slice::b::* | slice.reflect.mirror | semantics | kept\n";
    let new = &old[old.find('\n').unwrap() + 1..];
    let report = scratch.path().join("r.json");
    std::fs::write(
        &report,
        report_json(&[passes_now(1), covered(2)], &fingerprint(old.as_bytes())),
    )
    .unwrap();
    let marker = scratch.path().join("paused");
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        std::fs::write(&file, old).unwrap();
        let _ = std::fs::remove_file(&marker);
        // The write pauses, its temporary file written and signals held, until a signal is
        // pending (runner/src/reports/output.rs, `pause_for_a_test`).
        let mut child = runner()
            .arg("update-expectations")
            .args([&report, &file])
            .env("OPSPEC_WRITE_PAUSE", &marker)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !marker.exists() {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the update ended before its write"
            );
            assert!(std::time::Instant::now() < deadline, "no write seen");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(
            temporaries(scratch.path()).len(),
            1,
            "the write's temporary file"
        );
        // SAFETY: signals the child started above.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = child.wait().unwrap();
        assert!(!status.success(), "{status:?}");
        assert_eq!(
            temporaries(scratch.path()),
            Vec::<String>::new(),
            "signal {signal}"
        );
        // The signal waited for the rename: the file is the new one, whole.
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            new,
            "signal {signal}"
        );
    }
    std::fs::remove_file(&marker).unwrap();
    // What an update killed outright left: removed by the next, and named.
    std::fs::write(&file, old).unwrap();
    let dead = 4_194_399; // above any pid Linux gives (PID_MAX_LIMIT is 2^22)
    let leftover = scratch.path().join(format!(".k.txt.{dead}.0.writing"));
    std::fs::write(&leftover, "half").unwrap();
    let done = update(&report, &file);
    assert!(done.status.success(), "{}", text(&done));
    assert!(!leftover.exists());
    assert!(
        text(&done).contains(&format!("removed {}", leftover.display())),
        "{}",
        text(&done)
    );
}

/// A run given a name filter records it in its report (so that no update narrows an entry from
/// a run that saw only some of its trials); a run of every trial records none.
#[test]
fn a_filtered_run_records_its_filter() {
    let scratch = tempfile::tempdir().unwrap();
    let report = scratch.path().join("r.json");
    for (args, filter) in [
        (
            vec!["slice::reflect::"],
            serde_json::json!("slice::reflect::"),
        ),
        (
            vec!["--skip", "slice::"],
            serde_json::json!("--skip slice::"),
        ),
        (vec![], serde_json::Value::Null),
    ] {
        let ran = runner()
            .arg("-q")
            .arg("--report-json")
            .arg(&report)
            .args(&args)
            .output()
            .unwrap();
        assert!(ran.status.success(), "{}", text(&ran));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(json["run"]["filter"], filter, "{args:?}");
    }
}
