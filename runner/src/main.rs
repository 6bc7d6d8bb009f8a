//! `runner`: the conformance suite as a command, for people validating an implementation.
//! It takes libtest's options (a name filter, `--exact`, `--list`, `--ignored`, ...).

use std::sync::Arc;

use libtest_mimic::Arguments;
use opspec_runner::backend::Reference;

fn main() -> std::process::ExitCode {
    opspec_runner::run(Arguments::from_args(), Arc::new(Reference)).exit_code()
}
