//! In-process backends: an implementation written in Rust, handed to the harness as a value
//! and run in this process, without the wire protocol (docs/protocol.md) or a second process.
//!
//! Implement [`InProcessBackend`] (one invocation in, its outputs or a [`Refusal`] out) and
//! call [`run_in_process`]: the same trials, verdicts, known failures (`--expectations`),
//! reports and run rules as `runner --backend`, with the counts returned as a [`RunSummary`].
//! `runner/example-backend` is a complete example.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use libtest_mimic::Arguments;
use opspec::ops::Invocation;
use opspec::tensor::Limits;
use opspec::{ErrorKind, OpError, Tensor};
use opspec_spec::Case;

use std::collections::BTreeMap;

use opspec::DType;

use crate::backend::hello::Capabilities;
use crate::backend::interface::{Backend, BackendError, Exclusion, Outcome};
use crate::judge::run_verdict::RunSummary;
use crate::run::config::Config;
use crate::run::harness::RunError;

/// An implementation under test, in Rust: evaluates one invocation (an op, its attributes and
/// inputs) as the implementation would. Shared by the test threads.
pub trait InProcessBackend: Send + Sync {
    /// The name the reports give the backend.
    fn name(&self) -> String;

    /// What the backend implements, as a process says it in its hello (docs/protocol.md,
    /// "What the runner does with a hello"): cases it leaves out are excluded without being
    /// run, with the same rules (error cases of an excluded dtype still run; more than a tenth
    /// of the trials answered unsupported without being declared fails the run). `None`, the
    /// default: everything.
    fn declaration(&self) -> Option<Declaration> {
        None
    }

    /// The outputs of `invocation`, or why there are none; `limits` are the run's bounds of
    /// every tensor (`--max-elements`; a backend process gets them in its environment). A
    /// panic fails the trial (as a crash of a backend process does), not the run.
    fn evaluate(&self, invocation: &Invocation, limits: Limits) -> Result<Vec<Tensor>, Refusal>;
}

/// What an in-process backend implements: the fields of a protocol hello, by name (an op, a
/// dtype, a target or an attribute value the suite does not know is an error, as in a
/// hello, since a typo would silently skip cases).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declaration {
    /// The ops it implements (`slice`, `shuffle`, ...).
    pub ops: Vec<String>,
    /// Per op, the dtypes it implements; an op left out takes every dtype.
    pub dtypes: BTreeMap<String, Vec<String>>,
    /// `dla` for a DLA target.
    pub targets: Vec<String>,
    /// Per op, per declarable attribute (`slice` `mode`, ...), the values it implements.
    pub attributes: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

/// Why an implementation gives no outputs for an invocation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// It rejects the invocation, under the rule `kind` names when it knows which (compared
    /// with the case's expected error kind, as a protocol `error` reply is).
    #[error("rejected: {message}")]
    Rejected {
        kind: Option<ErrorKind>,
        message: String,
    },
    /// It does not implement the invocation (an op, a dtype, an attribute value): the trial is
    /// reported unsupported, as a protocol `unsupported` reply is.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// The reference's own rejection, for a backend that wraps it.
impl From<OpError> for Refusal {
    fn from(error: OpError) -> Refusal {
        Refusal::Rejected {
            kind: Some(error.kind),
            message: error.detail(),
        }
    }
}

/// An [`InProcessBackend`] as the harness's [`Backend`], with what it declares.
struct InProcess<B> {
    backend: B,
    declared: Option<Capabilities>,
    limits: Limits,
}

impl<B: InProcessBackend> InProcess<B> {
    fn new(backend: B, limits: Limits) -> Result<InProcess<B>, RunError> {
        let declared = match backend.declaration() {
            None => None,
            Some(d) => Some(
                Capabilities::from_hello(backend.name(), d.ops, d.dtypes, d.targets, d.attributes)
                    .map_err(|e| {
                        RunError::Backend(format!(
                            "the declaration of backend `{}` names {e}",
                            backend.name()
                        ))
                    })?,
            ),
        };
        Ok(InProcess {
            backend,
            declared,
            limits,
        })
    }
}

impl<B: InProcessBackend> Backend for InProcess<B> {
    fn name(&self) -> String {
        self.backend.name()
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        self.declared.as_ref().map_or(Ok(()), |d| d.supports(case))
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        (self.declared.as_ref()).map_or_else(Vec::new, |d| d.excluded_dtypes(case))
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        let evaluated = catch_unwind(AssertUnwindSafe(|| {
            self.backend.evaluate(&case.invocation, self.limits)
        }));
        Ok(match evaluated {
            Ok(Ok(outputs)) => Outcome::Outputs(outputs),
            Ok(Err(Refusal::Rejected { kind, message })) => Outcome::Rejected { kind, message },
            Ok(Err(Refusal::Unsupported(reason))) => Outcome::Unsupported(reason),
            Err(panic) => {
                let what = (panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                return Err(BackendError::Broken(format!(
                    "the backend panicked: {what}"
                )));
            }
        })
    }
}

/// Runs the suite against `backend` in this process: the trials `args` selects (libtest's
/// filter and options; `Arguments::default()` for all), with the spec folders, sweeps,
/// known failures and reports of `config` (its `backend` command and `engine` are not used,
/// except the engine for the goldens' reference). Prints libtest's report and the op × dtype
/// table as `runner` does.
pub fn run_in_process(
    args: Arguments,
    config: Config,
    backend: impl InProcessBackend + 'static,
) -> Result<RunSummary, RunError> {
    let backend = InProcess::new(backend, config.limits())?;
    crate::run::harness::run(args, config, Some(Arc::new(backend)))
}
