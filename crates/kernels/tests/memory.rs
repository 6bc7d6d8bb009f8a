//! The memory bound of the repository's `tests/memory.rs` (docs/protocol.md, "Memory"), on the
//! fast engine: the same cases, each in a child process, evaluated by `opspec_kernels::evaluate`
//! (its index tables of at most `maps::TABLE_ENTRIES` entries and blocks of at most
//! `maps::BLOCK_ELEMENTS` elements are what the bound's overhead is for).

use std::process::ExitCode;

#[path = "../../../tests/memory.rs"]
#[allow(dead_code)]
mod cases;

fn main() -> ExitCode {
    cases::check_memory(opspec_kernels::evaluate)
}
