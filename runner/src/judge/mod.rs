//! What a trial's outcome means: its verdict and status, against the known failures.

pub(crate) mod expectations;
pub(crate) mod partition;
pub(crate) mod record;
pub(crate) mod run_verdict;
pub(crate) mod status;
pub mod verdict;
