//! A run: its configuration, the harness that makes every case a trial, replay and in-process runs.

pub mod config;
pub(crate) mod generated;
pub mod harness;
pub(crate) mod in_process;
pub mod offline;
pub mod replay;
pub(crate) mod send;
pub(crate) mod trial_kind;
pub(crate) mod trials;
