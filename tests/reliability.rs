//! `docs/reliability.md` names, for each class of hostile input, the test that shows what the
//! harness does with it. This checks that every test it names exists, so that the page cannot
//! promise a test that was renamed or removed.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The backticked names in the last cell of every table row of the page.
fn named_tests(page: &str) -> Vec<String> {
    page.lines()
        .filter(|line| line.starts_with('|'))
        .filter_map(|row| row.trim_end_matches('|').rsplit('|').next())
        .flat_map(|cell| cell.split('`').skip(1).step_by(2).map(str::to_owned))
        .collect()
}

/// The text of every Rust file under `dir`, skipping build output.
fn rust_sources(dir: &Path, into: &mut String) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() && name != "target" && !name.starts_with('.') {
            rust_sources(&path, into);
        } else if name.ends_with(".rs") {
            into.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
}

#[test]
fn every_test_the_reliability_page_names_exists() {
    let page = std::fs::read_to_string(repo().join("docs/reliability.md")).unwrap();
    let names = named_tests(&page);
    assert!(
        names.len() > 40,
        "the page names only {} tests",
        names.len()
    );
    let mut sources = String::new();
    for dir in ["src", "tests", "runner", "crates"] {
        rust_sources(&repo().join(dir), &mut sources);
    }
    // The scripts' tests (scripts/*/test_*.py), as `fn name(` too.
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(repo().join("scripts"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .flat_map(|folder| std::fs::read_dir(folder).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("test_") && name.ends_with(".py")
        })
        .collect();
    scripts.sort();
    for path in scripts {
        let text = std::fs::read_to_string(&path).unwrap();
        sources.push_str(&text.replace("def test_", "fn test_"));
    }
    let missing: Vec<&String> = names
        .iter()
        .filter(|name| {
            if name.ends_with(".rs") {
                !repo().join(name.as_str()).is_file()
            } else {
                !sources.contains(&format!("fn {name}("))
            }
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/reliability.md names tests that do not exist: {missing:?}"
    );
}

#[test]
fn a_renamed_test_is_found() {
    let page = "| input | what | `no_such_test_anywhere`, `tests/reliability.rs` |\n";
    assert_eq!(
        named_tests(page),
        ["no_such_test_anywhere", "tests/reliability.rs"]
    );
}
