//! opspec: a reference interpreter for tensor layout operators as their vendors document
//! them.
//!
//! Data flows one way: spec YAML → a typed case (crate `opspec-spec`) → a backend
//! ([`ops::evaluate`] for the reference) → a verdict and a report in the runner.
//!
//! This crate is the reference alone: each op checks an invocation into a plan of plain data
//! ([`ops::plan`]) and evaluates it the way its vendor states the rule ([`ops::Plan::evaluate`]).
//! The fast kernels (`opspec-kernels`) evaluate the same plans and are unknown here; the spec
//! files, their loader and the comparison of outputs are `opspec-spec`; generated cases and
//! goldens are `opspec-generate`; the harness and the backend protocol are `opspec-runner`.

#![forbid(unsafe_code)]

pub mod dtype;
pub mod error;
pub mod float;
pub mod ops;
pub mod tensor;

pub use dtype::DType;
pub use error::{ErrorKind, OpError};
pub use ops::{Invocation, Op};
pub use tensor::Tensor;
