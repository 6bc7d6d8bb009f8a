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

/// The test backends are no binaries of the published runner package: `cargo install
/// opspec-runner` installs `runner` and `opspec-fuzz` alone, and the package that holds the
/// test backends is never published.
#[test]
fn the_runner_package_ships_no_test_backend() {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let package = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no package {name}"))
    };
    let bins = |package: &serde_json::Value| -> Vec<String> {
        let mut bins: Vec<String> = (package["targets"].as_array().unwrap().iter())
            .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        bins.sort();
        bins
    };
    assert_eq!(bins(package("opspec-runner")), ["opspec-fuzz", "runner"]);
    let fixtures = package("opspec-test-backends");
    assert_eq!(bins(fixtures), ["broken_reflect_backend", "faulty_backend"]);
    // `publish = false` reads as an empty list of registries.
    assert_eq!(fixtures["publish"], serde_json::json!([]), "{fixtures:#}");
}
