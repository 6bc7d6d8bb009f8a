//! Metamorphic relations: two ops in sequence that must give the input back.
//!
//! | op | first step | second step |
//! |---|---|---|
//! | `shuffle` | any shuffle (transpose, reshape, transpose) | the inverse shuffle: transpose by the inverse of the second permutation, reshape back to the first-transposed shape (`zero_is_placeholder: false`), transpose by the inverse of the first |
//! | `slice` | FILL with stride ±1 on every axis, the window covering the input (padding) | STRICT_BOUNDS slice of the input's place in the padded output |
//! | `reformat` | pack: `LINEAR` → a format | unpack: that format → `LINEAR` with the input's shape |
//!
//! The second step is built from the first step's attributes and the input's shape only, so
//! both steps run on the implementation under test and neither depends on the reference.

use opspec::error::OpError;
use opspec::ops::reformat::{self, Format};
use opspec::ops::slice::{self, Mode};
use opspec::ops::{shuffle, Attrs, Invocation, Op};
use opspec::tensor::{Limits, Tensor};

/// An op's round trip: what reports call it, and its steps.
pub struct RoundTrip {
    /// What the round trip is called in reports.
    pub describe: &'static str,
    /// The clauses the second step relies on beyond those of the first, which a round-trip
    /// trial cites too.
    pub way_back_clauses: &'static [&'static str],
    /// Whether the round trip applies to this first step.
    pub applies: fn(&Invocation) -> bool,
    /// The second step, given the first step, its input 0 and the output it gave.
    pub second: fn(&Invocation, &Tensor, &Tensor, Limits) -> Result<Invocation, NoWayBack>,
}

fn round_trip(op: Op) -> Option<&'static RoundTrip> {
    crate::GENERATORS.get(op).round_trip.as_ref()
}

/// Whether `op` has a round trip here.
pub fn supported(op: Op) -> bool {
    round_trip(op).is_some()
}

/// What the round trip of an op is called in reports.
pub fn describe(op: Op) -> &'static str {
    round_trip(op).map_or("no round trip", |r| r.describe)
}

/// The clauses the second step relies on beyond those of the first, which a round-trip trial
/// cites too: the inverse shuffle transposes on both sides of a reshape, whatever the first
/// step uses. (Slice's way back reads in bounds with STRICT_BOUNDS, and reformat's unpacks the
/// format the first step packed: rules of the first step's own clauses or none a trial fails on.)
pub fn way_back_clauses(op: Op) -> &'static [&'static str] {
    round_trip(op).map_or(&[], |r| r.way_back_clauses)
}

/// Whether the round trip applies to this first step (it may still be rejected as invalid).
pub fn applies(first: &Invocation) -> bool {
    round_trip(first.op()).is_some_and(|r| (r.applies)(first))
}

/// Why there is no second step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoWayBack {
    #[error("the first step has no input")]
    NoInput,
    /// The first step's attributes do not plan (its own failure is reported elsewhere).
    #[error("{0}")]
    FirstStep(OpError),
    #[error("the FILL slice does not cover its input")]
    UncoveredFill,
    #[error("this op has no round trip")]
    NoRoundTrip,
}

/// The second step, given the first step and the output it gave (the first step planned
/// within `limits`).
pub fn second(
    first: &Invocation,
    output: &Tensor,
    limits: Limits,
) -> Result<Invocation, NoWayBack> {
    let input = first
        .inputs
        .first()
        .and_then(Option::as_ref)
        .ok_or(NoWayBack::NoInput)?;
    let round_trip = round_trip(first.op()).ok_or(NoWayBack::NoRoundTrip)?;
    (round_trip.second)(first, input, output, limits)
}

pub(crate) const SHUFFLE: RoundTrip = RoundTrip {
    describe: "shuffle then the inverse shuffle",
    way_back_clauses: &[
        "shuffle.order.transpose-reshape-transpose",
        "shuffle.transpose.first-permutation",
        "shuffle.reshape.dims",
        "shuffle.transpose.second-permutation",
    ],
    applies: |_| true,
    second: |first, input, output, limits| {
        let Attrs::Shuffle(attrs) = &first.attrs else {
            unreachable!()
        };
        let plan = shuffle::plan(
            attrs,
            &input.shape,
            first.inputs.get(1).and_then(Option::as_ref),
            limits,
        )
        .map_err(NoWayBack::FirstStep)?;
        let transposed: Vec<i64> = plan.first.iter().map(|&a| input.shape[a] as i64).collect();
        Ok(Invocation {
            attrs: Attrs::Shuffle(shuffle::Attrs {
                first_transpose: Some(inverse(&plan.second)),
                reshape_dims: Some(transposed),
                second_transpose: Some(inverse(&plan.first)),
                zero_is_placeholder: Some(false),
            }),
            inputs: vec![Some(output.clone()), None],
        })
    },
};

pub(crate) const SLICE: RoundTrip = RoundTrip {
    describe: "pad by FILL then STRICT_BOUNDS slice back",
    way_back_clauses: &[],
    applies: |first| matches!(&first.attrs, Attrs::Slice(attrs) if slice_back(attrs, first).is_some()),
    second: |first, _, output, _| {
        let Attrs::Slice(attrs) = &first.attrs else {
            unreachable!()
        };
        let back = slice_back(attrs, first).ok_or(NoWayBack::UncoveredFill)?;
        let mut inputs = vec![None; Op::Slice.inputs().len()];
        inputs[0] = Some(output.clone());
        Ok(Invocation {
            attrs: Attrs::Slice(slice::Attrs {
                start: Some(back.iter().map(|a| a.0).collect()),
                size: Some(back.iter().map(|a| a.1).collect()),
                stride: Some(back.iter().map(|a| a.2).collect()),
                mode: Some(Mode::StrictBounds),
                axes: None,
            }),
            inputs,
        })
    },
};

pub(crate) const REFORMAT: RoundTrip = RoundTrip {
    describe: "pack then unpack",
    way_back_clauses: &[],
    applies: |first| matches!(&first.attrs, Attrs::Reformat(attrs) if attrs.from == Format::Linear && attrs.to != Format::Linear),
    second: |first, input, output, _| {
        let Attrs::Reformat(attrs) = &first.attrs else {
            unreachable!()
        };
        Ok(Invocation {
            attrs: Attrs::Reformat(reformat::Attrs {
                from: attrs.to,
                to: Format::Linear,
                shape: Some(input.shape.iter().map(|&d| d as i64).collect()),
                dla: attrs.dla,
            }),
            inputs: vec![Some(output.clone())],
        })
    },
};

fn inverse(perm: &[usize]) -> Vec<i64> {
    let mut inverse = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i as i64;
    }
    inverse
}

/// Per input axis, the (start, size, stride) of the STRICT_BOUNDS slice that takes a FILL
/// slice's input back out of its output; `None` unless the first step is a FILL slice with
/// stride ±1 whose window covers the input on every axis.
fn slice_back(attrs: &slice::Attrs, first: &Invocation) -> Option<Vec<(i64, i64, i64)>> {
    if attrs.mode != Some(Mode::Fill) {
        return None;
    }
    let input = first.inputs.first()?.as_ref()?;
    let given = |position: usize, attr: &Option<Vec<i64>>| -> Option<Option<Vec<i64>>> {
        match first.inputs.get(position).and_then(Option::as_ref) {
            Some(tensor) => Some(Some(tensor.int_values()?)),
            None => Some(attr.clone()),
        }
    };
    let start = given(1, &attrs.start)??;
    let size = given(2, &attrs.size)??;
    let rank = input.rank();
    let axes: Vec<usize> = match given(5, &attrs.axes)? {
        None => (0..rank).collect(),
        Some(axes) => axes
            .iter()
            .map(|&a| {
                let a = if a < 0 { a + rank as i64 } else { a };
                (0..rank as i64).contains(&a).then_some(a as usize)
            })
            .collect::<Option<Vec<usize>>>()?,
    };
    let stride = given(3, &attrs.stride)?.unwrap_or_else(|| vec![1; axes.len()]);
    if start.len() != axes.len() || size.len() != axes.len() || stride.len() != axes.len() {
        return None;
    }
    let mut back: Vec<(i64, i64, i64)> = input.shape.iter().map(|&d| (0, d as i64, 1)).collect();
    for (k, &axis) in axes.iter().enumerate() {
        let d = input.shape[axis] as i64;
        let (start, size, stride) = (start[k], size[k], stride[k]);
        back[axis] = match stride {
            1 if start <= 0 && start + size >= d => (-start, d, 1),
            -1 if start - (d - 1) >= 0 && start < size => (start, d, -1),
            _ if d == 0 && size >= 0 => (0, 0, 1),
            _ => return None,
        };
    }
    Some(back)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::Provenance;
    use opspec::dtype::DType;
    use opspec::ops::evaluate;

    fn round_trip(first: Invocation) {
        assert!(applies(&first), "{first:?}");
        let output = evaluate(&first, Limits::DEFAULT).unwrap().remove(0);
        let back = evaluate(
            &second(&first, &output, Limits::DEFAULT).unwrap(),
            Limits::DEFAULT,
        )
        .unwrap()
        .remove(0);
        assert_eq!(&back, first.inputs[0].as_ref().unwrap());
    }

    #[test]
    fn shuffle_inverse_gives_the_input_back() {
        let input = Provenance::tensor(DType::Float32, vec![2, 3, 4]);
        round_trip(Invocation {
            attrs: Attrs::Shuffle(shuffle::Attrs {
                first_transpose: Some(vec![2, 0, 1]),
                reshape_dims: Some(vec![0, -1]),
                second_transpose: Some(vec![1, 0]),
                zero_is_placeholder: None,
            }),
            inputs: vec![Some(input), None],
        });
    }

    #[test]
    fn fill_then_strict_gives_the_input_back() {
        let input = Provenance::tensor(DType::Int8, vec![3, 4]);
        let mut inputs = vec![None; 6];
        inputs[0] = Some(input);
        round_trip(Invocation {
            attrs: Attrs::Slice(slice::Attrs {
                start: Some(vec![-2, 5]),
                size: Some(vec![6, 7]),
                stride: Some(vec![1, -1]),
                mode: Some(Mode::Fill),
                axes: None,
            }),
            inputs: inputs.clone(),
        });
        let not_covering = Invocation {
            attrs: Attrs::Slice(slice::Attrs {
                start: Some(vec![1, 0]),
                size: Some(vec![2, 4]),
                stride: None,
                mode: Some(Mode::Fill),
                axes: None,
            }),
            inputs,
        };
        assert!(!applies(&not_covering));
    }

    #[test]
    fn pack_then_unpack_gives_the_input_back() {
        round_trip(Invocation {
            attrs: Attrs::Reformat(reformat::Attrs {
                from: Format::Linear,
                to: Format::Chw4,
                shape: None,
                dla: None,
            }),
            inputs: vec![Some(Provenance::tensor(DType::Int8, vec![2, 5, 2, 3]))],
        });
    }

    #[test]
    fn no_way_back_says_why() {
        let input = Provenance::tensor(DType::Float32, vec![1, 1, 2, 2]);
        let scale = Invocation {
            attrs: Attrs::Scale(opspec::ops::scale::Attrs {
                mode: opspec::ops::scale::Mode::Uniform,
                scale: Default::default(),
                shift: Default::default(),
                power: Default::default(),
                channel_axis: None,
                output_dtype: None,
            }),
            inputs: vec![Some(input.clone())],
        };
        assert_eq!(
            second(&scale, &input, Limits::DEFAULT),
            Err(NoWayBack::NoRoundTrip)
        );
        let empty = Invocation {
            inputs: vec![],
            ..scale
        };
        assert_eq!(
            second(&empty, &input, Limits::DEFAULT),
            Err(NoWayBack::NoInput)
        );
    }
}
