//! README speaks the binary's language: outside the contributors' section ("## Contributing
//! ..."), every command runs the built binary (`target/release/runner`), none `cargo run`.

use std::path::Path;

#[test]
fn user_facing_sections_of_the_readme_run_the_built_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut section = String::new();
    let mut offending = Vec::new();
    let mut runner_commands = 0;
    for (number, line) in readme.lines().enumerate() {
        if let Some(title) = line.strip_prefix("## ") {
            section = title.to_owned();
        }
        if section.starts_with("Contributing") {
            continue;
        }
        if line.contains("cargo run") {
            offending.push(format!("README.md:{}: {line}", number + 1));
        }
        runner_commands += line.matches("target/release/runner").count();
    }
    assert!(
        offending.is_empty(),
        "user-facing commands use `cargo run` instead of target/release/runner:\n{}",
        offending.join("\n")
    );
    assert!(
        runner_commands >= 5,
        "{runner_commands} commands name target/release/runner"
    );
}
