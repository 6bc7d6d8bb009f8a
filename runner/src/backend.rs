//! Who runs a case: the built-in reference, or (see `process`) an external program.

use opspec::spec::Case;
use opspec::{ops, ErrorKind, Tensor};

/// What an implementation did with a case.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Outputs(Vec<Tensor>),
    /// The implementation rejected the case; `kind` when it says which rule.
    Rejected {
        kind: Option<ErrorKind>,
        message: String,
    },
    /// The implementation does not support the case.
    Unsupported(String),
}

/// An implementation under test. Shared by every test thread.
pub trait Backend: Send + Sync {
    fn name(&self) -> &str;
    /// Whether rejection messages are the reference's own (so spec message fragments apply).
    fn is_reference(&self) -> bool {
        false
    }
    fn run(&self, case: &Case) -> Outcome;
}

/// The interpreter in this repository.
pub struct Reference;

impl Backend for Reference {
    fn name(&self) -> &str {
        "reference"
    }

    fn is_reference(&self) -> bool {
        true
    }

    fn run(&self, case: &Case) -> Outcome {
        match ops::evaluate(&case.invocation) {
            Ok(outputs) => Outcome::Outputs(outputs),
            Err(e) => Outcome::Rejected {
                kind: Some(e.kind),
                message: e.message,
            },
        }
    }
}
