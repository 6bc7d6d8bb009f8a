//! Commands beside a run: `runner coverage` and differential fuzzing.

pub mod coverage;
pub mod fuzz;
