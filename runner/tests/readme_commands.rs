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

/// A test `cargo test` leaves out says in its `#[ignore = "...: COMMAND"]` the command that runs
/// it; README.md names that command and `.ci/run` runs it, so no left-out test goes unrun.
#[test]
fn every_test_left_out_names_a_command_that_readme_names_and_ci_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let mut left_out = 0;
    for folder in ["runner/tests", "tests"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            for line in source.lines().map(str::trim) {
                if !line.starts_with("#[ignore") {
                    continue;
                }
                left_out += 1;
                let command = line
                    .strip_prefix("#[ignore = \"")
                    .and_then(|rest| rest.strip_suffix("\"]"))
                    .and_then(|reason| reason.split_once(": "))
                    .map(|(_, command)| command)
                    .unwrap_or_else(|| {
                        panic!(
                            "{}: `{line}` does not name the command that runs it",
                            path.display()
                        )
                    });
                assert!(
                    readme.contains(command),
                    "{}: README.md does not name `{command}`",
                    path.display()
                );
                let arguments = command
                    .strip_prefix("cargo test ")
                    .unwrap_or_else(|| panic!("{}: `{command}` is not cargo test", path.display()));
                assert!(
                    ci.lines()
                        .any(|line| !line.trim_start().starts_with('#') && line.contains(arguments)),
                    "{}: .ci/run does not run `{command}`",
                    path.display()
                );
            }
        }
    }
    assert!(left_out > 0, "no test is left out of cargo test");
}
