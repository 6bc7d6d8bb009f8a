//! The modules depend on each other one way, and the reference knows only itself.
//!
//! - The ops (dtypes, tensors, errors, the operators' plans and plain evaluations) know nothing
//!   of the spec files that describe cases. How a value is read from a spec file
//!   (`crate::spec`) is the spec side's business, even when the value is an op's attribute
//!   (Scale's coefficients).
//! - The reference knows nothing of the fast kernels (crate `opspec-kernels`), which evaluate
//!   the reference's plans: no engine trait or hook here, no macro exported for them.
//! - No import circle among the reference's modules, nor among the runner's (`runner/src`,
//!   where the data flows one way: YAML → typed case → backend → verdict → report), nor among
//!   the modules of the other library crates.
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

/// The code of a source file: its lines without comments, up to its `#[cfg(test)]` tail (the
/// unit tests may use any module).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file");
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| line.split(" // ").next().unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segment of every path `code` starts at `crate::`: `a` in `crate::a::f`, and
/// `a` and `b` in `use crate::{a::f, b};`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let ident = |text: &str| -> String {
        text.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `opspec_crate::` and the like
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The items at the top level of the group.
            let (mut depth, mut item_start, mut end) = (0usize, 0usize, group.len());
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = i;
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.insert(ident(&group[item_start..i]));
                        item_start = i + 1;
                    }
                    _ => {}
                }
            }
            names.insert(ident(&group[item_start..end]));
        } else {
            names.insert(ident(rest));
        }
    }
    names.remove("");
    names
}

/// The top-level modules of the library crate rooted at `src/lib.rs` under `crate_dir`, each with
/// the modules its code names. A name in `crate::` position that is no module (an item of the
/// crate root, such as a re-export) is kept as it is, so that the check below refuses it: a
/// module importing from the root imports everything the root imports.
fn module_graph(crate_dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = crate_dir.join("src");
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("a src folder") {
        let path = entry.expect("a folder entry").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() && name != "bin" {
            modules.insert(name, sources(&path));
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if !["lib", "main"].contains(&stem) {
                let mut files = vec![path.clone()];
                files.extend(sources(&src.join(stem)));
                modules.insert(stem.to_string(), files);
            }
        }
    }
    let mut graph = BTreeMap::new();
    for (module, files) in &modules {
        let mut used = BTreeSet::new();
        for file in files {
            used.extend(crate_paths(&code_of(file)));
        }
        used.remove(module);
        graph.insert(module.clone(), used);
    }
    graph
}

/// The first import circle of `graph`, as `a -> b -> a`.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
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
    graph
        .keys()
        .find_map(|module| visit(module, graph, &mut Vec::new(), &mut done))
}

/// The runner's modules import one another one way, and none imports the crate root (whose
/// re-exports would hide an edge back).
#[test]
fn the_runner_modules_have_no_import_circle() {
    let graph = module_graph(&root().join("runner"));
    assert!(
        graph.contains_key("harness") && graph.contains_key("verdict"),
        "{graph:?}"
    );
    let mut through_root = Vec::new();
    for (module, used) in &graph {
        for name in used.iter().filter(|name| !graph.contains_key(*name)) {
            through_root.push(format!("{module} uses crate::{name}"));
        }
    }
    assert!(
        through_root.is_empty(),
        "runner modules name items of the crate root instead of their modules:\n{}",
        through_root.join("\n")
    );
    if let Some(circle) = circle(&graph) {
        panic!("an import circle in runner/src: {circle}");
    }
    // The data flows one way: what judges and records knows nothing of how a run is made.
    for (low, high) in [
        ("verdict", "harness"),
        ("report", "harness"),
        ("backend", "verdict"),
        ("verdict", "report"),
    ] {
        assert!(
            !graph[low].contains(high),
            "{low} imports {high}: {:?}",
            graph[low]
        );
    }
}

/// A trial's status is given in one place, `runner/src/verdict.rs` (its constructors and
/// `decide`): every other module of the runner only carries a verdict's status into a record,
/// or reads it.
#[test]
fn only_the_verdict_gives_a_trial_its_status() {
    let mut offenders = Vec::new();
    for path in sources(&root().join("runner/src")) {
        if path.ends_with("verdict.rs") {
            continue;
        }
        for line in code_of(&path).lines() {
            // Split so that this file does not name what it looks for.
            for needle in [
                concat!("status: ", "Status::"),
                concat!("status = ", "Status::"),
            ] {
                if line.contains(needle) {
                    offenders.push(format!("{}: {}", path.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "statuses set outside runner/src/verdict.rs:\n{}",
        offenders.join("\n")
    );
}

/// The finder of circles finds one, through a grouped import too.
#[test]
fn an_import_circle_is_found() {
    let uses = |code: &str| crate_paths(code);
    assert_eq!(
        uses("use crate::{a::{X, Y}, b};\nfn f() { crate::c::g(); other_crate::d(); }"),
        BTreeSet::from(["a".to_string(), "b".to_string(), "c".to_string()])
    );
    let graph = BTreeMap::from([
        ("a".to_string(), uses("use crate::{b};")),
        ("b".to_string(), uses("crate::c::f()")),
        ("c".to_string(), uses("use crate::{x, a::Y};")),
    ]);
    assert_eq!(circle(&graph).as_deref(), Some("a -> b -> c -> a"));
}

/// No circle among the modules of the other library crates either.
#[test]
fn the_other_crates_have_no_import_circle() {
    for entry in std::fs::read_dir(root().join("crates")).expect("crates/ is readable") {
        let dir = entry.expect("a folder entry").path();
        if !dir.join("src/lib.rs").is_file() {
            continue;
        }
        if let Some(circle) = circle(&module_graph(&dir)) {
            panic!("an import circle in {}: {circle}", dir.display());
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
