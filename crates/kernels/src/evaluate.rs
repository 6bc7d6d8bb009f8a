//! The kernels' evaluation of the reference's plans: the same [`Plan`] as
//! [`opspec::ops::Plan::evaluate`] takes, the same bits, by the kernels of this crate.

use std::borrow::Cow;

use opspec::ops::{self, as_strided, reformat, slice, Invocation, Plan, Planned};
use opspec::tensor::{row_major_strides, Limits, Tensor};
use opspec::OpError;

use crate::maps::{gather_map, scatter_map, IndexMap, MapAxis, StridedView};

/// Layout outputs (gathers, scatters, views, Shuffle) of fewer elements than this stay on the
/// reference's plain evaluation: below it, the kernels' set-up (normalising the map, cutting
/// runs, tiles) can cost more than it saves. Set by measurement (`benches/threshold.rs`;
/// BENCHMARKS.md, "Engine threshold"): the size from which every measured op ran faster on
/// the kernels.
pub const THRESHOLD: usize = 4096;

/// Scale on fewer elements than this stays on the plain evaluation; its typed loops measured
/// faster from here on (BENCHMARKS.md, "Engine threshold").
pub const SCALE_THRESHOLD: usize = 16;

/// The fast engine on an invocation: the reference's [`ops::plan`] within `limits`, then
/// [`fast`].
pub fn evaluate(invocation: &Invocation, limits: Limits) -> Result<Vec<Tensor>, OpError> {
    let Planned { plan, input } = ops::plan(invocation, limits)?;
    Ok(vec![fast(&plan, input)])
}

/// The fast engine on a plan: [`kernels`] on outputs of [`THRESHOLD`] elements or more
/// (Scale: [`SCALE_THRESHOLD`]), the reference's plain evaluation below. The same bits, faster
/// from the thresholds on for every measured op but a one-axis slice, whose table costs as much
/// as the plain evaluation (BENCHMARKS.md, "Engine threshold").
pub fn fast(plan: &Plan, input: &Tensor) -> Tensor {
    let elements = match plan {
        Plan::Shuffle(_) | Plan::Scale(_) => input.len(),
        Plan::Slice(slice) => volume(&slice.shape()),
        Plan::AsStrided(view) => volume(&view.shape),
        Plan::Reformat(reformat) => volume(&reformat.from.logical),
        // An op without kernels: its plain evaluation at every size.
        _ => return plan.evaluate(input),
    };
    let threshold = match plan {
        Plan::Scale(_) => SCALE_THRESHOLD,
        _ => THRESHOLD,
    };
    if elements < threshold {
        return plan.evaluate(input);
    }
    kernels(plan, input)
}

/// The kernels on a plan at every size: what [`fast`] runs above its thresholds, and what the
/// tests and the thresholds' measurement (`benches/threshold.rs`) run at every size.
pub fn kernels(plan: &Plan, input: &Tensor) -> Tensor {
    match plan {
        Plan::Shuffle(plan) => crate::shuffle::run(input, plan),
        Plan::Slice(plan) => Tensor {
            dtype: input.dtype,
            shape: plan.shape(),
            buffer: gather_map(
                &input.buffer,
                &slice_map(plan, &input.shape),
                plan.fill_bits,
            ),
        },
        Plan::AsStrided(view) => Tensor {
            dtype: input.dtype,
            shape: view.shape.clone(),
            buffer: crate::gather_view(&input.buffer, &strided_view(view)),
        },
        // `None`: a buffer not of its dtype's width, which the plain evaluation handles.
        Plan::Scale(scale) => {
            crate::scale::run(scale, input).unwrap_or_else(|| plan.evaluate(input))
        }
        Plan::Reformat(plan) => {
            // A LINEAR input is the logical tensor itself: borrowed, not copied, on the way to
            // a pack; an unpacked one is moved out, not copied, when it is the output.
            let logical = match plan.from.format {
                reformat::Format::Linear => Cow::Borrowed(input),
                _ => Cow::Owned(unpack(&plan.from, input)),
            };
            match plan.to.format {
                reformat::Format::Linear => logical.into_owned(),
                _ => pack(&plan.to, &logical),
            }
        }
        _ => plan.evaluate(input),
    }
}

/// Slice's map: per axis, [`slice::Plan::source_coordinate`] times the input's stride.
fn slice_map<'a>(plan: &'a slice::Plan, input_shape: &[usize]) -> IndexMap<'a> {
    let strides = row_major_strides(input_shape);
    let axes = (plan.axes.iter().zip(strides).enumerate())
        .map(|(axis, (slice, stride))| MapAxis::Rule {
            len: slice.size,
            offset: Box::new(move |y| Some(plan.source_coordinate(axis, y)? * stride)),
        })
        .collect();
    IndexMap { base: 0, axes }
}

/// AsStrided's plan as the kernels' view.
fn strided_view(plan: &as_strided::Plan) -> StridedView {
    StridedView {
        shape: plan.shape.clone(),
        strides: plan.strides.clone(),
        base: plan.offset,
    }
}

/// A format's slots as a map: per logical axis, [`reformat::AxisSlots::offset`].
fn slot_map(image: &reformat::Image) -> IndexMap<'static> {
    let axes = (image.axis_slots().into_iter().zip(&image.logical))
        .map(|(slots, &len)| match slots {
            reformat::AxisSlots::Strided(stride) => MapAxis::Strided { len, stride },
            vectors => MapAxis::Rule {
                len,
                offset: Box::new(move |y| Some(vectors.offset(y))),
            },
        })
        .collect();
    IndexMap { base: 0, axes }
}

/// The reference's pack (`Image::pack`, within `opspec`) on the kernels: the scatter of the slots.
fn pack(image: &reformat::Image, logical: &Tensor) -> Tensor {
    Tensor {
        dtype: logical.dtype,
        shape: vec![image.len()],
        buffer: scatter_map(&logical.buffer, &slot_map(image), image.len(), 0),
    }
}

/// The reference's unpack (`Image::unpack`, within `opspec`) on the kernels: the gather of the
/// slots.
fn unpack(image: &reformat::Image, buffer: &Tensor) -> Tensor {
    Tensor {
        dtype: buffer.dtype,
        shape: image.logical.clone(),
        buffer: gather_map(&buffer.buffer, &slot_map(image), 0),
    }
}

/// The element count of a shape (saturating: a shape too large to hold is above any threshold).
fn volume(shape: &[usize]) -> usize {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .unwrap_or(usize::MAX)
}
