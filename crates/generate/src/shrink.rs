//! Shrinking a failing case: smaller rank, smaller shape, simpler attributes and values,
//! while it still fails.
//!
//! [`candidates`] lists variations of a case that are each simpler by [`cost`] (fewer
//! elements, then lower rank, then smaller attribute values, then fewer elements that are not
//! provenance codes, then fewer optional fields); [`shrink`] keeps the first that still fails
//! and starts again, until none does or the budget is spent. The cost decreases strictly, so
//! shrinking ends.

use std::ops::Range;

use super::values::Provenance;
use opspec::dtype::DType;
use opspec::ops::reformat::{Format, Image};
use opspec::ops::scale::{self, Coefficients};
use opspec::ops::slice;
use opspec::ops::{Attrs, Invocation};
use opspec::tensor::{row_major_strides, Limits, Tensor};

/// How complex a case is: (input elements, ranks and list lengths, attribute magnitude,
/// input elements that are not provenance codes, optional fields given). Lexicographic.
pub type Cost = (usize, usize, u64, usize, usize);

/// Shrinks `case` while `fails` holds, trying at most `budget` candidates. Returns the
/// smallest failing case found and the number of candidates tried.
pub fn shrink(
    case: Invocation,
    budget: usize,
    mut fails: impl FnMut(&Invocation) -> bool,
) -> (Invocation, usize) {
    let mut current = case;
    let mut tried = 0;
    'search: loop {
        let current_cost = cost(&current);
        for candidate in candidates(&current) {
            if cost(&candidate) >= current_cost {
                continue;
            }
            if tried >= budget {
                break 'search;
            }
            tried += 1;
            if fails(&candidate) {
                current = candidate;
                continue 'search;
            }
        }
        break;
    }
    (current, tried)
}

pub fn cost(case: &Invocation) -> Cost {
    let present: Vec<&Tensor> = case.inputs.iter().flatten().collect();
    let elements = present.iter().map(|t| t.len()).sum();
    let attrs = attrs_shrink(case).map_or(AttrsCost::default(), |s| (s.cost)(&case.attrs));
    let ranks = present.iter().map(|t| t.rank()).sum::<usize>() + attrs.ranks;
    let optional = present.len().saturating_sub(1) + attrs.optional;
    let non_simple = case.inputs[0].as_ref().map_or(0, |input| {
        let codes = Provenance::new(input.dtype, input.len());
        (0..input.len())
            .filter(|&i| input.bits(i) != codes.code(i))
            .count()
    });
    (elements, ranks, attrs.magnitude, non_simple, optional)
}

/// An op's own shrinking: the attributes' part of a [`Cost`], and simpler variations of its
/// attributes and optional inputs.
pub struct AttrsShrink {
    pub cost: fn(&Attrs) -> AttrsCost,
    pub candidates: fn(&Invocation) -> Vec<Invocation>,
}

fn attrs_shrink(case: &Invocation) -> Option<&'static AttrsShrink> {
    crate::GENERATORS.get(case.op()).shrink.as_ref()
}

/// An op's attributes' part of a [`Cost`]: their list lengths, magnitude and optional fields
/// given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttrsCost {
    pub ranks: usize,
    pub magnitude: u64,
    pub optional: usize,
}

fn abs_sum(list: &[i64]) -> u64 {
    list.iter().map(|v| v.unsigned_abs()).sum()
}

pub(crate) fn shuffle_cost(attrs: &Attrs) -> AttrsCost {
    let Attrs::Shuffle(a) = attrs else {
        unreachable!()
    };
    let mut cost = AttrsCost::default();
    for perm in [&a.first_transpose, &a.second_transpose]
        .into_iter()
        .flatten()
    {
        cost.ranks += perm.len();
        cost.magnitude += inversions(perm);
        cost.optional += 1;
    }
    if let Some(dims) = &a.reshape_dims {
        cost.ranks += dims.len();
        cost.magnitude += abs_sum(dims) + dims.iter().filter(|&&d| d <= 0).count() as u64;
        cost.optional += 1;
    }
    cost.optional += a.zero_is_placeholder.is_some() as usize;
    cost
}

pub(crate) fn slice_cost(attrs: &Attrs) -> AttrsCost {
    let Attrs::Slice(a) = attrs else {
        unreachable!()
    };
    let mut cost = AttrsCost::default();
    for list in [&a.start, &a.size, &a.axes].into_iter().flatten() {
        cost.ranks += list.len();
        cost.magnitude += abs_sum(list);
    }
    if let Some(stride) = &a.stride {
        cost.ranks += stride.len();
        cost.magnitude += stride.iter().map(|s| (s - 1).unsigned_abs()).sum::<u64>();
        cost.optional += 1;
    }
    cost.optional += a.axes.is_some() as usize;
    cost
}

pub(crate) fn as_strided_cost(attrs: &Attrs) -> AttrsCost {
    let Attrs::AsStrided(a) = attrs else {
        unreachable!()
    };
    AttrsCost {
        ranks: a.size.len() + a.stride.len() + a.offset.len(),
        magnitude: abs_sum(&a.size) + abs_sum(&a.stride) + abs_sum(&a.offset),
        optional: 0,
    }
}

pub(crate) fn scale_cost(attrs: &Attrs) -> AttrsCost {
    let Attrs::Scale(a) = attrs else {
        unreachable!()
    };
    let mut cost = AttrsCost::default();
    for (list, default) in [(&a.scale, 1.0f32), (&a.shift, 0.0), (&a.power, 1.0)] {
        cost.ranks += list.len();
        cost.magnitude += list
            .0
            .iter()
            .filter(|&&b| f32::from_bits(b) != default)
            .count() as u64;
    }
    cost.optional += a.channel_axis.is_some() as usize + a.output_dtype.is_some() as usize;
    cost
}

pub(crate) fn reformat_cost(attrs: &Attrs) -> AttrsCost {
    let Attrs::Reformat(a) = attrs else {
        unreachable!()
    };
    let mut cost = AttrsCost::default();
    if let Some(shape) = &a.shape {
        cost.ranks += shape.len();
        cost.magnitude += abs_sum(shape);
        cost.optional += 1;
    }
    cost.magnitude += (a.from != Format::Linear && a.to != Format::Linear) as u64;
    cost.optional += a.dla.is_some() as usize;
    cost
}

fn inversions(perm: &[i64]) -> u64 {
    let mut count = 0;
    for i in 0..perm.len() {
        for j in i + 1..perm.len() {
            count += (perm[i] > perm[j]) as u64;
        }
    }
    count
}

/// Simpler variations of `case`, structural ones first.
pub fn candidates(case: &Invocation) -> Vec<Invocation> {
    let mut out = attrs_shrink(case).map_or_else(Vec::new, |s| (s.candidates)(case));
    out.extend(value_candidates(case));
    out
}

fn with_input(case: &Invocation, position: usize, tensor: Option<Tensor>) -> Invocation {
    let mut next = case.clone();
    next.inputs[position] = tensor;
    next
}

fn with_attrs(case: &Invocation, attrs: Attrs) -> Invocation {
    Invocation {
        attrs,
        inputs: case.inputs.clone(),
    }
}

/// Input 0 with provenance values, then one element at a time.
fn value_candidates(case: &Invocation) -> Vec<Invocation> {
    let Some(input) = case.inputs[0].as_ref() else {
        return vec![];
    };
    let codes = Provenance::new(input.dtype, input.len());
    let differing: Vec<usize> = (0..input.len())
        .filter(|&i| input.bits(i) != codes.code(i))
        .collect();
    if differing.is_empty() {
        return vec![];
    }
    let mut out = vec![with_input(
        case,
        0,
        Some(Provenance::tensor(input.dtype, input.shape.clone())),
    )];
    if differing.len() > 1 {
        for &i in differing.iter().take(64) {
            let bits = (0..input.len())
                .map(|j| if j == i { codes.code(j) } else { input.bits(j) })
                .collect();
            out.push(with_input(
                case,
                0,
                Some(Tensor::from_bits(input.dtype, input.shape.clone(), bits)),
            ));
        }
    }
    out
}

/// The part of `tensor` with `axis` limited to `range`.
pub fn take(tensor: &Tensor, axis: usize, range: Range<usize>) -> Tensor {
    let mut shape = tensor.shape.clone();
    shape[axis] = range.len();
    let strides = row_major_strides(&tensor.shape);
    let n: usize = shape.iter().product();
    let bits = (0..n)
        .map(|flat| {
            let index = opspec_spec::unravel(&shape, flat);
            let source: usize = index
                .iter()
                .enumerate()
                .map(|(a, &i)| (if a == axis { i + range.start } else { i }) * strides[a])
                .sum();
            tensor.bits(source)
        })
        .collect();
    Tensor::from_bits(tensor.dtype, shape, bits)
}

/// `tensor` without `axis` (its first slice along it); `None` if that axis is empty.
pub fn drop_axis(tensor: &Tensor, axis: usize) -> Option<Tensor> {
    if tensor.shape[axis] == 0 {
        return None;
    }
    let mut taken = take(tensor, axis, 0..1);
    taken.shape.remove(axis);
    Some(taken)
}

fn remove_at(list: &Option<Vec<i64>>, k: usize) -> Option<Vec<i64>> {
    list.as_ref().map(|l| {
        let mut l = l.clone();
        if k < l.len() {
            l.remove(k);
        }
        l
    })
}

pub(crate) fn shuffle_candidates(case: &Invocation) -> Vec<Invocation> {
    let Attrs::Shuffle(a) = &case.attrs else {
        unreachable!()
    };
    let mut out = Vec::new();
    let input = case.inputs[0].as_ref().expect("input");
    // The reshape dims input as the attribute.
    if let Some(values) = case
        .inputs
        .get(1)
        .and_then(Option::as_ref)
        .and_then(Tensor::int_values)
    {
        if a.reshape_dims.is_none() {
            let mut attrs = a.clone();
            attrs.reshape_dims = Some(values);
            out.push(with_input(
                &with_attrs(case, Attrs::Shuffle(attrs)),
                1,
                None,
            ));
        }
    }
    // Drop an input axis of extent 1 (renumbering the first transpose).
    for axis in 0..input.rank() {
        if input.shape[axis] != 1 {
            continue;
        }
        let mut attrs = a.clone();
        attrs.first_transpose = a.first_transpose.as_ref().map(|perm| {
            perm.iter()
                .filter(|&&p| p != axis as i64)
                .map(|&p| if p > axis as i64 { p - 1 } else { p })
                .collect()
        });
        let mut next = with_attrs(case, Attrs::Shuffle(attrs));
        next.inputs[0] = drop_axis(input, axis);
        out.push(next);
    }
    // Smaller dims.
    for axis in 0..input.rank() {
        let d = input.shape[axis];
        if d > 1 {
            out.push(with_input(case, 0, Some(take(input, axis, 0..d - 1))));
            if d > 2 {
                out.push(with_input(case, 0, Some(take(input, axis, 0..d / 2))));
            }
        }
    }
    for field in 0..4 {
        let mut attrs = a.clone();
        let changed = match field {
            0 => attrs.first_transpose.take().is_some(),
            1 => attrs.second_transpose.take().is_some(),
            2 => attrs.reshape_dims.take().is_some(),
            _ => attrs.zero_is_placeholder.take().is_some(),
        };
        if changed {
            out.push(with_attrs(case, Attrs::Shuffle(attrs)));
        }
    }
    // Permutations closer to the identity.
    for which in 0..2 {
        let perm = if which == 0 {
            &a.first_transpose
        } else {
            &a.second_transpose
        };
        if let Some(perm) = perm {
            for i in 0..perm.len().saturating_sub(1) {
                if perm[i] > perm[i + 1] {
                    let mut swapped = perm.clone();
                    swapped.swap(i, i + 1);
                    let mut attrs = a.clone();
                    if which == 0 {
                        attrs.first_transpose = Some(swapped);
                    } else {
                        attrs.second_transpose = Some(swapped);
                    }
                    out.push(with_attrs(case, Attrs::Shuffle(attrs)));
                }
            }
        }
    }
    // Reshape dims resolved (0 and -1 replaced by what they stand for).
    if let (Some(dims), Ok(plan)) = (
        &a.reshape_dims,
        opspec::ops::shuffle::plan(
            a,
            &input.shape,
            case.inputs.get(1).and_then(Option::as_ref),
            Limits::DEFAULT,
        ),
    ) {
        if dims.iter().any(|&d| d <= 0) && !plan.reshaped.contains(&0) {
            let mut attrs = a.clone();
            attrs.reshape_dims = Some(plan.reshaped.iter().map(|&d| d as i64).collect());
            out.push(with_attrs(case, Attrs::Shuffle(attrs)));
        }
    }
    out
}

pub(crate) fn slice_candidates(case: &Invocation) -> Vec<Invocation> {
    let Attrs::Slice(a) = &case.attrs else {
        unreachable!()
    };
    let mut out = Vec::new();
    let input = case.inputs[0].as_ref().expect("input");
    // Inputs given as tensors become attributes.
    for (position, name) in [(1, "start"), (2, "size"), (3, "stride"), (5, "axes")] {
        if let Some(values) = case.inputs[position].as_ref().and_then(Tensor::int_values) {
            let mut attrs = a.clone();
            let slot = match name {
                "start" => &mut attrs.start,
                "size" => &mut attrs.size,
                "stride" => &mut attrs.stride,
                _ => &mut attrs.axes,
            };
            if slot.is_none() {
                *slot = Some(values);
                out.push(with_input(
                    &with_attrs(case, Attrs::Slice(attrs)),
                    position,
                    None,
                ));
            }
        }
    }
    if case.inputs[4].is_some() {
        out.push(with_input(case, 4, None));
    }
    let uses_inputs = [1, 2, 3, 5].iter().any(|&p| case.inputs[p].is_some());
    if !uses_inputs {
        let entries = a.start.as_ref().map_or(0, Vec::len);
        match &a.axes {
            None => {
                // Drop an axis of the input with its start/size/stride entries.
                for axis in 0..input.rank() {
                    if let Some(dropped) = drop_axis(input, axis) {
                        let attrs = slice::Attrs {
                            start: remove_at(&a.start, axis),
                            size: remove_at(&a.size, axis),
                            stride: remove_at(&a.stride, axis),
                            ..a.clone()
                        };
                        let mut next = with_attrs(case, Attrs::Slice(attrs));
                        next.inputs[0] = Some(dropped);
                        out.push(next);
                    }
                }
            }
            Some(axes) => {
                for k in 0..axes.len().min(entries) {
                    let attrs = slice::Attrs {
                        start: remove_at(&a.start, k),
                        size: remove_at(&a.size, k),
                        stride: remove_at(&a.stride, k),
                        axes: remove_at(&a.axes, k),
                        ..a.clone()
                    };
                    out.push(with_attrs(case, Attrs::Slice(attrs)));
                }
            }
        }
    }
    for axis in 0..input.rank() {
        let d = input.shape[axis];
        if d > 0 {
            out.push(with_input(case, 0, Some(take(input, axis, 0..d - 1))));
        }
    }
    // Smaller attribute values.
    let edits: [(&Option<Vec<i64>>, u8); 3] = [(&a.start, 0), (&a.size, 1), (&a.stride, 2)];
    for (list, which) in edits {
        let Some(list) = list else { continue };
        for k in 0..list.len() {
            let v = list[k];
            let target = if which == 2 { 1 } else { 0 };
            let mut options = vec![];
            if v != target {
                options.push(target);
                options.push(v - (v - target).signum());
            }
            for option in options {
                let mut edited = list.clone();
                edited[k] = option;
                let mut attrs = a.clone();
                match which {
                    0 => attrs.start = Some(edited),
                    1 => attrs.size = Some(edited),
                    _ => attrs.stride = Some(edited),
                }
                out.push(with_attrs(case, Attrs::Slice(attrs)));
            }
        }
    }
    if a.stride.as_ref().is_some_and(|s| s.iter().all(|&s| s == 1)) {
        let mut attrs = a.clone();
        attrs.stride = None;
        out.push(with_attrs(case, Attrs::Slice(attrs)));
    }
    if let Some(fill) = case.inputs[4].as_ref() {
        if fill.len() == 1 && fill.bits(0) != 0 {
            out.push(with_input(
                case,
                4,
                Some(Tensor::from_bits(fill.dtype, fill.shape.clone(), vec![0])),
            ));
        }
    }
    out
}

pub(crate) fn as_strided_candidates(case: &Invocation) -> Vec<Invocation> {
    let Attrs::AsStrided(a) = &case.attrs else {
        unreachable!()
    };
    let mut out = Vec::new();
    let input = case.inputs[0].as_ref().expect("input");
    if input.rank() != 1 {
        let mut flat = input.clone();
        flat.shape = vec![input.len()];
        out.push(with_input(case, 0, Some(flat)));
    } else if input.len() > 1 {
        out.push(with_input(
            case,
            0,
            Some(take(input, 0, 0..input.len() - 1)),
        ));
    }
    if a.size.len() > 1 && a.size.len() == a.stride.len() {
        for k in 0..a.size.len() {
            let mut attrs = a.clone();
            attrs.size.remove(k);
            attrs.stride.remove(k);
            out.push(with_attrs(case, Attrs::AsStrided(attrs)));
        }
    }
    for which in 0..3 {
        let list = match which {
            0 => &a.size,
            1 => &a.stride,
            _ => &a.offset,
        };
        let floor = if which == 0 { 1 } else { 0 };
        for k in 0..list.len() {
            if list[k] > floor {
                for value in [floor, list[k] - 1] {
                    let mut attrs = a.clone();
                    let target = match which {
                        0 => &mut attrs.size,
                        1 => &mut attrs.stride,
                        _ => &mut attrs.offset,
                    };
                    target[k] = value;
                    out.push(with_attrs(case, Attrs::AsStrided(attrs)));
                }
            }
        }
    }
    out
}

/// Coefficient lists after the input's `axis` shrinks from `d` to `d - 1`.
fn shrink_coefficients(
    list: &Coefficients,
    mode: scale::Mode,
    channel_axis: usize,
    shape: &[usize],
    axis: usize,
) -> Coefficients {
    let count = match mode {
        scale::Mode::Uniform => 1,
        scale::Mode::Channel => shape[channel_axis],
        scale::Mode::Elementwise => shape[channel_axis..].iter().product(),
    };
    if list.len() != count || axis < channel_axis {
        return list.clone();
    }
    match mode {
        scale::Mode::Uniform => list.clone(),
        scale::Mode::Channel if axis == channel_axis => {
            Coefficients(list.0[..count.saturating_sub(1)].to_vec())
        }
        scale::Mode::Channel => list.clone(),
        scale::Mode::Elementwise => {
            let tensor = Tensor::from_bits(
                DType::Float32,
                shape[channel_axis..].to_vec(),
                list.0.iter().map(|&b| b as u64).collect(),
            );
            let d = shape[axis];
            let taken = take(&tensor, axis - channel_axis, 0..d - 1);
            Coefficients((0..taken.len()).map(|i| taken.bits(i) as u32).collect())
        }
    }
}

pub(crate) fn scale_candidates(case: &Invocation) -> Vec<Invocation> {
    let Attrs::Scale(a) = &case.attrs else {
        unreachable!()
    };
    let mut out = Vec::new();
    let input = case.inputs[0].as_ref().expect("input");
    let rank = input.rank();
    let axis = a
        .channel_axis
        .map_or(rank.saturating_sub(3), |c| c.max(0) as usize);
    // Drop a leading axis of extent 1.
    for k in 0..axis.min(rank) {
        if input.shape[k] == 1 && rank > 4 {
            let mut attrs = a.clone();
            attrs.channel_axis = a.channel_axis.map(|c| c - 1);
            let mut next = with_attrs(case, Attrs::Scale(attrs));
            next.inputs[0] = drop_axis(input, k);
            out.push(next);
        }
    }
    if axis < rank {
        for k in 0..rank {
            let d = input.shape[k];
            if d > 1 {
                let mut attrs = a.clone();
                for list in [&mut attrs.scale, &mut attrs.shift, &mut attrs.power] {
                    *list = shrink_coefficients(list, a.mode, axis, &input.shape, k);
                }
                let mut next = with_attrs(case, Attrs::Scale(attrs));
                next.inputs[0] = Some(take(input, k, 0..d - 1));
                out.push(next);
            }
        }
    }
    for (which, default) in [(0, 1.0f32), (1, 0.0), (2, 1.0)] {
        let list = match which {
            0 => &a.scale,
            1 => &a.shift,
            _ => &a.power,
        };
        if list.is_empty() {
            continue;
        }
        let mut emptied = a.clone();
        let mut defaulted = a.clone();
        let (slot_e, slot_d) = match which {
            0 => (&mut emptied.scale, &mut defaulted.scale),
            1 => (&mut emptied.shift, &mut defaulted.shift),
            _ => (&mut emptied.power, &mut defaulted.power),
        };
        *slot_e = Coefficients::default();
        out.push(with_attrs(case, Attrs::Scale(emptied)));
        for k in 0..list.len().min(32) {
            if f32::from_bits(list.0[k]) != default {
                let mut one = a.clone();
                let slot = match which {
                    0 => &mut one.scale,
                    1 => &mut one.shift,
                    _ => &mut one.power,
                };
                slot.0[k] = default.to_bits();
                out.push(with_attrs(case, Attrs::Scale(one)));
            }
        }
        *slot_d = Coefficients(vec![default.to_bits(); list.len()]);
        out.push(with_attrs(case, Attrs::Scale(defaulted)));
    }
    if a.channel_axis == Some(rank as i64 - 3) {
        let mut attrs = a.clone();
        attrs.channel_axis = None;
        out.push(with_attrs(case, Attrs::Scale(attrs)));
    }
    if a.output_dtype.is_some() {
        let mut attrs = a.clone();
        attrs.output_dtype = None;
        out.push(with_attrs(case, Attrs::Scale(attrs)));
    }
    out
}

pub(crate) fn reformat_candidates(case: &Invocation) -> Vec<Invocation> {
    let Attrs::Reformat(a) = &case.attrs else {
        unreachable!()
    };
    let mut out = Vec::new();
    let input = case.inputs[0].as_ref().expect("input");
    if a.from == Format::Linear {
        for k in 0..input.rank() {
            let d = input.shape[k];
            if d > 1 {
                let mut attrs = a.clone();
                if let Some(shape) = &mut attrs.shape {
                    if k < shape.len() {
                        shape[k] -= 1;
                    }
                }
                let mut next = with_attrs(case, Attrs::Reformat(attrs));
                next.inputs[0] = Some(take(input, k, 0..d - 1));
                out.push(next);
            }
        }
        if a.shape.is_some() {
            let mut attrs = a.clone();
            attrs.shape = None;
            out.push(with_attrs(case, Attrs::Reformat(attrs)));
        }
    } else if let Some(shape) = &a.shape {
        for k in 0..shape.len() {
            if shape[k] > 1 {
                let mut smaller = shape.clone();
                smaller[k] -= 1;
                let logical: Vec<usize> = smaller.iter().map(|&d| d.max(0) as usize).collect();
                if let Ok(image) = Image::new(
                    a.from,
                    input.dtype,
                    &logical,
                    a.dla.unwrap_or_default(),
                    Limits::DEFAULT,
                ) {
                    let mut attrs = a.clone();
                    attrs.shape = Some(smaller);
                    let mut next = with_attrs(case, Attrs::Reformat(attrs));
                    next.inputs[0] = Some(Provenance::tensor(input.dtype, vec![image.len()]));
                    out.push(next);
                }
            }
        }
        if a.to != Format::Linear {
            let mut attrs = a.clone();
            attrs.to = Format::Linear;
            out.push(with_attrs(case, Attrs::Reformat(attrs)));
        }
    }
    if a.dla.is_some() {
        let mut attrs = a.clone();
        attrs.dla = None;
        out.push(with_attrs(case, Attrs::Reformat(attrs)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use opspec::ops::evaluate;
    use opspec::ops::slice::Mode;

    #[test]
    fn take_and_drop_axis() {
        let t = Provenance::tensor(DType::Int32, vec![2, 3]);
        let taken = take(&t, 1, 1..3);
        assert_eq!(taken.shape, vec![2, 2]);
        assert_eq!(
            (0..4).map(|i| taken.bits(i)).collect::<Vec<_>>(),
            vec![2, 3, 5, 6]
        );
        let dropped = drop_axis(&t, 0).unwrap();
        assert_eq!(dropped.shape, vec![3]);
        assert_eq!(dropped.bits(2), 3);
    }

    #[test]
    fn a_wrap_case_shrinks_to_one_element_past_the_end() {
        // "Fails" when some output element was read from past the input's end (x >= d).
        let mut inputs = vec![None; 6];
        inputs[0] = Some(Tensor::from_bits(
            DType::Float32,
            vec![3, 4],
            (0..12).map(|v| (v as f32 * 1.5).to_bits() as u64).collect(),
        ));
        let case = Invocation {
            attrs: Attrs::Slice(slice::Attrs {
                start: Some(vec![-1, 2]),
                size: Some(vec![3, 5]),
                stride: Some(vec![2, 1]),
                mode: Some(Mode::Wrap),
                axes: None,
            }),
            inputs,
        };
        let fails = |c: &Invocation| {
            let Attrs::Slice(a) = &c.attrs else {
                return false;
            };
            let input = c.inputs[0].as_ref().unwrap();
            evaluate(c, Limits::DEFAULT).is_ok()
                && (0..input.rank()).any(|k| {
                    let (start, size, stride) = (
                        a.start.as_ref().unwrap()[k],
                        a.size.as_ref().unwrap()[k],
                        a.stride.as_ref().map_or(1, |s| s[k]),
                    );
                    (0..size).any(|y| start + y * stride >= input.shape[k] as i64)
                })
        };
        assert!(fails(&case));
        let (small, tried) = shrink(case, 10_000, fails);
        assert!(tried > 0);
        let Attrs::Slice(a) = &small.attrs else {
            unreachable!()
        };
        assert_eq!(small.inputs[0].as_ref().unwrap().shape, vec![1]);
        // start 1, size 1 or start 0, size 2: one coordinate past an extent of 1.
        let (start, size) = (a.start.as_ref().unwrap()[0], a.size.as_ref().unwrap()[0]);
        assert_eq!(start + size, 2, "{a:?}");
        assert_eq!(a.stride, None);
        assert!(Provenance::holds(small.inputs[0].as_ref().unwrap()));
    }
}
