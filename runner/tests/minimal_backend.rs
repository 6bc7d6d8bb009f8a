//! The minimal backend of docs/protocol.md (`runner/backends/minimal/backend.py`, plain Python):
//! the page quotes the file exactly, a whole run against it passes every shuffle and slice trial
//! with the other ops excluded by its hello, and the same backend with a planted REFLECT bug
//! fails the REFLECT trials, citing the clause it breaks.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

const BACKEND: &str = "runner/backends/minimal/backend.py";

/// The text between the line `start` and the next line that is exactly "```".
fn block_after<'a>(page: &'a str, start: &str) -> Option<&'a str> {
    let from = page.find(&format!("\n{start}\n"))? + start.len() + 2;
    let length = page[from..].find("\n```\n")? + 1;
    Some(&page[from..from + length])
}

#[test]
fn the_protocol_page_quotes_the_minimal_backend_exactly() {
    let root = repository();
    let page = std::fs::read_to_string(root.join("docs/protocol.md")).unwrap();
    let file = std::fs::read_to_string(root.join(BACKEND)).unwrap();
    let quoted = block_after(&page, "```python title=runner/backends/minimal/backend.py")
        .expect("docs/protocol.md has a ```python title=runner/backends/minimal/backend.py block");
    assert!(
        quoted == file,
        "the copy of {BACKEND} in docs/protocol.md differs from the file; paste the file into \
         the block again"
    );
}

/// Runs the whole suite against `backend` (a Python file of the repository) and returns the
/// exit code and the JSON report.
fn whole_run(backend: &str) -> (Option<i32>, Value) {
    let root = repository();
    let scratch = tempfile::tempdir().unwrap();
    let report = scratch.path().join("report.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for (name, _) in std::env::vars() {
        if name.starts_with("OPSPEC_") {
            command.env_remove(name);
        }
    }
    let output = command
        .current_dir(&root)
        .arg("-q")
        .arg("--backend")
        .arg(format!("python3 {backend}"))
        .arg("--report-json")
        .arg(&report)
        .arg("--backend-log")
        .arg(scratch.path().join("backend.log"))
        .output()
        .expect("the runner starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let json = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report ({e}); the run printed:\n{text}"));
    (output.status.code(), serde_json::from_str(&json).unwrap())
}

fn trials(report: &Value) -> &[Value] {
    report["trials"].as_array().unwrap()
}

#[test]
fn the_minimal_backend_passes_every_shuffle_and_slice_trial() {
    let (code, report) = whole_run(BACKEND);
    assert_eq!(code, Some(0));
    let mut passed = 0;
    for trial in trials(&report) {
        let (name, status) = (trial["name"].as_str().unwrap(), &trial["status"]);
        match trial["op"].as_str().unwrap() {
            "shuffle" | "slice" => {
                assert_eq!(status, "passed", "{name}: {}", trial["message"]);
                passed += 1;
            }
            op => {
                assert_eq!(status, "excluded", "{name}");
                assert_eq!(trial["excluded_by"], format!("op {op}"), "{name}");
            }
        }
    }
    // Every spec case and sweep of both ops, round trips included.
    assert!(passed > 3000, "{passed} trials passed");
    assert_eq!(report["passed"], passed);
}

#[test]
fn a_planted_reflect_bug_fails_the_reflect_trials_citing_the_mirror_clause() {
    let (code, report) = whole_run("runner/tests/backends/minimal_broken_reflect.py");
    assert_eq!(code, Some(101), "libtest's code for a failed trial");
    let failed: Vec<&Value> = trials(&report)
        .iter()
        .filter(|t| t["status"] == "failed")
        .collect();
    assert!(failed.len() > 100, "{} failed", failed.len());
    let mut citing = 0;
    for trial in &failed {
        let name = trial["name"].as_str().unwrap();
        assert!(
            name.starts_with("slice::") && name.contains("reflect"),
            "{name} failed"
        );
        let clauses = trial["clauses"].as_array().unwrap();
        citing += usize::from(clauses.iter().any(|c| c == "slice.reflect.mirror"));
    }
    // Each generated trial cites its own mode's clauses, so every failure names the mirror.
    assert_eq!(
        citing,
        failed.len(),
        "{citing} of {} failures cite slice.reflect.mirror",
        failed.len()
    );
}

/// GitHub's anchor of a Markdown heading: lower case, spaces to `-`, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn the_links_of_the_protocol_page_into_the_semantics_reach_a_heading() {
    let root = repository();
    let semantics = std::fs::read_to_string(root.join("docs/semantics.md")).unwrap();
    let anchors: Vec<String> = semantics
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor(line.trim_start_matches('#')))
        .collect();
    assert!(anchors.contains(&"22-modes".to_owned()), "{anchors:?}");
    let mut links = 0;
    for page in ["docs/protocol.md", "README.md"] {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        // Links spelled with `docs/`, as crates/spec/tests/semantics.rs requires of every citation.
        for link in text.split("docs/semantics.md#").skip(1) {
            let target: String = link.chars().take_while(|&c| c != ')').collect();
            assert!(
                anchors.contains(&target),
                "{page} links to the semantics' #{target}, which no heading has"
            );
            links += 1;
        }
    }
    assert!(links >= 10, "{links} links");
}
