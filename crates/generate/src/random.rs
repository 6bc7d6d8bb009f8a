//! Random cases for differential fuzzing: valid and invalid invocations of every op, of ranks
//! 0 to 8, every dtype, random attributes and special values.
//!
//! About four cases in five are built to be valid (in-range permutations, reshapes that keep
//! the volume, slices inside the bounds for STRICT_BOUNDS, views inside the input, coefficient
//! counts that match the mode, buffers of the format's length); the rest break one rule on
//! purpose, so that rejections are compared too. Element counts stay small (a few hundred) so
//! that a run covers many shapes quickly. The same seed always gives the same cases
//! ([`crate::rng::Rng`]).

use super::values::{random_element, special_bits, Provenance};
use crate::rng::Rng;
use opspec::dtype::DType;
use opspec::ops::reformat::{self, Dla, Format, Image};
use opspec::ops::scale::{self, Coefficients};
use opspec::ops::slice::{self, Mode};
use opspec::ops::{as_strided, shuffle, Attrs, Invocation, Op};
use opspec::tensor::{Limits, Tensor};

/// The largest element count of a generated input.
pub const MAX_ELEMENTS: usize = 256;

/// Percent of cases that break a rule on purpose.
pub const INVALID_PERCENT: u64 = 20;

/// A random case of one of `ops`.
pub fn random_case(rng: &mut Rng, ops: &[Op]) -> Invocation {
    let op = *rng.pick(ops);
    let invalid = rng.chance(INVALID_PERCENT);
    (crate::GENERATORS.get(op).random_case)(rng, invalid)
}

/// A rank from `low..=high`, small ranks more likely.
fn rank(rng: &mut Rng, low: usize, high: usize) -> usize {
    let a = rng.range(low as i64, high as i64);
    let b = rng.range(low as i64, high as i64);
    a.min(b) as usize
}

/// A shape of `rank` dims in `1..=max_dim` (0 with `zero_percent`), at most `cap` elements.
fn shape(rng: &mut Rng, rank: usize, max_dim: usize, zero_percent: u64, cap: usize) -> Vec<usize> {
    let mut dims: Vec<usize> = (0..rank)
        .map(|_| {
            if rng.chance(zero_percent) {
                0
            } else {
                rng.range(1, max_dim as i64) as usize
            }
        })
        .collect();
    while dims.iter().product::<usize>() > cap {
        let big: Vec<usize> = (0..rank).filter(|&i| dims[i] > 1).collect();
        let i = *rng.pick(&big);
        dims[i] = dims[i].div_ceil(2);
    }
    dims
}

/// A dtype of `accepted` most of the time, any dtype otherwise.
fn dtype(rng: &mut Rng, accepted: &[DType]) -> DType {
    if rng.chance(92) {
        *rng.pick(accepted)
    } else {
        *rng.pick(&DType::ALL)
    }
}

/// Input values: provenance codes, random bit patterns, or special values mixed in.
pub fn values(rng: &mut Rng, dtype: DType, shape: Vec<usize>) -> Tensor {
    let n: usize = shape.iter().product();
    match rng.below(3) {
        0 => Provenance::tensor(dtype, shape),
        1 => Tensor::from_bits(
            dtype,
            shape,
            (0..n).map(|_| random_element(dtype, rng)).collect(),
        ),
        _ => {
            let specials = special_bits(dtype);
            let bits = (0..n)
                .map(|_| {
                    if rng.chance(50) {
                        *rng.pick(&specials)
                    } else {
                        random_element(dtype, rng)
                    }
                })
                .collect();
            Tensor::from_bits(dtype, shape, bits)
        }
    }
}

/// A 1-D int32 or int64 tensor (a shape-tensor input).
fn int_tensor(rng: &mut Rng, values: &[i64]) -> Tensor {
    let dtype = if rng.chance(50) {
        DType::Int32
    } else {
        DType::Int64
    };
    Tensor::from_bits(
        dtype,
        vec![values.len()],
        values
            .iter()
            .map(|&v| dtype.int_to_bits(v as i128))
            .collect(),
    )
}

fn perm(rng: &mut Rng, n: usize) -> Vec<i64> {
    rng.permutation(n).into_iter().map(|a| a as i64).collect()
}

/// Breaks a permutation: a repeat, an axis out of range, or the wrong length.
fn break_perm(rng: &mut Rng, perm: &mut Vec<i64>) {
    match rng.below(3) {
        0 if perm.len() >= 2 => perm[1] = perm[0],
        1 if !perm.is_empty() => {
            let i = rng.below(perm.len() as u64) as usize;
            perm[i] = if rng.chance(50) {
                perm.len() as i64
            } else {
                -1
            };
        }
        _ => {
            if perm.len() < 8 && rng.chance(50) {
                perm.push(perm.len() as i64);
            } else {
                perm.pop();
            }
        }
    }
}

pub(crate) fn shuffle_case(rng: &mut Rng, invalid: bool) -> Invocation {
    let rank_in = rank(rng, 0, 8);
    let input_shape = shape(rng, rank_in, 4, 4, MAX_ELEMENTS);
    let dtype = dtype(rng, &DType::ALL);
    let input = values(rng, dtype, input_shape.clone());
    let first = rng.chance(70).then(|| perm(rng, rank_in));
    let transposed: Vec<usize> = match &first {
        Some(p) => p.iter().map(|&a| input_shape[a as usize]).collect(),
        None => input_shape.clone(),
    };
    let zero_is_placeholder = match rng.below(5) {
        0 => Some(true),
        1 => Some(false),
        _ => None,
    };
    let mut reshape = rng.chance(70).then(|| {
        let mut dims = transposed.clone();
        for _ in 0..rng.below(4) {
            match rng.below(4) {
                0 if dims.len() >= 2 => {
                    let i = rng.below(dims.len() as u64 - 1) as usize;
                    let merged = dims[i] * dims[i + 1];
                    dims.splice(i..i + 2, [merged]);
                }
                1 => {
                    let splittable: Vec<usize> = (0..dims.len())
                        .filter(|&i| dims[i] >= 4 && dims[i] % 2 == 0)
                        .collect();
                    if !splittable.is_empty() && dims.len() < 8 {
                        let i = *rng.pick(&splittable);
                        let d = dims[i];
                        dims.splice(i..i + 1, [2, d / 2]);
                    }
                }
                2 if dims.len() < 8 => {
                    let i = rng.below(dims.len() as u64 + 1) as usize;
                    dims.insert(i, 1);
                }
                _ => {
                    if let Some(i) = dims.iter().position(|&d| d == 1) {
                        dims.remove(i);
                    }
                }
            }
        }
        let mut dims: Vec<i64> = dims.into_iter().map(|d| d as i64).collect();
        if zero_is_placeholder != Some(false) {
            for (i, dim) in dims.iter_mut().enumerate() {
                if i < transposed.len() && *dim == transposed[i] as i64 && rng.chance(20) {
                    *dim = 0;
                }
            }
        }
        if !dims.is_empty() && rng.chance(30) {
            let i = rng.below(dims.len() as u64) as usize;
            dims[i] = -1;
        }
        dims
    });
    let reshaped_rank = reshape.as_ref().map_or(transposed.len(), Vec::len);
    let mut second = rng.chance(50).then(|| perm(rng, reshaped_rank));
    let mut first = first;
    if invalid {
        match rng.below(4) {
            0 => break_perm(
                rng,
                first.get_or_insert_with(|| (0..rank_in as i64).collect()),
            ),
            1 => break_perm(
                rng,
                second.get_or_insert_with(|| (0..reshaped_rank as i64).collect()),
            ),
            2 => {
                let dims =
                    reshape.get_or_insert_with(|| transposed.iter().map(|&d| d as i64).collect());
                match rng.below(4) {
                    0 => dims.push(-2),
                    1 => dims.extend([-1, -1]),
                    2 => dims.push(2),
                    _ => dims.push(0),
                }
            }
            _ => {
                let dims = reshape.get_or_insert_with(Vec::new);
                dims.push(3);
            }
        }
    }
    let as_input = reshape.is_some() && rng.chance(15);
    let reshape_input = if as_input {
        let dims = reshape.take().expect("checked");
        Some(if invalid && rng.chance(30) {
            Tensor::from_bits(DType::Float32, vec![dims.len()], vec![0; dims.len()])
        } else {
            int_tensor(rng, &dims)
        })
    } else {
        None
    };
    Invocation {
        attrs: Attrs::Shuffle(shuffle::Attrs {
            first_transpose: first,
            reshape_dims: reshape,
            second_transpose: second,
            zero_is_placeholder,
        }),
        inputs: vec![Some(input), reshape_input],
    }
}

pub(crate) fn slice_case(rng: &mut Rng, invalid: bool) -> Invocation {
    let rank_in = rank(rng, 0, 8);
    let input_shape = shape(rng, rank_in, 5, 5, MAX_ELEMENTS);
    let mode = *rng.pick(&[
        Mode::StrictBounds,
        Mode::Wrap,
        Mode::Clamp,
        Mode::Fill,
        Mode::Reflect,
    ]);
    let dtype = dtype(rng, &DType::ALL);
    let input = values(rng, dtype, input_shape.clone());
    let axes: Option<Vec<i64>> = (rank_in > 0 && rng.chance(25)).then(|| {
        let mut chosen: Vec<usize> = rng.permutation(rank_in);
        chosen.truncate(rng.range(0, rank_in as i64) as usize);
        chosen
            .into_iter()
            .map(|a| {
                if rng.chance(30) {
                    a as i64 - rank_in as i64
                } else {
                    a as i64
                }
            })
            .collect()
    });
    let sliced: Vec<usize> = match &axes {
        None => (0..rank_in).collect(),
        Some(axes) => axes
            .iter()
            .map(|&a| {
                if a < 0 {
                    (a + rank_in as i64) as usize
                } else {
                    a as usize
                }
            })
            .collect(),
    };
    let (mut start, mut size, mut stride) = (vec![], vec![], vec![]);
    for &axis in &sliced {
        let d = input_shape[axis] as i64;
        let (mut a, mut n, mut s) = (
            rng.range(-2 * d - 2, 2 * d + 2),
            rng.range(0, (2 * d + 2).min(6)),
            rng.range(-3, 3),
        );
        if mode == Mode::StrictBounds && d > 0 && rng.chance(75) {
            s = *rng.pick(&[1, 1, 2, -1, -2]);
            n = rng.range(0, d);
            let reach = (n - 1).max(0) * s.abs();
            if reach > d - 1 {
                n = 1;
            }
            let reach = (n - 1).max(0) * s.abs();
            a = if s > 0 {
                rng.range(0, d - 1 - reach)
            } else {
                rng.range(reach, d - 1)
            };
        }
        start.push(a);
        size.push(n);
        stride.push(s);
    }
    // Keep the output small.
    let mut out: Vec<usize> = input_shape.clone();
    for (k, &axis) in sliced.iter().enumerate() {
        out[axis] = size[k] as usize;
    }
    while out.iter().product::<usize>() > 4 * MAX_ELEMENTS {
        let k = rng.below(sliced.len().max(1) as u64) as usize;
        if let Some(n) = size.get_mut(k) {
            *n /= 2;
            out[sliced[k]] = *n as usize;
        } else {
            break;
        }
    }
    let mut fill = (mode == Mode::Fill && rng.chance(50)).then(|| {
        let shape = if rng.chance(70) { vec![] } else { vec![1] };
        Tensor::from_bits(dtype, shape, vec![random_element(dtype, rng)])
    });
    let mut axes = axes;
    let omit_stride = stride.iter().all(|&s| s == 1) && rng.chance(50);
    if invalid {
        match rng.below(6) {
            0 => {
                start.push(0);
            }
            1 if !size.is_empty() => {
                let i = rng.below(size.len() as u64) as usize;
                size[i] = -1 - rng.below(3) as i64;
            }
            2 => {
                axes = Some(vec![rank_in as i64 + rng.below(2) as i64]);
            }
            3 if sliced.len() >= 2 || axes.is_some() => {
                let a = sliced.first().copied().unwrap_or(0) as i64;
                axes = Some(vec![a, a]);
                start = vec![0, 0];
                size = vec![1, 1];
                stride = vec![1, 1];
            }
            4 => {
                fill = Some(Tensor::from_bits(dtype, vec![2], vec![0, 0]));
            }
            _ => {
                fill = Some(Tensor::from_bits(dtype, vec![], vec![0]));
            }
        }
    }
    let mut inputs: Vec<Option<Tensor>> = vec![None; Op::Slice.inputs().len()];
    inputs[0] = Some(input);
    inputs[4] = fill;
    let mut as_input = |rng: &mut Rng, list: Vec<i64>, position: usize| -> Option<Vec<i64>> {
        if rng.chance(10) {
            inputs[position] = Some(if invalid && rng.chance(20) {
                Tensor::from_bits(DType::Float32, vec![list.len()], vec![0; list.len()])
            } else {
                int_tensor(rng, &list)
            });
            None
        } else {
            Some(list)
        }
    };
    let start = as_input(rng, start, 1);
    let size = as_input(rng, size, 2);
    let stride = if omit_stride {
        None
    } else {
        as_input(rng, stride, 3)
    };
    let axes = match axes {
        Some(axes) => as_input(rng, axes, 5),
        None => None,
    };
    Invocation {
        attrs: Attrs::Slice(slice::Attrs {
            start,
            size,
            stride,
            mode: if mode == Mode::StrictBounds && rng.chance(50) {
                None
            } else {
                Some(mode)
            },
            axes,
        }),
        inputs,
    }
}

pub(crate) fn as_strided_case(rng: &mut Rng, invalid: bool) -> Invocation {
    let rank_in = rank(rng, 0, 3);
    let mut input_shape = shape(rng, rank_in, 5, 0, 64);
    // ATB tensors have 1 to 8 dims: a rank-0 input stays only in the invalid cases.
    if input_shape.iter().product::<usize>() == 0 || (rank_in == 0 && !invalid) {
        input_shape = vec![1];
    }
    let n = input_shape.iter().product::<usize>() as i64;
    let dtype = dtype(rng, &as_strided::DTYPES);
    let input = values(rng, dtype, input_shape);
    let k = rank(rng, 1, 8);
    let mut size: Vec<i64> = shape(rng, k, 4, 0, MAX_ELEMENTS)
        .into_iter()
        .map(|d| d as i64)
        .collect();
    let mut stride: Vec<i64> = (0..k)
        .map(|_| if rng.chance(25) { 0 } else { rng.range(1, 4) })
        .collect();
    let mut offset = rng.range(0, n - 1);
    let reach = |size: &[i64], stride: &[i64], offset: i64| {
        offset
            + size
                .iter()
                .zip(stride)
                .map(|(n, s)| (n - 1) * s)
                .sum::<i64>()
    };
    if rng.chance(85) {
        // Walk back inside the input.
        while reach(&size, &stride, offset) >= n {
            if offset > 0 && rng.chance(50) {
                offset -= 1;
            } else if let Some(i) = (0..k).find(|&i| stride[i] > 0 && size[i] > 1) {
                if rng.chance(50) {
                    stride[i] -= 1;
                } else {
                    size[i] -= 1;
                }
            } else {
                offset = 0;
            }
        }
    }
    let mut offset = vec![offset];
    if invalid {
        match rng.below(6) {
            0 => size[0] = -(rng.below(2) as i64),
            1 => stride[0] = -1,
            2 => {
                stride.pop();
            }
            3 => offset = if rng.chance(50) { vec![] } else { vec![0, 0] },
            4 => offset = vec![-1],
            _ => {
                size = vec![1; 9];
                stride = vec![0; 9];
            }
        }
    }
    Invocation {
        attrs: Attrs::AsStrided(as_strided::Attrs {
            size,
            stride,
            offset,
        }),
        inputs: vec![Some(input)],
    }
}

/// A float32 coefficient: mostly simple values, sometimes a random one or a special value.
fn coefficient(rng: &mut Rng, simple: &[f32]) -> u32 {
    match rng.below(10) {
        0 => *rng.pick(&special_bits(DType::Float32)) as u32,
        1 | 2 => moderate(rng).to_bits(),
        _ => rng.pick(simple).to_bits(),
    }
}

/// A random float32 of magnitude 2^-8 .. 2^8.
fn moderate(rng: &mut Rng) -> f32 {
    let magnitude =
        (1.0 + rng.below(1 << 23) as f32 / (1 << 23) as f32) * 2f32.powi(rng.range(-8, 8) as i32);
    if rng.chance(50) {
        -magnitude
    } else {
        magnitude
    }
}

pub(crate) fn scale_case(rng: &mut Rng, invalid: bool) -> Invocation {
    let rank_in = rank(rng, 4, 8);
    let input_shape = shape(rng, rank_in, 3, 2, MAX_ELEMENTS);
    let dtype = dtype(rng, &scale::DTYPES);
    let n: usize = input_shape.iter().product();
    let input = if dtype.float_format().is_some() && rng.chance(60) {
        let format = dtype.float_format().expect("float");
        let specials = special_bits(dtype);
        let bits = (0..n)
            .map(|_| {
                if rng.chance(15) {
                    *rng.pick(&specials)
                } else {
                    // Rounded into the dtype; values past its range saturate to the largest.
                    format
                        .encode(moderate(rng) as f64)
                        .unwrap_or_else(|_| specials[10 % specials.len()])
                }
            })
            .collect();
        Tensor::from_bits(dtype, input_shape.clone(), bits)
    } else {
        values(rng, dtype, input_shape.clone())
    };
    let mode = *rng.pick(&[
        scale::Mode::Uniform,
        scale::Mode::Channel,
        scale::Mode::Elementwise,
    ]);
    let mut channel_axis = match rng.below(3) {
        0 => None,
        _ => {
            let spatial = if rng.chance(50) { 2 } else { 3 };
            Some(rank_in as i64 - 1 - spatial)
        }
    };
    let axis = channel_axis.unwrap_or(rank_in as i64 - 3).max(0) as usize;
    let count = match mode {
        scale::Mode::Uniform => 1,
        scale::Mode::Channel => input_shape[axis],
        scale::Mode::Elementwise => input_shape[axis..].iter().product(),
    };
    let list = |rng: &mut Rng, simple: &[f32]| {
        if rng.chance(40) {
            Coefficients::default()
        } else {
            Coefficients((0..count).map(|_| coefficient(rng, simple)).collect())
        }
    };
    let scale_list = list(rng, &[1.0, -1.0, 2.0, 0.5, 0.0, 3.0, -0.25, 1e-3, 100.0]);
    let mut shift = list(rng, &[0.0, 1.0, -1.5, 0.25, 10.0, -0.0]);
    let power = if rng.chance(60) {
        Coefficients::default()
    } else {
        list(rng, &[1.0, 1.0, 2.0, 3.0, -1.0, 0.5, 0.0, 1.5, -2.0])
    };
    let mut output_dtype = (dtype == DType::Float32 && rng.chance(20)).then_some(DType::Int8);
    let mut input = input;
    if invalid {
        match rng.below(5) {
            0 => shift = Coefficients(vec![0; count + 1]),
            1 => channel_axis = Some(if rng.chance(50) { -1 } else { rank_in as i64 }),
            2 => channel_axis = Some(0),
            3 => output_dtype = Some(*rng.pick(&[DType::Int32, DType::Bool, DType::Fp8])),
            _ => {
                let shape = input.shape[input.rank() - 3..].to_vec();
                input = values(rng, dtype, shape);
            }
        }
    }
    Invocation {
        attrs: Attrs::Scale(scale::Attrs {
            mode,
            scale: scale_list,
            shift,
            power,
            channel_axis,
            output_dtype,
        }),
        inputs: vec![Some(input)],
    }
}

/// A logical shape for `format`: its minimum rank or a little more, `C` around the vector
/// sizes (1, 3 or 4 for DLA_HWC4).
fn format_shape(rng: &mut Rng, format: Format) -> Vec<usize> {
    let min = format.min_rank().max(1);
    let rank_out = if matches!(format, Format::DlaLinear | Format::DlaHwc4) {
        4
    } else {
        rank(rng, min, (min + 2).min(6))
    };
    let mut dims = shape(rng, rank_out, 3, 3, 64);
    let from_end = match format {
        Format::Dhwc8 | Format::Cdhw32 | Format::Dhwc => 4,
        _ => 3,
    };
    let c = rank_out.checked_sub(from_end);
    if let Some(c) = c {
        dims[c] = if format == Format::DlaHwc4 {
            *rng.pick(&[1, 3, 4])
        } else {
            let near = *rng.pick(&[1i64, 2, 4, 8, 16, 32]);
            (near + rng.range(-1, 1)).max(1) as usize
        };
    }
    if format == Format::DlaLinear && rng.chance(30) {
        dims = vec![1, 1, 1, rng.range(30, 66) as usize];
    }
    // At most 128 logical elements: halve the other dims.
    while dims.iter().product::<usize>() > 128 {
        let Some(i) = (0..rank_out).find(|&i| Some(i) != c && dims[i] > 1) else {
            break;
        };
        dims[i] = dims[i].div_ceil(2);
    }
    dims
}

pub(crate) fn reformat_case(rng: &mut Rng, invalid: bool) -> Invocation {
    let packed: Vec<Format> = Format::ALL
        .into_iter()
        .filter(|&f| f != Format::Linear)
        .collect();
    let format = *rng.pick(&packed);
    let dtype = dtype(rng, format.dtypes());
    let mut logical = format_shape(rng, format);
    let dla = match rng.below(4) {
        0 => Some(Dla::Orin),
        1 => Some(Dla::Xavier),
        _ => None,
    };
    let image_len = |shape: &[usize], f: Format| {
        Image::new(f, dtype, shape, dla.unwrap_or_default(), Limits::DEFAULT)
            .map(|i| i.len())
            .unwrap_or_else(|_| shape.iter().product())
    };
    let direction = rng.below(10);
    let (from, to) = match direction {
        0..=4 => (Format::Linear, format),
        5..=7 => (format, Format::Linear),
        _ => {
            let others: Vec<Format> = packed
                .iter()
                .copied()
                .filter(|f| f.dtypes().contains(&dtype) && *f != format)
                .collect();
            (
                format,
                if others.is_empty() {
                    Format::Linear
                } else {
                    *rng.pick(&others)
                },
            )
        }
    };
    let mut shape_attr = (from != Format::Linear || rng.chance(30))
        .then(|| logical.iter().map(|&d| d as i64).collect::<Vec<_>>());
    let mut buffer_len = image_len(&logical, from);
    let mut two_d = false;
    if invalid {
        match rng.below(6) {
            0 => buffer_len += 1,
            1 if logical.len() > 1 => {
                logical.remove(0);
                if let Some(s) = &mut shape_attr {
                    s.remove(0);
                }
                buffer_len = image_len(&logical, from);
            }
            2 => shape_attr = None,
            3 => {
                if let Some(s) = shape_attr.get_or_insert_with(|| vec![1]).first_mut() {
                    *s = -1;
                }
            }
            4 => {
                if let Some(s) = &mut shape_attr {
                    if let Some(last) = s.last_mut() {
                        *last += 1;
                    }
                }
            }
            _ => two_d = true,
        }
    }
    let input = if from == Format::Linear {
        values(rng, dtype, logical)
    } else if two_d && buffer_len > 0 {
        values(rng, dtype, vec![1, buffer_len])
    } else {
        values(rng, dtype, vec![buffer_len])
    };
    Invocation {
        attrs: Attrs::Reformat(reformat::Attrs {
            from,
            to,
            shape: shape_attr,
            dla,
        }),
        inputs: vec![Some(input)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opspec::ops::evaluate;

    #[test]
    fn most_cases_are_valid_and_every_op_is_reached() {
        let mut rng = Rng::new(1);
        let mut valid = [0usize; 5];
        let mut total = [0usize; 5];
        for _ in 0..5000 {
            let case = random_case(&mut rng, &Op::ALL);
            let i = Op::ALL.iter().position(|&op| op == case.op()).unwrap();
            total[i] += 1;
            let input = case.inputs[0].as_ref().unwrap();
            assert!(
                input.len() <= 16 * MAX_ELEMENTS,
                "{:?} {:?}",
                case.attrs,
                input.shape
            );
            if evaluate(&case, Limits::DEFAULT).is_ok() {
                valid[i] += 1;
            }
        }
        for i in 0..5 {
            assert!(
                valid[i] * 2 > total[i],
                "{}: only {} of {} valid",
                Op::ALL[i],
                valid[i],
                total[i]
            );
            assert!(valid[i] < total[i], "{}: no invalid case", Op::ALL[i]);
        }
    }

    #[test]
    fn a_seed_gives_the_same_cases() {
        let a = random_case(&mut Rng::new(42), &Op::ALL);
        let b = random_case(&mut Rng::new(42), &Op::ALL);
        assert_eq!(a, b);
    }
}
