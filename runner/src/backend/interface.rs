//! Who runs a case: the built-in reference, or an external program ([`crate::backend::process`]).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use opspec::ops::{Invocation, Planned};
use opspec::tensor::Limits;
use opspec::{DType, ErrorKind, OpError, Tensor};
use opspec_spec::{Case, Expectation};

use crate::backend::facts::Facts;

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
    /// A build-only backend built the case: the outputs' dtypes and shapes, without values.
    Built(Vec<BuiltOutput>),
}

/// One output of a built engine, as a build-only backend describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltOutput {
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    /// The engine's description of the output's format, when it gives one.
    pub(crate) format: Option<String>,
}

/// Why a backend gave no outcome for a case.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// It misbehaved on this case (crashed, hung, answered garbage): the case fails.
    #[error("{0}")]
    Broken(String),
    /// The case was not sent, for the reason given (the backend was given up on earlier in the
    /// run); such a case fails the run too.
    #[error("not run: {0}")]
    NotRun(String),
}

/// A fault found after its trial was judged: a second reply to a case that came only while the
/// backend worked on a later one, or as it ended. The run fails that trial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LateFault {
    pub(crate) trial: String,
    pub(crate) message: String,
}

/// Why a case is not sent: the hello declaration that excludes it, and the reason reported.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Exclusion {
    /// The declaration, as the summary counts it: `op scale`, `target dla`,
    /// `slice dtype fp8`, `slice mode=reflect` (docs/protocol.md, "Reports").
    pub(crate) by: String,
    pub(crate) reason: String,
}

impl From<Exclusion> for String {
    fn from(exclusion: Exclusion) -> String {
        exclusion.reason
    }
}

/// An implementation under test, shared by every test thread.
pub trait Backend: Send + Sync {
    fn name(&self) -> String;

    /// The engine and the machine its verdicts hold on ([`crate::backend::facts`]).
    fn facts(&self) -> Facts {
        Facts::host()
    }

    /// The ops (`slice`) and formats (`reformat:CHW4`) that the backend composes from other
    /// operations rather than implements, each with how (the hello's `composed`).
    fn composed(&self) -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    /// Whether rejection messages are the reference's own (so spec message fragments apply).
    fn is_reference(&self) -> bool {
        false
    }

    /// Whether the backend only builds cases, answering with output dtypes and shapes
    /// ([`Outcome::Built`]) rather than values; trials that need values (round trips) are
    /// then excluded.
    fn build_only(&self) -> bool {
        false
    }

    /// `Err` when the backend declared that it does not support this case (its op, dtype, an
    /// attribute value, or a restriction of its target); such a case is not sent.
    fn supports(&self, _case: &Case) -> Result<(), Exclusion> {
        Ok(())
    }

    /// The dtypes of the case (`trial_dtypes`) that the backend's hello excludes for its op.
    /// A case that expects an error is sent even so (see `crate::judge::verdict::judge_excluding`).
    fn excluded_dtypes(&self, _case: &Case) -> Vec<DType> {
        Vec::new()
    }

    /// The most cases the backend is sent in one request (docs/protocol.md, "Batches").
    fn batch(&self) -> usize {
        1
    }

    /// The cases the run sends, in the order its trials run: a backend that takes batches
    /// cuts them into batches by that order alone. Called at most once, before any case runs.
    fn plan(&self, _cases: Vec<Case>) {}

    /// Runs a case as [`Backend::run`] does, with the composed paths that produced its answer:
    /// keys of [`Backend::composed`] its reply names (docs/protocol.md, "Composed as it
    /// happened"). None for a backend that composes nothing.
    fn run_noting(&self, case: &Case) -> Result<(Outcome, Vec<String>), BackendError> {
        self.run(case).map(|outcome| (outcome, Vec::new()))
    }

    /// Runs a case. `Err` means the backend itself misbehaved (crashed, hung, replied with
    /// garbage) or could not be asked at all.
    fn run(&self, case: &Case) -> Result<Outcome, BackendError>;

    /// Stops sending cases and ends the ones in flight as not run (`--fail-fast`, after the
    /// first failure).
    fn halt(&self) {}

    /// Ends the backend after the last trial, and gives the faults found after their trial was
    /// judged ([`LateFault`]).
    fn finish(&self) -> Vec<LateFault> {
        Vec::new()
    }
}

/// The inputs that carry data rather than indices: the rest (`reshape_dims`, `start`, `size`,
/// `stride`, `axes`) are int32/int64 shape tensors, the same for every data dtype.
const DATA_INPUTS: [&str; 2] = ["input", "fill"];

/// The dtypes a trial involves, in [`DType::ALL`] order: those of its data inputs (the input
/// and Slice's fill) and of its expected outputs. The hello's `dtypes` filter and the reports
/// use them (docs/protocol.md).
pub(crate) fn trial_dtypes(case: &Case) -> Vec<DType> {
    let inputs = case
        .op
        .inputs()
        .iter()
        .zip(&case.invocation.inputs)
        .filter(|(name, _)| DATA_INPUTS.contains(name))
        .filter_map(|(_, tensor)| tensor.as_ref());
    let outputs = match &case.expect {
        Expectation::Outputs(outputs) => outputs.as_slice(),
        Expectation::Error { .. } => &[],
    };
    let mut dtypes: Vec<DType> = inputs.chain(outputs).map(|t| t.dtype).collect();
    dtypes.extend(case.dtype);
    dtypes.sort();
    dtypes.dedup();
    dtypes
}

/// The dtype a report files a trial under: the one it was instantiated in (a case's `dtypes`
/// entry), else its input's, else its first output's.
pub(crate) fn primary_dtype(case: &Case) -> Option<DType> {
    case.dtype
        .or_else(|| {
            let input = case.invocation.inputs.first().and_then(Option::as_ref);
            input.map(|t| t.dtype)
        })
        .or_else(|| match &case.expect {
            Expectation::Outputs(outputs) => outputs.first().map(|t| t.dtype),
            Expectation::Error { .. } => None,
        })
}

/// How the reference evaluates a checked invocation's plan: `plain`, the op's own evaluation
/// in `opspec` (element by element, as the rule reads), or `fast` (the default), the kernels
/// of `opspec-kernels` on the same plan. Both give the same bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// [`opspec::ops::Plan::evaluate`].
    Plain,
    /// [`opspec_kernels::fast`].
    #[default]
    Fast,
}

impl Engine {
    pub(crate) const ALL: [Engine; 2] = [Engine::Plain, Engine::Fast];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Engine::Plain => "plain",
            Engine::Fast => "fast",
        }
    }

    /// The invocation's plan ([`opspec::ops::plan`]) within `limits`, evaluated by this engine.
    pub fn evaluate(self, invocation: &Invocation, limits: Limits) -> Result<Vec<Tensor>, OpError> {
        let Planned { plan, input } = opspec::ops::plan(invocation, limits)?;
        Ok(vec![match self {
            Engine::Plain => plan.evaluate(input),
            Engine::Fast => opspec_kernels::fast(&plan, input),
        }])
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine name other than `plain` or `fast`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine `{0}`: expected `plain` or `fast`")]
pub struct UnknownEngine(pub String);

impl FromStr for Engine {
    type Err = UnknownEngine;

    fn from_str(text: &str) -> Result<Engine, UnknownEngine> {
        Engine::ALL
            .into_iter()
            .find(|engine| engine.name() == text.trim())
            .ok_or_else(|| UnknownEngine(text.to_string()))
    }
}

/// The interpreter in this repository, on its engine, within the run's limits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reference {
    pub(crate) engine: Engine,
    pub(crate) limits: Limits,
}

impl Reference {
    /// The invocation's plan within the limits, evaluated by the engine.
    pub(crate) fn evaluate(&self, invocation: &Invocation) -> Result<Vec<Tensor>, OpError> {
        self.engine.evaluate(invocation, self.limits)
    }
}

impl Backend for Reference {
    fn name(&self) -> String {
        "reference".into()
    }

    fn facts(&self) -> Facts {
        Facts {
            engine: Some("reference".into()),
            version: Some(env!("CARGO_PKG_VERSION").into()),
            ..Facts::host()
        }
    }

    fn is_reference(&self) -> bool {
        true
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        Ok(match self.evaluate(&case.invocation) {
            Ok(outputs) => Outcome::Outputs(outputs),
            Err(e) => Outcome::Rejected {
                kind: Some(e.kind),
                message: e.detail(),
            },
        })
    }
}
