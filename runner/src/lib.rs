//! The conformance harness: every spec case becomes one libtest-mimic trial, run against the
//! built-in reference or an external backend process.
//!
//! Configuration comes from flags and `OPSPEC_*` variables of one meaning ([`config`]): the
//! variables reach `cargo test` and cargo nextest alike, which forward no custom flags.
//!
//! One path for every run ([`harness`]): the loaded cases go to a [`backend`], its outcome to
//! the [`verdict`], the verdict to a [`report`] record. This file only declares the modules;
//! no module imports another one that imports it back, nor this root (tests/layering.rs checks).

pub mod attributes;
pub mod backend;
pub mod checkout;
pub mod child;
pub mod config;
pub mod coverage;
pub mod diff;
pub mod dump;
pub mod expectations;
pub mod facts;
pub mod fuzz;
pub mod generated;
pub mod harness;
pub mod html;
pub mod in_process;
pub mod interrupt;
pub mod merge;
pub mod output;
pub mod partition;
pub mod process;
pub mod protocol;
pub mod replay;
pub mod replay_command;
pub mod report;
pub mod serve;
pub mod update;
pub mod verdict;
pub mod wpt;

pub use config::Config;
pub use harness::{main_with, Harness, RunError, RunSummary};
pub use in_process::{run_in_process, Declaration, InProcessBackend, Refusal};
