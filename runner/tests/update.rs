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
    let mut files: Vec<PathBuf> = std::fs::read_dir(workspace().join("runner/backends"))
        .unwrap()
        .map(|e| e.unwrap().path().join("known-failures.txt"))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    for original in files {
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
        let json = serde_json::json!({"backend": "engine", "trials": trials});
        std::fs::write(&report, json.to_string()).unwrap();
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
}
