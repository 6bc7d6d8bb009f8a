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
//!   (YAML → typed case → backend → verdict → report), no module imports the crate root or a
//!   folder's `mod.rs` either. (Only the verdict gives a trial its status: the types say so,
//!   a record being made only of a decision, `runner/src/judge/record.rs`, `Record::of`.)
//! - The runner's modules are in five folders, in the order `backend`, `judge`, `reports`,
//!   `run`, `tools`; a module imports from its own folder and the folders before it only (so
//!   the backend imports neither judge nor run, and the reports never the run), and of the
//!   backend the reports import only its facts (`backend::facts`, plain data).
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
/// `cargo metadata` of the workspace's own packages.
fn cargo_metadata() -> serde_json::Value {
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
    serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON")
}

fn workspace_dependencies() -> BTreeMap<String, BTreeSet<(String, String)>> {
    let metadata = cargo_metadata();
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

/// The sources of the library crate whose files are in `src` (its binaries left out): each
/// file's path under `src` (`run/harness.rs`) with its code ([`code_of`]).
fn library_sources(src: &Path) -> BTreeMap<String, String> {
    (sources(src).into_iter())
        .filter_map(|path| {
            let relative = path.strip_prefix(src).expect("under src/");
            let relative = relative.to_string_lossy().replace('\\', "/");
            let binary =
                relative.starts_with("bin/") || ["lib.rs", "main.rs"].contains(&&*relative);
            (!binary).then(|| (relative, code_of(&path)))
        })
        .collect()
}

/// The module a source file defines, from its path under `src`: `run::harness` for
/// `run/harness.rs`, `run` for `run/mod.rs`.
fn module_of_file(relative: &str) -> String {
    let mut parts: Vec<&str> = relative.trim_end_matches(".rs").split('/').collect();
    if parts.len() > 1 && parts.last() == Some(&"mod") {
        parts.pop();
    }
    parts.join("::")
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

/// The modules of a library crate, from its sources as [`library_sources`] gives them, each
/// with the modules its code names (`crate::` and `super::` paths). A path that names no
/// module, or an item of a folder's `mod.rs` rather than of the module that defines it, is kept
/// whole in `<...>`, so that the checks refuse it: a re-export at the root or in a folder hides
/// the edge to the module behind it.
fn module_graph_of(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let folders: BTreeSet<String> = (files.keys())
        .filter(|file| file.ends_with("mod.rs"))
        .map(|file| module_of_file(file))
        .collect();
    let names: BTreeSet<String> = files.keys().map(|file| module_of_file(file)).collect();
    let mut graph = BTreeMap::new();
    for (file, code) in files {
        let module = module_of_file(file);
        // `super` of `run::harness` is `run`; of `run` (run/mod.rs), the root.
        let parent = module.rsplit_once("::").map_or("", |(parent, _)| parent);
        let mut used = BTreeSet::new();
        for path in crate_paths_in(code, parent) {
            match module_named(&path, &names) {
                Some(named) if !folders.contains(named) || *named == path => {
                    used.insert(named.clone());
                }
                _ => {
                    used.insert(format!("<{path}>"));
                }
            }
        }
        used.remove(&module);
        graph.insert(module, used);
    }
    graph
}

/// The runner's folders, in the order its data flows: a case is run by a backend, its outcome
/// judged, the records reported; a run ties them together, and the tools stand beside runs. A
/// module imports only from its own folder and the folders before it.
const WINGS: [&str; 5] = ["backend", "judge", "reports", "run", "tools"];

/// What the reports read of the backend: the engine and platform facts of its hello, plain
/// data that imports nothing of the crate. No process, no protocol, no hello parsing.
const BACKEND_FOR_REPORTS: [&str; 1] = ["backend::facts"];

/// The position in [`WINGS`] of the folder of `module`.
fn wing_of(module: &str) -> Option<usize> {
    let folder = module.split("::").next()?;
    WINGS.iter().position(|wing| *wing == folder)
}

/// Every breach of the runner's layering in its sources (`files`, as [`library_sources`] gives
/// them): a module outside the folders of [`WINGS`], an import from a later folder (so the
/// backend imports neither judge nor run, and the reports never the run), the reports
/// importing of the backend more than [`BACKEND_FOR_REPORTS`], an item named through the
/// crate root or a folder's `mod.rs`, an import circle.
fn runner_layering_problems(files: &BTreeMap<String, String>) -> Vec<String> {
    let graph = module_graph_of(files);
    let mut problems = Vec::new();
    for (module, used) in &graph {
        let Some(rank) = wing_of(module) else {
            problems.push(format!("{module} is in none of the folders {WINGS:?}"));
            continue;
        };
        for name in used {
            if let Some(path) = name.strip_prefix('<') {
                let path = path.trim_end_matches('>');
                problems.push(format!(
                    "{module} names crate::{path} through the crate root or a folder, not its module"
                ));
            } else if let Some(theirs) = wing_of(name).filter(|&theirs| theirs > rank) {
                problems.push(format!(
                    "{module} imports {name}: {} comes after {} in {WINGS:?}",
                    WINGS[theirs], WINGS[rank]
                ));
            } else if WINGS[rank] == "reports"
                && name.starts_with("backend")
                && !BACKEND_FOR_REPORTS.contains(&name.as_str())
            {
                problems.push(format!(
                    "{module} imports {name}: the reports read only {BACKEND_FOR_REPORTS:?} of the backend"
                ));
            }
        }
    }
    if let Some(circle) = circle(&graph) {
        problems.push(format!("an import circle: {circle}"));
    }
    problems
}

/// The runner's sources, by path under runner/src.
fn runner_sources() -> BTreeMap<String, String> {
    library_sources(&root().join("runner/src"))
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

/// The runner's modules import one another one way, folder by folder ([`WINGS`]), and none
/// names an item through the crate root or a folder's `mod.rs` (whose re-exports would hide an
/// edge back).
#[test]
fn the_runner_keeps_its_layering() {
    let files = runner_sources();
    let graph = module_graph_of(&files);
    assert!(
        graph.contains_key("run::harness") && graph.contains_key("judge::verdict"),
        "{graph:?}"
    );
    let problems = runner_layering_problems(&files);
    assert!(
        problems.is_empty(),
        "the runner's layering (tests/layering.rs, WINGS) is broken:\n{}",
        problems.join("\n")
    );
}

/// The layering check finds an upward import planted in the runner's own sources, and each
/// kind of breach in a made-up crate: through `crate::` and `super::` paths, grouped imports
/// and paths in code.
#[test]
fn a_breach_of_the_runner_layering_is_found() {
    let mut files = runner_sources();
    files
        .get_mut("backend/child.rs")
        .expect("runner/src/backend/child.rs")
        .push_str("\nuse crate::run::harness::Harness;\n");
    assert_eq!(
        runner_layering_problems(&files),
        [
            "backend::child imports run::harness: run comes after backend in \
             [\"backend\", \"judge\", \"reports\", \"run\", \"tools\"]",
            // The harness stops the backend processes on a signal: the edge back closes a circle.
            "an import circle: backend::child -> run::harness -> backend::interrupt -> backend::child",
        ]
    );

    let made_up = |sources: &[(&str, &str)]| -> Vec<String> {
        let files = sources
            .iter()
            .map(|(file, code)| (file.to_string(), code.to_string()))
            .collect();
        runner_layering_problems(&files)
    };
    let wings = [
        ("backend/mod.rs", ""),
        ("backend/facts.rs", ""),
        ("backend/process.rs", ""),
        ("judge/mod.rs", ""),
        ("reports/mod.rs", ""),
        ("run/mod.rs", ""),
        ("run/config.rs", ""),
        ("tools/mod.rs", ""),
    ];
    let with = |more: &[(&'static str, &'static str)]| {
        let mut sources = wings.to_vec();
        sources.extend_from_slice(more);
        made_up(&sources)
    };
    assert_eq!(with(&[]), Vec::<String>::new());
    assert_eq!(
        with(&[
            (
                "judge/verdict.rs",
                "use crate::{backend::{facts::F, process}, reports::html::x};"
            ),
            (
                "reports/html.rs",
                "fn f() { crate::backend::facts::F::new(); }"
            ),
        ]),
        [
            "judge::verdict imports reports::html: reports comes after judge in \
          [\"backend\", \"judge\", \"reports\", \"run\", \"tools\"]"
        ]
    );
    assert_eq!(
        with(&[(
            "reports/html.rs",
            "fn f() { crate::backend::process::start(); }"
        )]),
        [
            "reports::html imports backend::process: the reports read only \
          [\"backend::facts\"] of the backend"
        ]
    );
    assert_eq!(
        with(&[(
            "run/harness.rs",
            "use super::config::Config; use crate::run::Re;"
        )]),
        ["run::harness names crate::run::Re through the crate root or a folder, not its module"]
    );
    assert_eq!(
        with(&[
            ("run/harness.rs", "use super::replay::Replay;"),
            ("run/replay.rs", "use crate::run::harness::Harness;"),
        ]),
        ["an import circle: run::harness -> run::replay -> run::harness"]
    );
    assert_eq!(
        with(&[("extra.rs", "")]),
        ["extra is in none of the folders [\"backend\", \"judge\", \"reports\", \"run\", \"tools\"]"]
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
/// the runner's binaries, the test backends' (`runner/test-backends/src/bin`: a misbehaviour
/// that only some environments show) and the benches may.
#[test]
fn the_libraries_read_no_environment_variable() {
    let mut folders = vec![root().join("src")];
    for entry in std::fs::read_dir(root().join("crates")).expect("crates/ is readable") {
        folders.push(entry.expect("a folder entry").path().join("src"));
    }
    assert!(folders.len() >= 4, "{folders:?}");
    let test_backends = root().join("runner/test-backends/src/bin");
    let mut readers = Vec::new();
    for folder in folders {
        for path in sources(&folder)
            .into_iter()
            .filter(|p| !p.starts_with(&test_backends))
        {
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

/// Every package of the workspace: its name and the folder of its `Cargo.toml`, relative to
/// the workspace root (`crates/spec`, `runner`).
fn workspace_packages() -> BTreeMap<String, PathBuf> {
    let metadata = cargo_metadata();
    let root = std::fs::canonicalize(root()).expect("the workspace root");
    (metadata["packages"].as_array().expect("packages").iter())
        .map(|package| {
            let manifest = Path::new(package["manifest_path"].as_str().expect("a manifest"));
            let folder = manifest.parent().expect("the manifest's folder");
            let folder = folder.strip_prefix(&root).unwrap_or(folder).to_path_buf();
            (package["name"].as_str().expect("a name").to_owned(), folder)
        })
        .collect()
}

/// The import graph of the module files of the crate whose sources are in `src`, at every
/// depth: a module → the modules its `crate::` and `super::` paths name. Paths to the crate
/// root's own items, and to a module's own ancestors or descendants (a folder and the modules
/// it declares), are no edge: they are the tree itself, not an arrow between its branches.
fn module_files_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = library_sources(src);
    let names: BTreeSet<String> = files.keys().map(|file| module_of_file(file)).collect();
    let related = |a: &str, b: &str| {
        a == b || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
    };
    let mut graph = BTreeMap::new();
    for (file, code) in &files {
        let module = module_of_file(file);
        let parent = module.rsplit_once("::").map_or("", |(parent, _)| parent);
        let used: BTreeSet<String> = (crate_paths_in(code, parent).iter())
            .filter_map(|path| module_named(path, &names))
            .filter(|named| !related(&module, named))
            .cloned()
            .collect();
        graph.insert(module, used);
    }
    graph
}

/// The import circles of every crate of the workspace (the runner's own layering is checked
/// above, more strictly), among module files at every depth: `golden::bless` and
/// `golden::store` of the generators, say, and not only among top-level modules.
fn module_circles(packages: &BTreeMap<String, PathBuf>) -> Vec<String> {
    (packages.iter())
        .filter_map(|(name, folder)| {
            let src = root().join(folder).join("src");
            let circle = circle(&module_files_graph(&src))?;
            Some(format!("{name} ({}): {circle}", src.display()))
        })
        .collect()
}

#[test]
fn no_crate_has_an_import_circle_among_its_module_files() {
    let packages = workspace_packages();
    assert!(packages.len() >= 6, "{packages:?}");
    let circles = module_circles(&packages);
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

/// The dependencies that point back up the house: the reference at the root, the libraries
/// under `crates/` on it, and what builds on them (the runner, the backends that use it) beside
/// `crates/`. A package depends only on its own storey or the ones below.
fn upward_arrows(
    packages: &BTreeMap<String, PathBuf>,
    dependencies: &BTreeMap<String, BTreeSet<(String, String)>>,
) -> Vec<String> {
    let storey = |name: &str| match &packages[name] {
        folder if folder.as_os_str().is_empty() => 0,
        folder if folder.starts_with("crates") => 1,
        _ => 2,
    };
    let mut arrows = Vec::new();
    for (package, edges) in dependencies {
        for (dependency, kind) in edges {
            if storey(dependency) > storey(package) {
                arrows.push(format!(
                    "{package} ({}) -> {dependency} ({}), a {kind} dependency",
                    packages[package].display(),
                    packages[dependency].display()
                ));
            }
        }
    }
    arrows
}

#[test]
fn no_crate_under_crates_depends_on_one_outside() {
    let packages = workspace_packages();
    let arrows = upward_arrows(&packages, &workspace_dependencies());
    assert!(arrows.is_empty(), "arrows back up:\n{}", arrows.join("\n"));
}

/// The checks above can fail: a circle through `super::` paths between two files of a folder,
/// and a library depending on the runner.
#[test]
fn the_house_checks_find_a_circle_and_an_arrow_back_up() {
    let scratch = std::env::temp_dir().join(format!("opspec-layering-{}", std::process::id()));
    let src = scratch.join("src");
    std::fs::create_dir_all(src.join("golden")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod golden;\n").unwrap();
    std::fs::write(src.join("golden/mod.rs"), "mod bless;\nmod store;\n").unwrap();
    std::fs::write(src.join("golden/bless.rs"), "use super::store::write;\n").unwrap();
    std::fs::write(
        src.join("golden/store.rs"),
        "use super::bless::{Step, Fault};\n",
    )
    .unwrap();
    let graph = module_files_graph(&src);
    std::fs::remove_dir_all(&scratch).unwrap();
    assert_eq!(
        circle(&graph).as_deref(),
        Some("golden::bless -> golden::store -> golden::bless")
    );
    let packages = BTreeMap::from([
        ("opspec".to_owned(), PathBuf::new()),
        ("lib".to_owned(), PathBuf::from("crates/lib")),
        ("runner".to_owned(), PathBuf::from("runner")),
    ]);
    let on = |names: &[&str]| -> BTreeSet<(String, String)> {
        (names.iter())
            .map(|n| (n.to_string(), "normal".to_owned()))
            .collect()
    };
    let dependencies = BTreeMap::from([
        ("opspec".to_owned(), on(&[])),
        ("lib".to_owned(), on(&["opspec", "runner"])),
        ("runner".to_owned(), on(&["opspec", "lib"])),
    ]);
    assert_eq!(
        upward_arrows(&packages, &dependencies),
        ["lib (crates/lib) -> runner (runner), a normal dependency"]
    );
}
