//! Who runs a case: the built-in reference, or an external program ([`crate::process`]).

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

/// Why a backend gave no outcome for a case.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// It misbehaved on this case (crashed, hung, answered garbage): the case fails.
    #[error("{0}")]
    Broken(String),
    /// The case was not sent, for the reason given (the backend was given up on earlier in the
    /// run); such a case fails the run too.
    #[error("not run: {0}")]
    NotRun(String),
}

/// An implementation under test, shared by every test thread.
pub trait Backend: Send + Sync {
    fn name(&self) -> String;

    /// Whether rejection messages are the reference's own (so spec message fragments apply).
    fn is_reference(&self) -> bool {
        false
    }

    /// `Err(reason)` when the backend declared that it does not support this case (its op,
    /// dtype, or a restriction of its target); such a case is not sent.
    fn supports(&self, _case: &Case) -> Result<(), String> {
        Ok(())
    }

    /// Runs a case. `Err` means the backend itself misbehaved (crashed, hung, replied with
    /// garbage) or could not be asked at all.
    fn run(&self, case: &Case) -> Result<Outcome, BackendError>;
}

/// The interpreter in this repository.
pub struct Reference;

impl Backend for Reference {
    fn name(&self) -> String {
        "reference".into()
    }

    fn is_reference(&self) -> bool {
        true
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        Ok(match ops::evaluate(&case.invocation) {
            Ok(outputs) => Outcome::Outputs(outputs),
            Err(e) => Outcome::Rejected {
                kind: Some(e.kind),
                message: e.detail(),
            },
        })
    }
}
