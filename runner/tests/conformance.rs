//! `cargo test` entry point: the conformance suite as one trial per case, against the
//! reference or the backend named by `OPSPEC_BACKEND`. It takes the `runner` binary's run
//! options too (`cargo test --test conformance -- --help`); relative paths are relative to
//! the repository root, wherever cargo starts this binary.

use std::process::ExitCode;

use clap::Parser;
use libtest_mimic::Arguments;
use opspec_runner::main_with;
use opspec_runner::run::config::{parse_command_line, repository_root, Options};

/// The opspec conformance suite, one trial per case.
#[derive(Parser, Debug)]
#[command(name = "conformance", disable_version_flag = true)]
struct Harness {
    #[command(flatten)]
    options: Options,
    #[command(flatten, next_help_heading = "Test selection and output (libtest's)")]
    test: Arguments,
}

fn main() -> ExitCode {
    let harness: Harness = parse_command_line();
    match harness.options.resolve(&repository_root()) {
        Ok(config) => main_with(harness.test, config),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
