//! The mutation campaign's configuration matches the source: every file `.cargo/mutants.toml`
//! examines exists and belongs to a group of `scripts/mutation/mutate_reference.py`, and every function
//! its exclusions or `mutants-equivalent.toml` name is still there
//! (`python3 scripts/mutation/mutate_reference.py check`, which needs no cargo-mutants).

use std::process::Command;

#[test]
fn the_mutation_configuration_names_what_exists() {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new("python3")
        .arg(format!("{root}/scripts/mutation/mutate_reference.py"))
        .arg("check")
        .output()
        .expect("python3 runs scripts/mutation/mutate_reference.py");
    let report = String::from_utf8_lossy(&output.stdout);
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{report}{errors}");
}
