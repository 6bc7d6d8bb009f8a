//! The modules depend on each other one way, and the reference knows only itself.
//!
//! - The ops (dtypes, tensors, errors, the operators' plans and plain evaluations) know nothing
//!   of the spec files that describe cases. How a value is read from a spec file
//!   (`crate::spec`) is the spec side's business, even when the value is an op's attribute
//!   (Scale's coefficients).
//! - The reference knows nothing of the fast kernels (crate `opspec-kernels`), which evaluate
//!   the reference's plans: no engine trait or hook here, no macro exported for them.
//! - No import circle among the reference's modules.
//! - The libraries read no environment variable: the runner's binaries map their flags and
//!   variables onto arguments.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `folder`.
fn sources(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![folder.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
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

/// The lines of `path` that contain `needle`, as `path:line: text`.
fn lines_with(path: &Path, needle: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("a source file");
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.contains(needle))
        .map(|(n, line)| format!("{}:{}: {}", path.display(), n + 1, line.trim()))
        .collect()
}

#[test]
fn ops_do_not_use_the_spec_module() {
    let mut offenders = Vec::new();
    for path in sources(&root().join("src/ops")) {
        offenders.extend(lines_with(&path, "crate::spec"));
        offenders.extend(lines_with(&path, "super::spec"));
    }
    assert!(
        offenders.is_empty(),
        "src/ops uses the spec module:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_reference_knows_nothing_of_the_kernels() {
    let mut offenders = Vec::new();
    for path in sources(&root().join("src")) {
        // Split so that this file does not name what it looks for.
        for needle in [
            concat!("opspec", "_kernels"),
            concat!("trait ", "Engine"),
            concat!("dyn ", "Engine"),
            concat!("#[macro", "_export]"),
        ] {
            offenders.extend(lines_with(&path, needle));
        }
    }
    assert!(
        offenders.is_empty(),
        "the reference names the kernels, an engine hook or an exported macro:\n{}",
        offenders.join("\n")
    );
}

/// The top-level module a source file of `src/` belongs to (`ops` for `src/ops/slice.rs`).
fn module_of(path: &Path) -> String {
    let relative = path.strip_prefix(root().join("src")).expect("under src/");
    let first = relative.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The top-level modules a file's code (not its comments, not its `#[cfg(test)]` tail) names
/// as `crate::<module>`.
fn modules_used(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).expect("a source file");
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut used = BTreeSet::new();
    for line in code.lines() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
                used.insert(name);
            }
        }
    }
    used
}

#[test]
fn the_reference_modules_have_no_import_circle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in sources(&root().join("src")) {
        let module = module_of(&path);
        if module == "lib" {
            continue;
        }
        let used = modules_used(&path);
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(used.into_iter().filter(|m| *m != module));
    }
    assert!(
        graph.contains_key("ops") && graph.contains_key("tensor"),
        "{graph:?}"
    );
    // Depth-first search for a back edge.
    fn visit<'a>(
        module: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|&m| m == module) {
            let mut circle = path[start..].to_vec();
            circle.push(module);
            return Some(circle.join(" -> "));
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        for next in graph.get(module).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(circle) = visit(module, &graph, &mut Vec::new(), &mut done) {
            panic!("an import circle in src/: {circle}");
        }
    }
}

/// The engine is chosen by the caller: no source file of this workspace's libraries (this
/// crate and those of `crates/`) reads a variable (`var`, `var_os` or `vars` of `std::env`);
/// the runner's binaries and the benches may.
#[test]
fn the_libraries_read_no_environment_variable() {
    let mut folders = vec![root().join("src")];
    for entry in std::fs::read_dir(root().join("crates")).expect("crates/ is readable") {
        folders.push(entry.expect("a folder entry").path().join("src"));
    }
    assert!(folders.len() >= 3, "{folders:?}");
    let mut readers = Vec::new();
    for folder in folders {
        for path in sources(&folder) {
            // Split so that this line does not name what it looks for.
            readers.extend(lines_with(&path, concat!("env::", "var")));
        }
    }
    assert!(
        readers.is_empty(),
        "the libraries read environment variables:\n{}",
        readers.join("\n")
    );
}
