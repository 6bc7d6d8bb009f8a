//! Commands beside a run: `runner coverage`, `runner expectations` and differential fuzzing.

pub mod coverage;
pub mod expectations;
pub mod fuzz;
