//! [`LayoutEngine`]: a small engine of Shuffle and Slice written in Rust, the way an
//! implementation under test would be. It reads each input's elements as bit patterns
//! ([`Tensor::bits`]), moves them by index arithmetic of its own (docs/semantics.md §1 and §2;
//! nothing of the reference's evaluation), builds its outputs with [`Tensor::from_bits`], and
//! rejects what a rule forbids with that rule's error kind. A fill value of another dtype than
//! the input's (a conversion it does not implement) is answered `unsupported`.

use opspec::ops::{shuffle, slice, Attrs, Invocation};
use opspec::tensor::Limits;
use opspec::{DType, ErrorKind, Tensor};
use opspec_runner::{Declaration, InProcessBackend, Refusal};

/// Shuffle and Slice, every dtype and mode.
#[derive(Clone, Copy, Debug, Default)]
pub struct LayoutEngine;

impl InProcessBackend for LayoutEngine {
    fn name(&self) -> String {
        "example-layout-engine".into()
    }

    fn declaration(&self) -> Option<Declaration> {
        Some(Declaration {
            ops: vec!["shuffle".into(), "slice".into()],
            ..Declaration::default()
        })
    }

    fn evaluate(&self, invocation: &Invocation, limits: Limits) -> Result<Vec<Tensor>, Refusal> {
        let input = invocation.inputs[0]
            .as_ref()
            .ok_or_else(|| reject(ErrorKind::InvalidInput, "the input is required"))?;
        let output = match &invocation.attrs {
            Attrs::Shuffle(attrs) => run_shuffle(attrs, input, &invocation.inputs, limits)?,
            Attrs::Slice(attrs) => run_slice(attrs, input, &invocation.inputs, limits)?,
            _ => {
                return Err(Refusal::Unsupported(format!(
                    "{} is not implemented",
                    invocation.op()
                )))
            }
        };
        Ok(vec![output])
    }
}

fn reject(kind: ErrorKind, message: impl Into<String>) -> Refusal {
    Refusal::Rejected {
        kind: Some(kind),
        message: message.into(),
    }
}

/// The element count of `shape`, within the run's budget (`too_large` past it).
fn volume(shape: &[usize], limits: Limits) -> Result<usize, Refusal> {
    let mut n: u64 = 1;
    for &d in shape {
        n = n
            .checked_mul(d as u64)
            .ok_or_else(|| reject(ErrorKind::TooLarge, format!("{shape:?} overflows")))?;
    }
    if n > limits.max_elements {
        return Err(reject(
            ErrorKind::TooLarge,
            format!("{shape:?} has {n} elements, over the budget"),
        ));
    }
    Ok(n as usize)
}

fn check_rank(rank: usize, what: &str) -> Result<(), Refusal> {
    match rank {
        0..=8 => Ok(()),
        _ => Err(reject(
            ErrorKind::InvalidRank,
            format!("{what} has {rank} dims, at most 8"),
        )),
    }
}

/// Row-major strides of `shape`.
fn strides(shape: &[usize]) -> Vec<usize> {
    let mut out = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        out[axis] = out[axis + 1] * shape[axis + 1];
    }
    out
}

/// `out[y] = bits[Σ offsets[axis][y_axis]]` in row-major order of the output; an offset `None`
/// (out of bounds in FILL) gives `fill`.
fn gather(input: &Tensor, offsets: &[Vec<Option<usize>>], fill: u64) -> Vec<u64> {
    let shape: Vec<usize> = offsets.iter().map(Vec::len).collect();
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0; shape.len()];
    for _ in 0..n {
        let mut at = Some(0);
        for (axis, &i) in index.iter().enumerate() {
            at = at.zip(offsets[axis][i]).map(|(a, b)| a + b);
        }
        out.push(at.map_or(fill, |at| input.bits(at)));
        // The next index, last axis fastest.
        for axis in (0..shape.len()).rev() {
            index[axis] += 1;
            if index[axis] < shape[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

/// `perm` checked as a permutation of `0..rank` (identity when absent).
fn permutation(perm: Option<&Vec<i64>>, rank: usize, name: &str) -> Result<Vec<usize>, Refusal> {
    let Some(perm) = perm else {
        return Ok((0..rank).collect());
    };
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &axis in perm {
        match usize::try_from(axis).ok().filter(|&a| a < rank) {
            Some(a) if !seen[a] => {
                seen[a] = true;
                out.push(a);
            }
            _ => break,
        }
    }
    if out.len() != rank || perm.len() != rank {
        return Err(reject(
            ErrorKind::InvalidPermutation,
            format!("{name} {perm:?} is not a permutation of 0..{rank}"),
        ));
    }
    Ok(out)
}

/// The elements of `bits` (of `shape`) transposed by `perm`.
fn transpose(input: &Tensor, shape: &[usize], perm: &[usize]) -> (Vec<usize>, Tensor) {
    let step = strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    let offsets: Vec<Vec<Option<usize>>> = perm
        .iter()
        .map(|&a| (0..shape[a]).map(|i| Some(i * step[a])).collect())
        .collect();
    let bits = if out_shape.iter().product::<usize>() == 0 {
        Vec::new()
    } else {
        gather(input, &offsets, 0)
    };
    let tensor = Tensor::from_bits(input.dtype, out_shape.clone(), bits);
    (out_shape, tensor)
}

/// A list given as an attribute or as a 1-D int32/int64 input.
fn int_list(
    attr: Option<&Vec<i64>>,
    input: Option<&Tensor>,
    name: &str,
) -> Result<Option<Vec<i64>>, Refusal> {
    let Some(tensor) = input else {
        return Ok(attr.cloned());
    };
    let width = match tensor.dtype {
        DType::Int32 => 32,
        DType::Int64 => 64,
        _ => 0,
    };
    if width == 0 || tensor.shape.len() != 1 {
        return Err(reject(
            ErrorKind::InvalidInput,
            format!("{name} must be a 1-D int32 or int64 tensor"),
        ));
    }
    let values = (0..tensor.len()).map(|i| {
        let bits = tensor.bits(i);
        // Sign-extend from the dtype's width.
        ((bits << (64 - width)) as i64) >> (64 - width)
    });
    Ok(Some(values.collect()))
}

/// docs/semantics.md §1: first transpose, reshape (0 copies a dim, -1 is solved), second
/// transpose.
fn run_shuffle(
    attrs: &shuffle::Attrs,
    input: &Tensor,
    inputs: &[Option<Tensor>],
    limits: Limits,
) -> Result<Tensor, Refusal> {
    check_rank(input.shape.len(), "the input")?;
    let first = permutation(
        attrs.first_transpose.as_ref(),
        input.shape.len(),
        "first_transpose",
    )?;
    let (mut shape, mut tensor) = transpose(input, &input.shape, &first);
    let dims = int_list(
        attrs.reshape_dims.as_ref(),
        inputs.get(1).and_then(Option::as_ref),
        "reshape_dims",
    )?;
    if let Some(dims) = dims {
        check_rank(dims.len(), "the reshape dims")?;
        if dims.iter().any(|&d| d < -1) || dims.iter().filter(|&&d| d == -1).count() > 1 {
            return Err(reject(
                ErrorKind::InvalidReshape,
                format!("reshape dims {dims:?}"),
            ));
        }
        let placeholder = attrs.zero_is_placeholder.unwrap_or(true);
        let mut resolved = Vec::with_capacity(dims.len());
        for (i, &d) in dims.iter().enumerate() {
            resolved.push(match d {
                0 if placeholder => *shape.get(i).ok_or_else(|| {
                    reject(
                        ErrorKind::InvalidReshape,
                        format!("a 0 in {dims:?} past the input's rank {}", shape.len()),
                    )
                })? as i64,
                d => d,
            });
        }
        let n = volume(&shape, limits)? as i64;
        let known: i64 = resolved.iter().filter(|&&d| d != -1).product();
        if let Some(wildcard) = resolved.iter().position(|&d| d == -1) {
            if known == 0 {
                return Err(reject(
                    ErrorKind::IndeterminateWildcard,
                    format!("-1 in {dims:?} beside a 0"),
                ));
            }
            if n % known != 0 {
                return Err(reject(
                    ErrorKind::VolumeMismatch,
                    format!("-1 in {dims:?} does not divide {n}"),
                ));
            }
            resolved[wildcard] = n / known;
        } else if known != n {
            return Err(reject(
                ErrorKind::VolumeMismatch,
                format!("{dims:?} does not hold {n} elements"),
            ));
        }
        // A reshape keeps the row-major order of the elements: only the shape changes.
        shape = resolved.iter().map(|&d| d as usize).collect();
        volume(&shape, limits)?;
        let bits = (0..tensor.len()).map(|i| tensor.bits(i)).collect();
        tensor = Tensor::from_bits(tensor.dtype, shape.clone(), bits);
    }
    let second = permutation(
        attrs.second_transpose.as_ref(),
        shape.len(),
        "second_transpose",
    )?;
    Ok(transpose(&tensor, &shape, &second).1)
}

/// The input coordinate the mode reads for coordinate `x` on an axis of `d` elements; `None`
/// for FILL's fill value (docs/semantics.md §2.2).
fn source(mode: slice::Mode, x: i128, d: i128) -> Result<Option<usize>, Refusal> {
    let inside = (0..d).contains(&x);
    let z = match mode {
        slice::Mode::Wrap => x.rem_euclid(d),
        slice::Mode::Clamp => x.clamp(0, d - 1),
        slice::Mode::Reflect if d == 1 => 0,
        slice::Mode::Reflect => {
            let c = x.abs() % (2 * d - 2);
            if c >= d {
                2 * d - 2 - c
            } else {
                c
            }
        }
        _ if inside => x,
        slice::Mode::Fill => return Ok(None),
        _ => {
            return Err(reject(
                ErrorKind::OutOfBounds,
                format!("coordinate {x} outside [0, {d})"),
            ))
        }
    };
    Ok(Some(z as usize))
}

/// docs/semantics.md §2: x = y·stride + start on each axis, then the mode's rule.
fn run_slice(
    attrs: &slice::Attrs,
    input: &Tensor,
    inputs: &[Option<Tensor>],
    limits: Limits,
) -> Result<Tensor, Refusal> {
    let input_at = |i: usize| inputs.get(i).and_then(Option::as_ref);
    let rank = input.shape.len();
    check_rank(rank, "the input")?;
    let mode = attrs.mode.unwrap_or_default();
    let narrow = matches!(
        mode,
        slice::Mode::Clamp | slice::Mode::Fill | slice::Mode::Reflect
    );
    if input.dtype == DType::UInt8
        || narrow && matches!(input.dtype, DType::Int64 | DType::BFloat16)
    {
        return Err(reject(
            ErrorKind::UnsupportedDtype,
            format!("slice in {mode:?} does not take {}", input.dtype.name()),
        ));
    }
    let mut fill = 0;
    if let Some(value) = input_at(4) {
        if mode != slice::Mode::Fill {
            return Err(reject(
                ErrorKind::FillNotAllowed,
                "a fill value outside FILL",
            ));
        }
        if !matches!(value.shape.as_slice(), [] | [1]) {
            return Err(reject(
                ErrorKind::InvalidFill,
                format!("the fill value has shape {:?}", value.shape),
            ));
        }
        let convertible = [DType::Float32, DType::Float16, DType::Int8, DType::Fp8];
        if value.dtype != input.dtype {
            if !convertible.contains(&value.dtype) || !convertible.contains(&input.dtype) {
                return Err(reject(
                    ErrorKind::InvalidFill,
                    format!(
                        "a {} fill cannot become {}",
                        value.dtype.name(),
                        input.dtype.name()
                    ),
                ));
            }
            return Err(Refusal::Unsupported(
                "a fill value of another dtype (conversion not implemented)".into(),
            ));
        }
        fill = value.bits(0);
    }
    let start = int_list(attrs.start.as_ref(), input_at(1), "start")?;
    let size = int_list(attrs.size.as_ref(), input_at(2), "size")?;
    let stride = int_list(attrs.stride.as_ref(), input_at(3), "stride")?;
    let axes = int_list(attrs.axes.as_ref(), input_at(5), "axes")?;
    let (Some(start), Some(size)) = (start, size) else {
        return Err(reject(
            ErrorKind::InvalidInput,
            "start and size are required",
        ));
    };
    let axes: Vec<usize> = match axes {
        None => (0..rank).collect(),
        Some(axes) => {
            let mut out = Vec::new();
            for &a in &axes {
                let r = rank as i64;
                if !(-r..r).contains(&a) {
                    return Err(reject(
                        ErrorKind::InvalidAxes,
                        format!("axes {axes:?} outside [-{r}, {r})"),
                    ));
                }
                let a = a.rem_euclid(r) as usize;
                if out.contains(&a) {
                    return Err(reject(
                        ErrorKind::InvalidAxes,
                        format!("axes {axes:?} repeat an axis"),
                    ));
                }
                out.push(a);
            }
            out
        }
    };
    let stride = stride.unwrap_or_else(|| vec![1; axes.len()]);
    if start.len() != axes.len() || size.len() != axes.len() || stride.len() != axes.len() {
        return Err(reject(
            ErrorKind::RankMismatch,
            format!(
                "start {start:?}, size {size:?}, stride {stride:?} for {} axes",
                axes.len()
            ),
        ));
    }
    if size.iter().any(|&s| s < 0) {
        return Err(reject(
            ErrorKind::InvalidSize,
            format!("size {size:?} has a negative entry"),
        ));
    }
    // Axes not listed are copied whole.
    let mut per_axis: Vec<(i128, usize, i128)> = input.shape.iter().map(|&d| (0, d, 1)).collect();
    for (k, &a) in axes.iter().enumerate() {
        per_axis[a] = (start[k] as i128, size[k] as usize, stride[k] as i128);
    }
    let out_shape: Vec<usize> = per_axis.iter().map(|&(_, n, _)| n).collect();
    let n = volume(&out_shape, limits)?;
    // Each axis on its own: one of size 0 reads nothing, and hides no error of another.
    for (axis, &(s0, n, st)) in per_axis.iter().enumerate() {
        let d = input.shape[axis] as i128;
        if n == 0 {
            continue;
        }
        if d == 0
            && matches!(
                mode,
                slice::Mode::Wrap | slice::Mode::Clamp | slice::Mode::Reflect
            )
        {
            return Err(reject(
                ErrorKind::EmptyDimension,
                format!("{mode:?} on axis {axis} of extent 0"),
            ));
        }
        if mode == slice::Mode::StrictBounds {
            // x is monotonic in y: both ends decide.
            source(mode, s0, d)?;
            source(mode, s0 + (n as i128 - 1) * st, d)?;
        }
    }
    if n == 0 {
        return Ok(Tensor::from_bits(input.dtype, out_shape, Vec::new()));
    }
    let step = strides(&input.shape);
    let mut offsets = Vec::with_capacity(rank);
    for (axis, &(s0, n, st)) in per_axis.iter().enumerate() {
        let d = input.shape[axis] as i128;
        let mut axis_offsets = Vec::with_capacity(n);
        for y in 0..n as i128 {
            let z = if d == 0 {
                None // FILL on an empty axis: every coordinate is out of bounds
            } else {
                source(mode, y * st + s0, d)?
            };
            axis_offsets.push(z.map(|z| z * step[axis]));
        }
        offsets.push(axis_offsets);
    }
    Ok(Tensor::from_bits(
        input.dtype,
        out_shape,
        gather(input, &offsets, fill),
    ))
}
