//! The conformance harness: every spec case becomes one libtest-mimic trial, run against the
//! built-in reference or an external backend process.
//!
//! Configuration comes from flags and `OPSPEC_*` variables of one meaning ([`run::config`]):
//! the variables reach `cargo test` and cargo nextest alike, which forward no custom flags.
//!
//! The modules are in five folders, in this order: [`backend`] runs a case, [`judge`] gives
//! its outcome a status and a record, [`reports`] writes what a run found, [`run`] makes the
//! cases trials ([`run::harness`]), [`tools`] are the commands beside a run. A module imports
//! only from its own folder and the folders before it (of the backend, the reports read only
//! its facts), never in a circle, and never through this root (tests/layering.rs checks). This
//! file only declares the folders and re-exports the entry points.

pub mod backend;
pub mod judge;
pub mod reports;
pub mod run;
pub mod tools;

pub use backend::interface::{Backend, Engine};
pub use backend::serve::serve;
pub use judge::record::Record;
pub use judge::run_verdict::RunSummary;
pub use judge::status::{Counts, Status};
pub use run::config::Config;
pub use run::harness::{main_with, Harness, RunError};
pub use run::in_process::{run_in_process, Declaration, InProcessBackend, Refusal};
