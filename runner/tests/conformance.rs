//! `cargo test` entry point: the conformance suite as one trial per case, against the
//! reference or the backend named by `OPSPEC_BACKEND`.

use std::process::ExitCode;

use libtest_mimic::Arguments;
use opspec_runner::{main_with, Config};

fn main() -> ExitCode {
    match Config::from_env() {
        Ok(config) => main_with(Arguments::from_args(), config),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}
