//! The suite against the example engine ([`LayoutEngine`]), in process:
//!
//! ```sh
//! cargo run --release -p opspec-example-backend -- -q
//! ```
//!
//! It takes the runner's options (`--specs`, `--sweeps`, `--expectations`, `--report-json`,
//! ..., and libtest's filter and flags; `--help` lists them) and exits as `runner` does.

use std::process::ExitCode;

use clap::Parser;
use libtest_mimic::Arguments;
use opspec_example_backend::LayoutEngine;
use opspec_runner::run::config::{parse_command_line, Options};
use opspec_runner::run_in_process;

/// Runs the opspec conformance suite against the example engine of Shuffle and Slice.
#[derive(Parser, Debug)]
#[command(name = "opspec-example-backend")]
struct Cli {
    #[command(flatten)]
    options: Options,
    #[command(flatten, next_help_heading = "Test selection and output (libtest's)")]
    test: Arguments,
}

fn main() -> ExitCode {
    let cli: Cli = parse_command_line();
    let config = match cli.options.resolve_here() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match run_in_process(cli.test, config, LayoutEngine) {
        Ok(summary) => summary.exit_code(),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
