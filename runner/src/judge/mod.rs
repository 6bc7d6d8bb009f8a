//! What a trial's outcome means: its verdict and status, against the known failures.

pub mod expectations;
pub mod partition;
pub mod record;
pub mod verdict;
