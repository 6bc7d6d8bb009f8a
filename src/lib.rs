//! opspec: a reference interpreter for tensor layout operators as their vendors document
//! them, and the model of the declarative spec files that test any implementation of them.
//!
//! Data flows one way: spec YAML → [`spec::Case`] → a backend ([`ops::evaluate`] for the
//! reference) → [`compare`] → a report in the runner.

#![deny(unsafe_code)] // allowed in two places: `kernels::pages` (madvise, outputs set part by part) and `kernels::stream` (streamed stores), both measured in BENCHMARKS.md

pub mod compare;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod float;
pub mod generate;
pub mod golden;
pub mod kernels;
pub mod layout;
pub mod ops;
pub mod spec;
pub mod tensor;

pub use dtype::DType;
pub use engine::Engine;
pub use error::{ErrorKind, OpError};
pub use ops::{Invocation, Op};
pub use tensor::Tensor;
