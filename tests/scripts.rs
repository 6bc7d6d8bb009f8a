//! The scripts of `scripts/` are all in use and every script path the repository names exists:
//!
//! - every file under `scripts/` (but `scripts/README.md`, which lists them all) is named by its
//!   path, `scripts/<folder>/<file>`, somewhere outside itself and that README: CI (`.ci/run`),
//!   README.md, CONTRIBUTING.md, BENCHMARKS.md, `docs/`, the Rust sources and tests, the
//!   adapters of `runner/backends/`, the mutation configuration, or another script. A script
//!   nothing names is one nobody runs or one whose use is told nowhere;
//! - every `scripts/<path>` those files name exists (a file or a folder), so that a script moved
//!   or renamed leaves no command, message or document naming its old path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The files outside the folders below that may name a script.
const FILES: &[&str] = &[
    ".ci/run",
    "README.md",
    "CONTRIBUTING.md",
    "BENCHMARKS.md",
    "Cargo.toml",
    ".cargo/mutants.toml",
    "mutants-equivalent.toml",
];

/// The folders whose text files may name a script: the documents, the Rust sources and tests of
/// every crate, the adapters (under `runner/`) and the scripts themselves.
const FOLDERS: &[&str] = &["docs", "src", "tests", "crates", "runner", "scripts"];

/// The page that lists every script; naming one there does not count as a use.
const LIST: &str = "scripts/README.md";

/// This file, whose examples name made-up scripts: it is not read.
const ITSELF: &str = "tests/scripts.rs";

/// The repository-relative path of `path`, with `/` between its parts.
fn relative(path: &Path) -> String {
    let parts: Vec<String> = path
        .strip_prefix(root())
        .unwrap_or(path)
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// Every file under `dir`, skipping build output, hidden entries and Python's caches.
fn files_under(dir: &Path, into: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "__pycache__" {
            continue;
        }
        if path.is_dir() {
            files_under(&path, into);
        } else if !name.ends_with(".pyc") {
            into.push(path);
        }
    }
}

/// The text of every file that may name a script, by repository-relative path (files that are
/// not UTF-8 text, such as images, are left out).
fn texts() -> BTreeMap<String, String> {
    let mut paths: Vec<PathBuf> = FILES.iter().map(|file| root().join(file)).collect();
    for folder in FOLDERS {
        files_under(&root().join(folder), &mut paths);
    }
    paths
        .into_iter()
        .filter_map(|path| {
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            String::from_utf8(bytes)
                .ok()
                .map(|text| (relative(&path), text))
        })
        .filter(|(path, _)| path != ITSELF)
        .collect()
}

/// The scripts: every file under `scripts/` but the README that lists them.
fn scripts() -> Vec<String> {
    let mut paths = Vec::new();
    files_under(&root().join("scripts"), &mut paths);
    paths
        .iter()
        .map(|path| relative(path))
        .filter(|path| path != LIST)
        .collect()
}

/// Whether `c` may be part of a path as the documents write them.
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Every `scripts/...` path of `text`, as written, with its byte offset: the longest run of
/// path characters from a `scripts/` that begins no path (`runner/scripts/`, `myscripts/`) but
/// may follow a root filled in (`{root}/scripts/`), without a sentence's closing `.`.
fn named_paths(text: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    for (start, _) in text.match_indices("scripts/") {
        let mut before = text[..start].chars().rev();
        let inside = match before.next() {
            // `{root}/scripts/...`: the repository's folder, under a root a program fills in.
            Some('/') => before.next().is_some_and(path_char),
            previous => previous.is_some_and(path_char),
        };
        if inside {
            continue; // a folder `scripts` inside another path, or a longer word
        }
        let rest = &text[start..];
        let end = rest.find(|c: char| !path_char(c)).unwrap_or(rest.len());
        found.push((start, rest[..end].trim_end_matches('.')));
    }
    found
}

/// Whether `text` names `script` as a whole path (not as the start of a longer one).
fn names(text: &str, script: &str) -> bool {
    named_paths(text).iter().any(|(_, named)| *named == script)
}

/// The scripts of `scripts` that no text of `texts` names, but their own and the list's.
fn unnamed<'a>(scripts: &'a [String], texts: &BTreeMap<String, String>) -> Vec<&'a str> {
    scripts
        .iter()
        .filter(|script| {
            !texts
                .iter()
                .any(|(path, text)| path != *script && path != LIST && names(text, script))
        })
        .map(String::as_str)
        .collect()
}

/// `file: scripts/...` for every script path of `texts` that `exists` says is missing.
fn dangling(texts: &BTreeMap<String, String>, exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in texts {
        for (start, named) in named_paths(text) {
            if !exists(named) {
                let line = text[..start].matches('\n').count() + 1;
                found.push(format!("{path}:{line}: {named}"));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn every_script_is_named_outside_itself() {
    let scripts = scripts();
    assert!(
        scripts.len() > 20,
        "only {} scripts: {scripts:?}",
        scripts.len()
    );
    let missing = unnamed(&scripts, &texts());
    assert!(
        missing.is_empty(),
        "scripts named nowhere but in themselves and {LIST} (looked in {} and {}/): {}\n\
         name each where it is used (.ci/run, a test, a document's command) or say in \
         CONTRIBUTING.md or BENCHMARKS.md what it is for, or remove it",
        FILES.join(", "),
        FOLDERS.join("/, "),
        missing.join(", ")
    );
}

#[test]
fn every_script_path_named_exists() {
    let missing = dangling(&texts(), |path| root().join(path).exists());
    assert!(
        missing.is_empty(),
        "script paths named that do not exist (moved or renamed? name the path it has now):\n{}",
        missing.join("\n")
    );
}

#[test]
fn paths_are_read_whole_and_without_a_closing_full_stop() {
    let text = "Run `scripts/a/b.py --x`, then scripts/a/c.sh. Not runner/scripts/d.py nor \
                myscripts/e.py; the folder scripts/a/ and {root}/scripts/f.py.";
    let paths: Vec<&str> = named_paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        paths,
        [
            "scripts/a/b.py",
            "scripts/a/c.sh",
            "scripts/a/",
            "scripts/f.py"
        ]
    );
    assert!(names(text, "scripts/a/c.sh"));
    assert!(!names("scripts/a/b.pyc", "scripts/a/b.py"));
    assert!(!names("scripts/a/b.py_old", "scripts/a/b.py"));
    assert!(!names("old/scripts/a/b.py", "scripts/a/b.py"));
}

#[test]
fn an_unnamed_script_and_a_dangling_path_are_found() {
    let scripts = vec![
        "scripts/a/used.py".to_owned(),
        "scripts/a/alone.py".to_owned(),
        "scripts/a/listed.py".to_owned(),
    ];
    let texts: BTreeMap<String, String> = [
        (
            "README.md",
            "Run scripts/a/used.py.\n\nAnd scripts/a/gone.py.\n",
        ),
        ("scripts/a/alone.py", "usage: scripts/a/alone.py"),
        (LIST, "scripts/a/listed.py: listed only"),
    ]
    .into_iter()
    .map(|(path, text)| (path.to_owned(), text.to_owned()))
    .collect();
    assert_eq!(
        unnamed(&scripts, &texts),
        ["scripts/a/alone.py", "scripts/a/listed.py"]
    );
    let exists = |path: &str| scripts.iter().any(|script| script == path);
    assert_eq!(dangling(&texts, exists), ["README.md:3: scripts/a/gone.py"]);
}
