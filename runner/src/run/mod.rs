//! A run: its configuration, the harness that makes every case a trial, replay and in-process runs.

pub mod config;
pub mod generated;
pub mod harness;
pub mod in_process;
pub mod replay;
