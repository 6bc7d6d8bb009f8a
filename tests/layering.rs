//! The layering of the workspace, checked where the crates say it and, inside a crate, on its
//! modules' `crate::` paths.
//!
//! - The crates depend on each other one way (`cargo metadata`): the reference (`opspec`)
//!   depends on no crate of this workspace, so it knows nothing of the spec files (crate
//!   `opspec-spec`), the fast kernels (`opspec-kernels`), the generators or the harness; the
//!   spec model and the kernels depend on the reference alone; no crate of the workspace
//!   reaches back to itself, through dev-dependencies included.
//! - No import circle among the modules of a library crate (the reference, the spec model,
//!   the kernels, the generators, the runner). In the runner, where the data flows one way
//!   (YAML → typed case → backend → verdict → report), no module imports the crate root either,
//!   and only the verdict gives a trial its status.
//! - The reference has no engine hook (an `Engine` trait) and exports no macro: what a crate
//!   boundary cannot say.
//! - The libraries read no environment variable: the runner's binaries map their flags and
//!   variables onto arguments.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every dependency between the workspace's packages: package → (dependency, kind), kind
/// `normal`, `dev` or `build`.
fn workspace_dependencies() -> BTreeMap<String, BTreeSet<(String, String)>> {
    let output = Command::new(env!("CARGO"))
        .current_dir(root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let members: BTreeSet<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut graph = BTreeMap::new();
    for package in packages {
        let name = package["name"].as_str().expect("a name").to_owned();
        let edges: BTreeSet<(String, String)> = (package["dependencies"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|d| {
                let dependency = d["name"].as_str()?;
                members.contains(dependency).then(|| {
                    let kind = d["kind"].as_str().unwrap_or("normal").to_owned();
                    (dependency.to_owned(), kind)
                })
            })
            .collect();
        graph.insert(name, edges);
    }
    graph
}

/// The workspace packages `package` depends on with a dependency of `kind`.
fn dependencies_of(
    graph: &BTreeMap<String, BTreeSet<(String, String)>>,
    package: &str,
    kind: &str,
) -> BTreeSet<String> {
    graph[package]
        .iter()
        .filter(|(_, k)| k == kind)
        .map(|(d, _)| d.clone())
        .collect()
}

#[test]
fn the_crates_depend_on_each_other_one_way() {
    let graph = workspace_dependencies();
    assert!(graph.len() >= 6, "the workspace's packages: {graph:?}");
    // The reference stands alone: not even its tests reach another crate of the workspace.
    assert_eq!(
        graph["opspec"],
        BTreeSet::new(),
        "opspec depends on {:?}",
        graph["opspec"]
    );
    let only_the_reference = BTreeSet::from(["opspec".to_owned()]);
    for package in ["opspec-spec", "opspec-kernels"] {
        assert_eq!(
            dependencies_of(&graph, package, "normal"),
            only_the_reference,
            "{package} depends on more than the reference"
        );
    }
    assert_eq!(
        dependencies_of(&graph, "opspec-generate", "normal"),
        BTreeSet::from(["opspec".to_owned(), "opspec-spec".to_owned()]),
        "opspec-generate"
    );
    // No circle, dev-dependencies included (cargo refuses only circles of normal ones).
    fn visit<'a>(
        package: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<(String, String)>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|&p| p == package) {
            let mut circle = path[start..].to_vec();
            circle.push(package);
            return Some(circle.join(" -> "));
        }
        if !done.insert(package) {
            return None;
        }
        path.push(package);
        for (next, _) in graph.get(package).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for package in graph.keys() {
        if let Some(circle) = visit(package, &graph, &mut Vec::new(), &mut done) {
            panic!("a dependency circle among the workspace's crates: {circle}");
        }
    }
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
fn the_reference_has_no_engine_hook_and_exports_no_macro() {
    let mut offenders = Vec::new();
    for path in sources(&root().join("src")) {
        // Split so that this file does not name what it looks for.
        for needle in [
            concat!("trait ", "Engine"),
            concat!("dyn ", "Engine"),
            concat!("#[macro", "_export]"),
        ] {
            offenders.extend(lines_with(&path, needle));
        }
    }
    assert!(
        offenders.is_empty(),
        "the reference has an engine hook or an exported macro:\n{}",
        offenders.join("\n")
    );
}

/// The top-level module a source file of `src` belongs to (`ops` for `src/ops/slice.rs`).
fn module_of(src: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(src).expect("under src/");
    let first = relative.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The top-level modules a file's code (not its comments, not its `#[cfg(test)]` tail) names
/// as `crate::<module>`, in a grouped import (`use crate::{a, b::C}`) too.
fn modules_used(path: &Path) -> BTreeSet<String> {
    (crate_paths(&code_of(path)).into_iter())
        .filter(|name| name.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        .collect()
}

/// An import circle among the top-level modules of the crate whose sources are in `src`.
fn import_circle(src: &Path) -> Option<String> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in sources(src) {
        let module = module_of(src, &path);
        if module == "lib" || module == "main" {
            continue;
        }
        let used = modules_used(&path);
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(used.into_iter().filter(|m| *m != module));
    }
    assert!(graph.len() >= 3, "{}: {graph:?}", src.display());
    circle(&graph)
}

#[test]
fn the_library_modules_have_no_import_circle() {
    let crates = [
        "src",
        "crates/spec/src",
        "crates/kernels/src",
        "crates/generate/src",
    ];
    let circles: Vec<String> = crates
        .iter()
        .filter_map(|src| Some(format!("{src}: {}", import_circle(&root().join(src))?)))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
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

/// The modules of the library crate whose sources are in `src` (its binaries left out), by
/// path: `run::harness` for `src/run/harness.rs`, `run` for `src/run/mod.rs`.
fn module_files(src: &Path) -> BTreeMap<String, PathBuf> {
    let mut modules = BTreeMap::new();
    for path in sources(src) {
        let relative = path.strip_prefix(src).expect("under src/");
        let mut parts: Vec<String> = (relative.components())
            .map(|c| {
                c.as_os_str()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .collect();
        if parts[0] == "bin" || (parts.len() == 1 && ["lib", "main"].contains(&&*parts[0])) {
            continue;
        }
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        modules.insert(parts.join("::"), path);
    }
    modules
}

/// Every path `code` names from the crate root, whole and with `crate::` left off: `a::b::C`
/// for `crate::a::b::C`, `a::b` and `a::c::D` for `use crate::a::{b, c::D}`, and `w::x::f` for
/// `super::x::f` in a module whose parent is `w` (`parent`, empty at the root).
fn crate_paths_in(code: &str, parent: &str) -> BTreeSet<String> {
    /// The paths of the use tree at the start of `text`, each after `prefix`.
    fn tree(text: &str, prefix: &[String], paths: &mut BTreeSet<String>) {
        let mut segments = prefix.to_vec();
        let mut rest = text.trim_start();
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                let (mut depth, mut start) = (0usize, 0usize);
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth > 0 => depth -= 1,
                        ',' | '}' if depth == 0 => {
                            tree(&group[start..i], &segments, paths);
                            start = i + 1;
                            if c == '}' {
                                return;
                            }
                        }
                        _ => {}
                    }
                }
                return;
            }
            let name: String = (rest.chars())
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            match name.as_str() {
                "" => break,
                "self" => {}
                _ => segments.push(name.clone()),
            }
            rest = rest[name.len()..].trim_start();
            match rest.strip_prefix("::") {
                Some(after) => rest = after.trim_start(),
                None => break,
            }
        }
        if !segments.is_empty() {
            paths.insert(segments.join("::"));
        }
    }
    let mut paths = BTreeSet::new();
    let parent: Vec<String> = (parent.split("::"))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    for (start, base) in [("crate::", Vec::new()), ("super::", parent)] {
        for (at, _) in code.match_indices(start) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue; // `opspec_crate::`, `super::super::` and the like
            }
            tree(&code[at + start.len()..], &base, &mut paths);
        }
    }
    paths.remove("");
    paths
}

/// The module a crate path names: its longest head that is a module of `modules`. None when
/// even its first segment is no module (an item of the crate root, such as a re-export).
fn module_named<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    let segments: Vec<&str> = path.split("::").collect();
    (1..=segments.len())
        .rev()
        .find_map(|n| modules.get(&segments[..n].join("::")))
}

/// The modules of the library crate whose sources are in `src`, each with the modules its code
/// names (`crate::` and `super::` paths, outside comments and the `#[cfg(test)]` tail). A path
/// that names no module, or an item of a folder's `mod.rs` rather than of the module that
/// defines it, is kept whole in `<...>`, so that the checks refuse it: a re-export at the root
/// or in a folder hides the edge to the module behind it.
fn module_graph_of(
    src: &Path,
    code_of: impl Fn(&Path) -> String,
) -> BTreeMap<String, BTreeSet<String>> {
    let files = module_files(src);
    let folders: BTreeSet<String> = (files.iter())
        .filter(|(_, path)| path.ends_with("mod.rs"))
        .map(|(module, _)| module.clone())
        .collect();
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, path) in &files {
        let parent = match module.rsplit_once("::") {
            _ if path.ends_with("mod.rs") => module.rsplit_once("::").map_or("", |(p, _)| p),
            Some((p, _)) => p,
            None => "",
        };
        let mut used = BTreeSet::new();
        for crate_path in crate_paths_in(&code_of(path), parent) {
            match module_named(&crate_path, &names) {
                Some(m) if folders.contains(m) && *m != crate_path => {
                    used.insert(format!("<{crate_path}>"));
                }
                Some(m) => {
                    used.insert(m.clone());
                }
                None => {
                    used.insert(format!("<{crate_path}>"));
                }
            }
        }
        used.remove(module);
        graph.insert(module.clone(), used);
    }
    graph
}

/// The runner's module graph ([`module_graph_of`]).
fn runner_graph() -> BTreeMap<String, BTreeSet<String>> {
    module_graph_of(&root().join("runner/src"), code_of)
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

/// The runner's modules import one another one way, and none names an item through the crate
/// root or a folder's `mod.rs` (whose re-exports would hide an edge back).
#[test]
fn the_runner_modules_have_no_import_circle() {
    let graph = runner_graph();
    assert!(
        graph.contains_key("run::harness") && graph.contains_key("judge::verdict"),
        "{graph:?}"
    );
    let mut through_root = Vec::new();
    for (module, used) in &graph {
        for name in used.iter().filter(|name| name.starts_with('<')) {
            through_root.push(format!(
                "{module} uses crate::{}",
                name.trim_matches(['<', '>'])
            ));
        }
    }
    assert!(
        through_root.is_empty(),
        "runner modules name items of the crate root or of a folder instead of their modules:\n{}",
        through_root.join("\n")
    );
    if let Some(circle) = circle(&graph) {
        panic!("an import circle in runner/src: {circle}");
    }
    // The data flows one way: what judges and records knows nothing of how a run is made.
    for (low, high) in [
        ("judge::verdict", "run::harness"),
        ("reports::report", "run::harness"),
        ("backend::interface", "judge::verdict"),
        ("judge::verdict", "reports::report"),
    ] {
        assert!(
            !graph[low].contains(high),
            "{low} imports {high}: {:?}",
            graph[low]
        );
    }
}

/// A trial's status is given in one place, `runner/src/judge/verdict.rs` (its constructors and
/// `decide`): every other module of the runner only carries a verdict's status into a record,
/// or reads it.
#[test]
fn only_the_verdict_gives_a_trial_its_status() {
    let mut offenders = Vec::new();
    for path in sources(&root().join("runner/src")) {
        if path.ends_with("judge/verdict.rs") {
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
        "statuses set outside runner/src/judge/verdict.rs:\n{}",
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

/// The engine is chosen by the caller: no source file of this workspace's libraries (this
/// crate and those of `crates/`) reads a variable (`var`, `var_os` or `vars` of `std::env`);
/// the runner's binaries and the benches may.
#[test]
fn the_libraries_read_no_environment_variable() {
    let mut folders = vec![root().join("src")];
    for entry in std::fs::read_dir(root().join("crates")).expect("crates/ is readable") {
        folders.push(entry.expect("a folder entry").path().join("src"));
    }
    assert!(folders.len() >= 4, "{folders:?}");
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
