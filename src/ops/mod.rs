//! The operators, one module each.
//!
//! | op | module | documented by |
//! |---|---|---|
//! | `shuffle` | [`shuffle`] | TensorRT `IShuffleLayer` (seed 000) |
//! | `slice` | [`slice`](mod@slice) | TensorRT `ISliceLayer` (seed 004) |
//! | `as_strided` | [`as_strided`] | Ascend ATB `AsStridedOperation` (seed 001) |
//! | `scale` | [`scale`] | TensorRT `IScaleLayer` (seed 003) |
//! | `reformat` | [`reformat`] | TensorRT `TensorFormat` memory layouts (NvInferRuntime.h; not seed 002) |
//!
//! Each module has its attributes, `plan`, which checks an invocation and returns plain data
//! (a typed error citing its clause before any output is allocated), and `evaluate`, the plain
//! evaluation of a plan, which reads like the vendor's rule. This module only names them and
//! routes an [`Invocation`]: [`plan`] then [`Plan::evaluate`]. Faster evaluations (crate
//! `opspec-kernels`) take the same [`Plan`]; this crate knows nothing of them.
//! Every error names the clause it enforces ([`OpError::clause`]), an id of the op's catalogue
//! `specs/<op>.clauses.yaml`, where each rule of the module docs has its clause and source.

pub mod as_strided;
pub mod reformat;
pub mod scale;
pub mod shuffle;
pub mod slice;

use std::fmt;

use crate::error::{ErrorKind, OpError};
use crate::tensor::{Limits, Tensor};

/// TensorRT's largest rank, `Dims64::MAX_DIMS` (NvInferRuntimeBase.h: "the maximum rank (number
/// of dimensions) supported for a tensor"): no input, intermediate or output of shuffle, slice,
/// scale or reformat has more dims (docs/semantics.md §6.1). AsStrided has ATB's own limit.
pub const MAX_RANK: usize = 8;

/// Rejects a tensor of more than [`MAX_RANK`] dims under the op's `clause`; `what` names it.
pub(crate) fn check_max_rank(
    shape: &[usize],
    clause: &'static str,
    what: &str,
) -> Result<(), OpError> {
    if shape.len() > MAX_RANK {
        return Err(OpError::new(
            ErrorKind::InvalidRank,
            clause,
            format!(
                "{what} of shape {shape:?} has {} dims, TensorRT tensors have at most {MAX_RANK}",
                shape.len()
            ),
        ));
    }
    Ok(())
}

/// An operator name, as spec folders and the wire protocol spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Shuffle,
    Slice,
    AsStrided,
    Scale,
    Reformat,
}

impl Op {
    pub const ALL: [Op; 5] = [
        Op::Shuffle,
        Op::Slice,
        Op::AsStrided,
        Op::Scale,
        Op::Reformat,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Op::Shuffle => "shuffle",
            Op::Slice => "slice",
            Op::AsStrided => "as_strided",
            Op::Scale => "scale",
            Op::Reformat => "reformat",
        }
    }

    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Input names in position order.
    pub fn inputs(self) -> &'static [&'static str] {
        match self {
            Op::Shuffle => &shuffle::INPUTS,
            Op::Slice => &slice::INPUTS,
            Op::AsStrided => &as_strided::INPUTS,
            Op::Scale => &scale::INPUTS,
            Op::Reformat => &reformat::INPUTS,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An op's attributes. Serializes as the op's own attribute object (the wire form).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Attrs {
    Shuffle(shuffle::Attrs),
    Slice(slice::Attrs),
    AsStrided(as_strided::Attrs),
    Scale(scale::Attrs),
    Reformat(reformat::Attrs),
}

impl Attrs {
    /// The op these attributes are of.
    pub fn op(&self) -> Op {
        match self {
            Attrs::Shuffle(_) => Op::Shuffle,
            Attrs::Slice(_) => Op::Slice,
            Attrs::AsStrided(_) => Op::AsStrided,
            Attrs::Scale(_) => Op::Scale,
            Attrs::Reformat(_) => Op::Reformat,
        }
    }
}

/// One call of an op: attributes and positional inputs (`None` = absent optional input).
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub attrs: Attrs,
    pub inputs: Vec<Option<Tensor>>,
}

impl Invocation {
    pub fn op(&self) -> Op {
        self.attrs.op()
    }

    /// Input `position`, when given.
    fn input(&self, position: usize) -> Option<&Tensor> {
        self.inputs.get(position).and_then(Option::as_ref)
    }
}

/// The plan of one op. Non-exhaustive so that the fast kernels (crate `opspec-kernels`) leave
/// an op they have no kernel for to [`Plan::evaluate`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Plan<'a> {
    Shuffle(shuffle::Plan),
    Slice(slice::Plan),
    AsStrided(as_strided::Plan),
    Scale(scale::Plan<'a>),
    Reformat(reformat::Plan),
}

impl Plan<'_> {
    /// The op's plain evaluation of this plan on `input` (input 0 of the invocation planned).
    pub fn evaluate(&self, input: &Tensor) -> Tensor {
        match self {
            Plan::Shuffle(plan) => shuffle::evaluate(plan, input),
            Plan::Slice(plan) => slice::evaluate(plan, input),
            Plan::AsStrided(plan) => as_strided::evaluate(plan, input),
            Plan::Scale(plan) => scale::evaluate(plan, input),
            Plan::Reformat(plan) => reformat::evaluate(plan, input),
        }
    }
}

/// A checked invocation: its op's plan, and input 0, which the plan is evaluated on.
#[derive(Clone, Debug, PartialEq)]
pub struct Planned<'a> {
    pub plan: Plan<'a>,
    pub input: &'a Tensor,
}

/// Checks an invocation: input 0 is required, then the op's own `plan`, whose output stays
/// within `limits`.
pub fn plan(invocation: &Invocation, limits: Limits) -> Result<Planned<'_>, OpError> {
    let input = invocation.input(0).ok_or_else(|| {
        OpError::new(
            ErrorKind::InvalidInput,
            "common.input.required",
            "input 0 is required",
        )
    })?;
    let plan = match &invocation.attrs {
        Attrs::Shuffle(attrs) => Plan::Shuffle(shuffle::plan(
            attrs,
            &input.shape,
            invocation.input(1),
            limits,
        )?),
        Attrs::Slice(attrs) => Plan::Slice(slice::plan(
            attrs,
            input,
            slice::Inputs {
                start: invocation.input(1),
                size: invocation.input(2),
                stride: invocation.input(3),
                fill: invocation.input(4),
                axes: invocation.input(5),
            },
            limits,
        )?),
        Attrs::AsStrided(attrs) => Plan::AsStrided(as_strided::plan(attrs, input, limits)?),
        Attrs::Scale(attrs) => Plan::Scale(scale::plan(attrs, input, limits)?),
        Attrs::Reformat(attrs) => Plan::Reformat(reformat::plan(attrs, input, limits)?),
    };
    Ok(Planned { plan, input })
}

/// Runs the reference implementation of an invocation: its [`plan`] within `limits`, then the
/// plan's plain evaluation.
pub fn evaluate(invocation: &Invocation, limits: Limits) -> Result<Vec<Tensor>, OpError> {
    let Planned { plan, input } = plan(invocation, limits)?;
    Ok(vec![plan.evaluate(input)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_zero_is_required() {
        // Only a wire request can leave input 0 out (the spec loader requires `input`), so this
        // clause (specs/common.clauses.yaml) is tested here rather than by a case.
        let invocation = Invocation {
            attrs: Attrs::AsStrided(as_strided::Attrs::default()),
            inputs: vec![None],
        };
        let error = evaluate(&invocation, Limits::DEFAULT).unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidInput);
        assert_eq!(error.clause, "common.input.required");
    }
}
