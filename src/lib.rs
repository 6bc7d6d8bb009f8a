//! opspec: a reference interpreter for tensor layout operators as their vendors document
//! them, and the model of the declarative spec files that test any implementation of them.
//!
//! Data flows one way: spec YAML → [`spec::Case`] → a backend ([`ops::evaluate`] for the
//! reference) → [`compare`] → a report in the runner.
//!
//! This crate is the reference alone: its loops are the plain ones ([`engine::Plain`]). The
//! fast kernels (`opspec-kernels`) plug in through [`engine::Engine`]; generated cases and
//! goldens are `opspec-generate`; the harness and the backend protocol are `opspec-runner`.

#![forbid(unsafe_code)]

pub mod compare;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod float;
pub mod image;
pub mod layout;
pub mod npy;
pub mod ops;
pub mod rng;
pub mod source;
pub mod spec;
pub mod tensor;

pub use dtype::DType;
pub use engine::{Engine, Plain};
pub use error::{ErrorKind, OpError};
pub use ops::{Invocation, Op};
pub use tensor::Tensor;
