//! `cargo test` entry point: the conformance suite as one trial per case.

use std::sync::Arc;

use libtest_mimic::Arguments;
use opspec_runner::backend::Reference;

fn main() -> std::process::ExitCode {
    opspec_runner::run(Arguments::from_args(), Arc::new(Reference)).exit_code()
}
