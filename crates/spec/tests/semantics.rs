//! One source of truth for the rules: the clause catalogues (`specs/*.clauses.yaml`) and the
//! semantics document (`docs/semantics.md`) agree clause by clause, every section the repository
//! cites exists, and no citation points outside the repository.
//!
//! The document's clause index is generated from the catalogues; `OPSPEC_BLESS=1 cargo test -p
//! opspec --test semantics` rewrites it (refused when `CI` is set).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use opspec_spec::clauses::{is_clause_id, Catalogue, Marks, SCOPES};

const DOC: &str = "docs/semantics.md";
const BEGIN: &str = "<!-- clause-index:begin -->";
const END: &str = "<!-- clause-index:end -->";

/// The document's file name, as citations spell it; built from pieces so that the tests below
/// do not find their own search strings.
fn doc_name() -> String {
    ["semantics", ".md"].concat()
}

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn catalogue() -> Catalogue {
    let (catalogue, errors) = Catalogue::load(&[repo().join("specs")]);
    assert!(errors.is_empty(), "{errors:?}");
    catalogue
}

fn document() -> String {
    std::fs::read_to_string(repo().join(DOC)).unwrap()
}

/// The clause index as the catalogues give it: per scope, every clause with its status, error
/// kind and rule.
fn clause_index(catalogue: &Catalogue) -> String {
    let mut out = String::new();
    for scope in SCOPES {
        out.push_str(&format!(
            "\n### {scope}\n\n| clause | status | error | rule |\n|---|---|---|---|\n"
        ));
        for clause in catalogue.scope(scope) {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                clause.id,
                clause.status.name(),
                clause.error.map_or("", |kind| kind.name()),
                clause.rule.replace('|', "\\|")
            ));
        }
    }
    out.push('\n');
    out
}

#[test]
fn the_clause_index_is_the_catalogues() {
    let catalogue = catalogue();
    let text = document();
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        panic!("{DOC} has no {BEGIN} ... {END} block");
    };
    let current = &text[begin + BEGIN.len()..end];
    let wanted = clause_index(&catalogue);
    if current == wanted {
        return;
    }
    let bless = std::env::var_os("OPSPEC_BLESS").is_some_and(|v| v == "1");
    assert!(
        !(bless && std::env::var_os("CI").is_some()),
        "OPSPEC_BLESS=1 with CI set: CI checks the committed document and never rewrites it"
    );
    if bless {
        let rewritten = format!("{}{wanted}{}", &text[..begin + BEGIN.len()], &text[end..]);
        std::fs::write(repo().join(DOC), rewritten).unwrap();
        return;
    }
    let first = current
        .lines()
        .zip(wanted.lines())
        .find(|(a, b)| a != b)
        .map_or_else(String::new, |(a, b)| {
            format!("\n  document: {a}\n  catalogue: {b}")
        });
    panic!(
        "the clause index of {DOC} differs from specs/*.clauses.yaml{first}\nregenerate it with\n    OPSPEC_BLESS=1 cargo test -p opspec-spec --test semantics\nand commit the result"
    );
}

/// The clause ids a text names in backticks.
fn named_ids(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| SCOPES.iter().any(|scope| is_clause_id(word, scope)))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_clause_the_document_names_exists_with_its_status() {
    let catalogue = catalogue();
    let text = document();
    let prose = &text[..text.find(BEGIN).unwrap()];
    let named = named_ids(prose);
    assert!(
        named.len() > 100,
        "the prose names only {} clauses",
        named.len()
    );
    let unknown: Vec<&String> = named.iter().filter(|id| !catalogue.contains(id)).collect();
    assert!(
        unknown.is_empty(),
        "{DOC} names clauses no catalogue has: {unknown:?}"
    );
    // Every clause is named in the prose too, not only in the generated index.
    let missing: Vec<&str> = catalogue
        .iter()
        .map(|c| c.id.as_str())
        .filter(|id| !named.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "{DOC} never names these clauses outside its index: {missing:?}"
    );
    // A clause the prose calls implementation-defined or inferred has that status: the words
    // "Implementation-defined" / "[inferred]" in a paragraph apply to the clauses it names.
    for paragraph in prose.split("\n\n").flat_map(|p| p.split("\n- ")) {
        for id in named_ids(paragraph) {
            let status = catalogue.get(&id).unwrap().status.name();
            if paragraph.starts_with("**Implementation-defined**") {
                assert_eq!(
                    status, "implementation_defined",
                    "{DOC} calls `{id}` implementation-defined:\n{paragraph}"
                );
            }
        }
    }
}

/// The section numbers `docs/semantics.md` has: `## N.` and `### N.M` headings.
fn sections(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            line.strip_prefix("### ")
                .or_else(|| line.strip_prefix("## "))
        })
        .filter_map(|heading| {
            let number = heading.split(' ').next()?.trim_end_matches('.');
            number
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
                .then(|| number.to_owned())
        })
        .collect()
}

/// The repository's tracked files (git's index), or every file outside `target/` and `.git/`
/// when git is not available.
fn tracked_files() -> Vec<PathBuf> {
    let root = repo();
    if let Ok(output) = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
    {
        if output.status.success() && !output.stdout.is_empty() {
            return output
                .stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
                .collect();
        }
    }
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "target" && name != ".git" {
                    walk(&path, out);
                }
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root, &mut out);
    out
}

/// The text files among them (goldens are binary).
fn text_files() -> Vec<(PathBuf, String)> {
    tracked_files()
        .into_iter()
        .filter(|path| path.is_file())
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            Some((path, text))
        })
        .collect()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_section_the_repository_cites_exists() {
    let known = sections(&document());
    for number in ["1.3", "2.3", "3.5", "4", "5.2", "6.1", "8.8", "9"] {
        assert!(known.contains(number), "no section {number} in {known:?}");
    }
    let mut problems = Vec::new();
    let mut citations = 0;
    for (path, text) in text_files() {
        for (at, _) in text.match_indices(&doc_name()) {
            // The citation runs to the end of its clause: "§4, §8.1", "§1.1-1.2", "§4 and §8.1".
            let tail = &text[at + doc_name().len()..];
            let end = tail
                .find([';', ')', '"', '\n', ':', '('])
                .unwrap_or(tail.len());
            for part in tail[..end].split('§').skip(1) {
                let number: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-')
                    .collect();
                for piece in number.split('-') {
                    let piece = piece.trim_end_matches('.');
                    if piece.is_empty() {
                        continue;
                    }
                    citations += 1;
                    // "1.1-1.2" and "3.1-" ranges: a bare second number is the same section.
                    if !known.contains(piece) {
                        problems.push(format!("{}: §{piece}", relative(&path)));
                    }
                }
            }
        }
    }
    assert!(citations > 500, "only {citations} citations found");
    assert!(
        problems.is_empty(),
        "citations of sections {DOC} does not have:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_citation_leaves_the_repository() {
    // Built from pieces so that this file does not match itself.
    let outside = [
        format!("..{}shared", '/'),
        format!("shared{}reference", '/'),
    ];
    let mut found = Vec::new();
    for (path, text) in text_files() {
        for (number, line) in text.lines().enumerate() {
            if outside
                .iter()
                .any(|pattern| line.contains(pattern.as_str()))
            {
                found.push(format!(
                    "{}:{}: {}",
                    relative(&path),
                    number + 1,
                    line.trim()
                ));
            }
        }
        // A citation of the semantics is of the repository's own document.
        for (at, _) in text.match_indices(&doc_name()) {
            let before = &text[..at];
            if !(before.ends_with("docs/") || before.ends_with("../docs/")) {
                let line = text[..at].lines().count().max(1);
                found.push(format!(
                    "{}:{line}: `{}` without `docs/`",
                    relative(&path),
                    doc_name()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "citations that leave the repository (or do not say where the document is):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_mark_that_differs_from_the_clauses_is_found() {
    let catalogue = catalogue();
    let nan = ["scale.int8.quantize", "scale.int8.nan-zero"];
    let none = Marks::default();
    let both = Marks {
        inferred: true,
        implementation_defined: true,
    };
    let only_implementation = Marks {
        inferred: false,
        implementation_defined: true,
    };
    assert!(catalogue
        .mark_disagreements(&nan, only_implementation)
        .is_empty());
    let found = catalogue.mark_disagreements(&nan, none);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("`scale.int8.nan-zero`") && found[0].contains("implementation_defined"),
        "{found:?}"
    );
    let found = catalogue.mark_disagreements(&nan, both);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("marked `inferred: true`"), "{found:?}");
    assert!(catalogue
        .mark_disagreements(&["scale.formula"], none)
        .is_empty());
}
