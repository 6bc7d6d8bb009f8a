//! The reference interpreter stays small enough to read: the crate `opspec` (every file of
//! `src/`) has at most 3,000 code lines, comments, blank lines and tests not counted.
//! `scripts/audits/reference_lines.py` prints the same count per file, with the public items.

use std::path::{Path, PathBuf};

const LIMIT: usize = 3000;

/// Every `.rs` file under `folder`.
fn sources(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("a readable folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The net `{` minus `}` of a line's code (outside strings, chars and `//` comments).
fn braces(line: &str) -> i64 {
    let mut depth = 0;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            // A char literal (`'{'`, `'\''`); a lifetime (`'a`) has no closing quote nearby.
            '\'' => {
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') {
                    chars.nth(2);
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.nth(1);
                }
            }
            '/' if chars.peek() == Some(&'/') => break,
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// The code lines of a file: not blank, not only a comment, not in a `#[cfg(test)]` item.
fn code_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let (mut count, mut i) = (0, 0);
    while i < lines.len() {
        let line = lines[i].trim();
        if line == "#[cfg(test)]" {
            // The item after the attribute: to its closing brace, or its `;`.
            i += 1;
            let (mut depth, mut opened) = (0, false);
            while i < lines.len() {
                depth += braces(lines[i]);
                opened = opened || braces(lines[i]) > 0 || lines[i].contains('{');
                let ended =
                    (opened && depth <= 0) || (!opened && lines[i].trim_end().ends_with(';'));
                i += 1;
                if ended {
                    break;
                }
            }
            continue;
        }
        if !line.is_empty() && !line.starts_with("//") {
            count += 1;
        }
        i += 1;
    }
    count
}

#[test]
fn the_reference_crate_has_at_most_3000_code_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let counts: Vec<(PathBuf, usize)> = sources(&src)
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a source file");
            let count = code_lines(&text);
            (path, count)
        })
        .collect();
    let total: usize = counts.iter().map(|(_, count)| count).sum();
    let listing: Vec<String> = (counts.iter())
        .map(|(path, count)| format!("{count:6}  {}", path.display()))
        .collect();
    // The files were read (a total near 0 would mean none was).
    assert!(total > 1000, "{}", listing.join("\n"));
    assert!(
        total <= LIMIT,
        "the reference has {total} code lines, more than {LIMIT}:\n{}",
        listing.join("\n")
    );
}

#[test]
fn tests_comments_and_blank_lines_are_not_counted() {
    let text = "//! doc\nuse a;\n\n// why\nfn f() {\n    let s = \"{\";\n}\n#[cfg(test)]\nmod tests {\n    fn g() {}\n}\nfn h() {}\n";
    // `use a;`, `fn f() {`, `let s = "{";`, `}`, `fn h() {}`.
    assert_eq!(code_lines(text), 5);
    assert_eq!(braces("let c = '{'; // }"), 0);
    assert_eq!(braces("fn f<'a>(x: &'a str) {"), 1);
}
