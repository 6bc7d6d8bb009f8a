//! `runner coverage` (and any `cargo run -p opspec-runner`) right after `cargo test` compiles no
//! dependency again: every package in the runner's own build has the features it has in the
//! workspace's test build, so cargo reuses those builds (runner/Cargo.toml, "Feature
//! unification").

use std::collections::BTreeMap;
use std::process::Command;

/// `package version -> features` of a build, as `cargo tree` resolves it.
fn features(args: &[&str]) -> BTreeMap<String, String> {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "--prefix",
            "none",
            "--format",
            "{p}|{f}",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim_end_matches(" (*)").split_once('|'))
        .map(|(package, features)| (package.to_owned(), features.to_owned()))
        .collect()
}

#[test]
fn the_runner_alone_builds_its_dependencies_with_the_features_of_cargo_test() {
    let workspace = features(&["--workspace", "--edges", "normal,build,dev"]);
    let runner = features(&["--package", "opspec-runner", "--edges", "normal,build"]);
    let differing: Vec<String> = runner
        .iter()
        .filter(|(package, features)| workspace.get(*package) != Some(features))
        .map(|(package, features)| {
            format!(
                "{package}: runner [{features}], cargo test [{}]",
                workspace.get(package).map_or("absent", String::as_str)
            )
        })
        .collect();
    assert!(
        differing.is_empty(),
        "these would be compiled again by `cargo run -p opspec-runner` after `cargo test`; \
         name their features in runner/Cargo.toml:\n{}",
        differing.join("\n")
    );
}
