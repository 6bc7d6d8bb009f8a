//! Slice — TensorRT `ISliceLayer` (seed 004; `docs/semantics.md` §2).
//!
//! For output coordinate `y` on an axis of input extent `d`: `x = y·stride + start` (§2.1), then
//!
//! | mode | source coordinate `z` |
//! |---|---|
//! | `strict_bounds` | `x` if `0 ≤ x < d`, else error `out_of_bounds` |
//! | `wrap` | `mod(x, d)`, the non-negative modulo |
//! | `clamp` | `0` if `x < 0`, `d-1` if `x ≥ d`, else `x` |
//! | `fill` | `x` if `0 ≤ x < d`, else the whole element is the fill value (default 0) |
//! | `reflect` | `c = mod(|x|, 2d-2)`; `2d-2-c` if `c ≥ d`, else `c`; `d = 1` → 0 (§2.2) |
//!
//! Negative start is an ordinary coordinate below 0, not counted from the end. An axis of
//! output size 0 uses no coordinate and so cannot be out of bounds (§2.2, §2.7). `d = 0` with a
//! non-zero size is `empty_dimension` for clamp and reflect (NvInfer.h) and for wrap
//! (\[inferred\]); fill gives all fill values (\[inferred\]). Axes not listed in `axes` are copied
//! whole (§2.4). clamp, fill and reflect reject int64 and bfloat16 (§2.6). An input of more
//! than 8 dims is `invalid_rank` (TensorRT's `Dims64::MAX_DIMS`, §6.1).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::error::{fail, ErrorKind, OpError};
use crate::tensor::{row_major, row_major_strides, Limits, Tensor};

/// Input positions (TensorRT input indices 0-5).
pub(crate) const INPUTS: [&str; 6] = ["input", "start", "size", "stride", "fill", "axes"];

/// `SampleMode`: what a coordinate `x` outside `[0, d)` reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// An error (the default).
    #[default]
    StrictBounds,
    /// `in[mod(x, d)]`.
    Wrap,
    /// `in[clamp(x, 0, d-1)]`.
    Clamp,
    /// The fill value (input `fill`, default 0).
    Fill,
    /// The mirror image about the edge elements: `c = mod(|x|, 2d-2)`, `2d-2-c` if `c >= d`.
    Reflect,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::StrictBounds,
        Mode::Wrap,
        Mode::Clamp,
        Mode::Fill,
        Mode::Reflect,
    ];

    /// Whether the mode takes `dtype`: a dtype Slice [`lists`], and for clamp, fill and
    /// reflect neither int64 nor bfloat16 (§2.6).
    pub fn accepts(self, dtype: DType) -> bool {
        lists(dtype)
            && !(matches!(self, Mode::Clamp | Mode::Fill | Mode::Reflect)
                && matches!(dtype, DType::Int64 | DType::BFloat16))
    }
}

/// Whether the latest operator page lists `dtype` (§2.6, §6): every dtype but uint8.
pub fn lists(dtype: DType) -> bool {
    dtype != DType::UInt8
}

/// Slice's attributes: output coordinate y reads x = y·stride + start (docs/protocol.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "SliceAttrs")]
pub struct Attrs {
    /// First coordinate per sliced axis (or input 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Vec<i64>>,
    /// Output extent per sliced axis (or input 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Vec<i64>>,
    /// Step per sliced axis (or input 3); absent = all ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride: Option<Vec<i64>>,
    /// How out-of-bounds coordinates are handled; default `strict_bounds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// Which axes start/size/stride refer to (or input 5); absent = every axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<Vec<i64>>,
}

/// The optional tensor inputs, by role.
#[derive(Clone, Copy, Debug, Default)]
pub struct Inputs<'a> {
    pub start: Option<&'a Tensor>,
    pub size: Option<&'a Tensor>,
    pub stride: Option<&'a Tensor>,
    pub fill: Option<&'a Tensor>,
    pub axes: Option<&'a Tensor>,
}

/// One input axis of a checked slice: output coordinate `y` reads `x = y·stride + start` on an
/// axis of `extent` elements. An axis not listed in `axes` is copied whole (start 0, size
/// `extent`, stride 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisSlice {
    start: i64,
    pub size: usize,
    stride: i64,
    extent: usize,
}

/// A checked slice: its mode, one [`AxisSlice`] per input axis, and the fill value's bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    mode: Mode,
    pub axes: Vec<AxisSlice>,
    pub fill_bits: u64,
}

impl Plan {
    /// The output shape: the size of every axis.
    pub fn shape(&self) -> Vec<usize> {
        self.axes.iter().map(|axis| axis.size).collect()
    }

    /// The input coordinate that output coordinate `y` of `axis` reads, or `None` for the fill
    /// value: the rule of §2.2 (the module doc's table) at `x = y·stride + start`. [`plan`] has
    /// ruled out every error, so strict bounds reads inside the axis.
    pub fn source_coordinate(&self, axis: usize, y: usize) -> Option<usize> {
        let AxisSlice {
            start,
            stride,
            extent,
            ..
        } = self.axes[axis];
        let x = y as i128 * stride as i128 + start as i128;
        source_coordinate(self.mode, x, extent as i128).map(|z| z as usize)
    }
}

/// Checks everything (each error citing its clause) and gives the plan: nothing sized by the
/// output is built here.
pub fn plan(
    attrs: &Attrs,
    input: &Tensor,
    inputs: Inputs,
    limits: Limits,
) -> Result<Plan, OpError> {
    super::check_max_rank(&input.shape, "slice.rank.max", "the input")?;
    let mode = attrs.mode.unwrap_or_default();
    let dtype = input.dtype;
    if !lists(dtype) {
        return fail(
            ErrorKind::UnsupportedDtype,
            "slice.dtype.unlisted",
            format!("slice does not list {dtype} among its types"),
        );
    }
    if !mode.accepts(dtype) {
        let message = format!(
            "{mode:?} mode does not support {dtype} (clamp, fill and reflect exclude int64 and bfloat16)"
        );
        return fail(
            ErrorKind::UnsupportedDtype,
            "slice.dtype.clamp-fill-reflect-exclude-int64-bf16",
            message,
        );
    }
    let fill_bits = fill_value(mode, dtype, inputs.fill)?;
    let start = values("start", attrs.start.as_deref(), inputs.start)?;
    let size = values("size", attrs.size.as_deref(), inputs.size)?;
    let stride = values("stride", attrs.stride.as_deref(), inputs.stride)?;
    let axes = values("axes", attrs.axes.as_deref(), inputs.axes)?;
    let (Some(start), Some(size)) = (start, size) else {
        return fail(
            ErrorKind::InvalidInput,
            "slice.inputs.required",
            "start and size are required, as attributes or inputs",
        );
    };
    let rank = input.rank();
    let axes = normalize_axes(axes, rank)?;
    let stride = stride.unwrap_or_else(|| vec![1; axes.len()]);
    for (name, list) in [("start", &start), ("size", &size), ("stride", &stride)] {
        if list.len() != axes.len() {
            return fail(
                ErrorKind::RankMismatch,
                "slice.lengths.match",
                format!(
                    "{name} has {} entries, expected {} (one per sliced axis)",
                    list.len(),
                    axes.len()
                ),
            );
        }
    }
    if let Some(&negative) = size.iter().find(|&&s| s < 0) {
        return fail(
            ErrorKind::InvalidSize,
            "slice.size.negative",
            format!("size {size:?} has a negative entry {negative}"),
        );
    }
    // Unlisted axes are copied whole: start 0, size d, stride 1.
    let mut per_axis: Vec<AxisSlice> = input
        .shape
        .iter()
        .map(|&extent| AxisSlice {
            start: 0,
            size: extent,
            stride: 1,
            extent,
        })
        .collect();
    for (k, &axis) in axes.iter().enumerate() {
        per_axis[axis].start = start[k];
        per_axis[axis].size = size[k] as usize;
        per_axis[axis].stride = stride[k];
    }
    let plan = Plan {
        mode,
        axes: per_axis,
        fill_bits,
    };
    limits.checked_volume(&plan.shape())?;
    for (axis, slice) in plan.axes.iter().enumerate() {
        check_axis(mode, slice, axis)?;
    }
    Ok(plan)
}

/// The slice as the layer documents it: output element `y` is the input element at the source
/// coordinates of every axis, or the fill value where an axis has none.
pub(crate) fn evaluate(plan: &Plan, input: &Tensor) -> Tensor {
    let shape = plan.shape();
    let strides = row_major_strides(&input.shape);
    let offsets = row_major(&shape, |y| {
        let mut offset = 0;
        for (axis, (&y, stride)) in y.iter().zip(&strides).enumerate() {
            offset += plan.source_coordinate(axis, y)? * stride;
        }
        Some(offset)
    });
    Tensor {
        dtype: input.dtype,
        buffer: input.buffer.read_at(offsets, plan.fill_bits),
        shape,
    }
}

/// The error of the first output coordinate `y` in `0..size` of an axis that has none to
/// read, found in constant time: an extent of 0 leaves wrap, clamp and reflect nothing to read
/// for a non-empty output; in `strict_bounds` mode, `x = y·stride + start` is monotonic in `y`,
/// so the first coordinate outside `[0, d)` is at an end of the range the inside ones form.
fn check_axis(mode: Mode, slice: &AxisSlice, axis: usize) -> Result<(), OpError> {
    let d = slice.extent as i128;
    let (start, stride, size) = (
        slice.start as i128,
        slice.stride as i128,
        slice.size as i128,
    );
    if size == 0 {
        return Ok(());
    }
    if d == 0 && matches!(mode, Mode::Wrap | Mode::Clamp | Mode::Reflect) {
        let clause = match mode {
            Mode::Wrap => "slice.empty-dim.wrap",
            _ => "slice.empty-dim.clamp-reflect",
        };
        let message = format!(
            "axis {axis} has extent 0, so {mode:?} has no element to read for a non-empty output"
        );
        return fail(ErrorKind::EmptyDimension, clause, message);
    }
    if mode != Mode::StrictBounds {
        return Ok(());
    }
    let first_outside = if !(0..d).contains(&start) {
        0
    } else if stride > 0 {
        // The last y inside: x stays below d going up, at or above 0 going down.
        (d - 1 - start) / stride + 1
    } else if stride < 0 {
        start / -stride + 1
    } else {
        size
    };
    if first_outside < size {
        let x = first_outside * stride + start;
        return fail(
            ErrorKind::OutOfBounds,
            "slice.strict.out-of-bounds",
            format!("coordinate {x} on axis {axis} is outside [0, {d})"),
        );
    }
    Ok(())
}

/// The rule (§2.2): the input coordinate `x` reads on an axis of extent `d` in `mode`; `None`
/// = the fill value. Strict bounds reads `x` itself ([`plan`] rejects an `x` outside).
fn source_coordinate(mode: Mode, x: i128, d: i128) -> Option<i128> {
    let inside = 0 <= x && x < d;
    match mode {
        Mode::StrictBounds | Mode::Fill => inside.then_some(x),
        Mode::Wrap => Some(modulo(x, d)),
        Mode::Clamp => Some(x.clamp(0, d - 1)),
        Mode::Reflect if d == 1 => Some(0),
        Mode::Reflect => {
            let period = 2 * d - 2;
            let c = modulo(x.abs(), period);
            Some(if c >= d { period - c } else { c })
        }
    }
}

/// `x.rem_euclid(m)` for `m > 0`, in 64 bits when both fit: an output of 2^28 elements takes
/// one per element, and 128-bit division is a library call several times slower.
fn modulo(x: i128, m: i128) -> i128 {
    match (i64::try_from(x), i64::try_from(m)) {
        (Ok(x), Ok(m)) => x.rem_euclid(m) as i128,
        _ => x.rem_euclid(m),
    }
}

/// A start/size/stride/axes list from its attribute or its input (1-D int32/int64).
fn values(
    name: &str,
    attr: Option<&[i64]>,
    input: Option<&Tensor>,
) -> Result<Option<Vec<i64>>, OpError> {
    match input {
        None => Ok(attr.map(<[i64]>::to_vec)),
        Some(tensor) => match tensor.int_values() {
            Some(values) if tensor.rank() == 1 => Ok(Some(values)),
            _ => fail(
                ErrorKind::InvalidInput,
                "slice.inputs.type",
                format!(
                    "{name} input must be a 1-D int32 or int64 tensor, got {} of shape {:?}",
                    tensor.dtype, tensor.shape
                ),
            ),
        },
    }
}

/// Axes in `[-rank, rank-1]`, distinct, as non-negative indices; absent = every axis in order.
fn normalize_axes(axes: Option<Vec<i64>>, rank: usize) -> Result<Vec<usize>, OpError> {
    let Some(axes) = axes else {
        return Ok((0..rank).collect());
    };
    let mut seen = vec![false; rank];
    let mut normalized = Vec::with_capacity(axes.len());
    for &axis in &axes {
        let index = if axis < 0 { axis + rank as i64 } else { axis };
        if index < 0 || index >= rank as i64 {
            return fail(
                ErrorKind::InvalidAxes,
                "slice.axes.range",
                format!(
                    "axis {axis} in {axes:?} is outside [-{rank}, {}]",
                    rank as i64 - 1
                ),
            );
        }
        if std::mem::replace(&mut seen[index as usize], true) {
            return fail(
                ErrorKind::InvalidAxes,
                "slice.axes.unique",
                format!("axes {axes:?} name axis {index} twice"),
            );
        }
        normalized.push(index as usize);
    }
    Ok(normalized)
}

/// The fill value's bits in the input's dtype (§2.3): default 0; only in fill mode; a scalar of
/// shape `[]` (or `[1]`, which TensorRT accepts too). Among float32, float16, int8 and fp8 the
/// value converts implicitly: rounded to nearest even for floats, within their finite range
/// (`slice.fill.float-range`); for int8 it must be an integer in range (`slice.fill.int8-value`).
/// Both are implementation-defined: TensorRT documents no rounding, range or saturation rule, so
/// the reference rejects what it would have to guess.
fn fill_value(mode: Mode, dtype: DType, fill: Option<&Tensor>) -> Result<u64, OpError> {
    let Some(fill) = fill else {
        return Ok(0);
    };
    if mode != Mode::Fill {
        return fail(
            ErrorKind::FillNotAllowed,
            "slice.fill.only-fill-mode",
            format!("a fill value is only allowed in fill mode, not {mode:?}"),
        );
    }
    if !(fill.shape.is_empty() || fill.shape == [1]) {
        return fail(
            ErrorKind::InvalidFill,
            "slice.fill.not-scalar",
            format!("fill value must be a scalar, got shape {:?}", fill.shape),
        );
    }
    let bits = fill.bits(0);
    if fill.dtype == dtype {
        return Ok(bits);
    }
    const CONVERTIBLE: [DType; 4] = [DType::Float32, DType::Float16, DType::Int8, DType::Fp8];
    let not_convertible = || {
        OpError::new(
            ErrorKind::InvalidFill,
            "slice.fill.conversion",
            format!(
                "fill value of type {} cannot be converted to {dtype}",
                fill.dtype
            ),
        )
    };
    if !(CONVERTIBLE.contains(&fill.dtype) && CONVERTIBLE.contains(&dtype)) {
        return Err(not_convertible());
    }
    let value = match fill.dtype.float_format() {
        Some(format) => format.decode(bits),
        None => fill.dtype.bits_to_int(bits) as f64,
    };
    match dtype.float_format() {
        Some(format) => format.encode(value).map_err(|_| {
            OpError::new(
                ErrorKind::InvalidFill,
                "slice.fill.float-range",
                format!("fill value {value} is outside the finite range of {dtype}"),
            )
        }),
        None if value.fract() == 0.0 && (-128.0..=127.0).contains(&value) => {
            Ok(dtype.int_to_bits(value as i128))
        }
        None => fail(
            ErrorKind::InvalidFill,
            "slice.fill.int8-value",
            format!("fill value {value} is not an integer in the int8 range [-128, 127]"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan, then the plain evaluation.
    fn run(attrs: &Attrs, input: &Tensor, inputs: Inputs) -> Result<Tensor, OpError> {
        Ok(evaluate(
            &plan(attrs, input, inputs, Limits::DEFAULT)?,
            input,
        ))
    }

    fn coordinates(mode: Mode, d: i128, xs: std::ops::RangeInclusive<i128>) -> Vec<Option<i128>> {
        xs.map(|x| source_coordinate(mode, x, d)).collect()
    }

    fn axis(start: i64, size: i64, stride: i64, d: i128) -> AxisSlice {
        AxisSlice {
            start,
            size: size as usize,
            stride,
            extent: d as usize,
        }
    }

    #[test]
    fn reflect_mirrors_about_edge_centres() {
        // d = 3: period 4; x = -4..=6 -> 0 1 2 1 0 1 2 1 0 1 2.
        let z = coordinates(Mode::Reflect, 3, -4..=6);
        let expected = [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2];
        assert_eq!(z, expected.map(Some).to_vec());
        assert_eq!(coordinates(Mode::Reflect, 1, -2..=2), vec![Some(0); 5]);
    }

    #[test]
    fn wrap_clamp_fill() {
        assert_eq!(
            coordinates(Mode::Wrap, 3, -4..=-1),
            [2, 0, 1, 2].map(Some).to_vec()
        );
        assert_eq!(
            coordinates(Mode::Clamp, 3, -1..=3),
            [0, 0, 1, 2, 2].map(Some).to_vec()
        );
        assert_eq!(
            coordinates(Mode::Fill, 2, -1..=2),
            vec![None, Some(0), Some(1), None]
        );
        let error = |mode, start, d| check_axis(mode, &axis(start, 1, 1, d), 0).unwrap_err();
        assert_eq!(error(Mode::StrictBounds, 3, 3).kind, ErrorKind::OutOfBounds);
        assert_eq!(error(Mode::Wrap, 0, 0).kind, ErrorKind::EmptyDimension);
    }

    #[test]
    fn axis_checks_find_the_first_bad_coordinate_without_visiting_each() {
        // The same error as visiting every coordinate in order, on every small combination.
        for mode in [
            Mode::StrictBounds,
            Mode::Wrap,
            Mode::Clamp,
            Mode::Fill,
            Mode::Reflect,
        ] {
            for d in 0..4i128 {
                for start in -4..5i64 {
                    for stride in -3..4i64 {
                        for size in 0..6i64 {
                            // Each coordinate in turn: wrap, clamp and reflect have none
                            // to read on an empty axis; strict bounds none outside it.
                            let visited = (0..size as i128)
                                .map(|y| y * stride as i128 + start as i128)
                                .find_map(|x| {
                                    if d == 0
                                        && matches!(mode, Mode::Wrap | Mode::Clamp | Mode::Reflect)
                                    {
                                        return Some((ErrorKind::EmptyDimension, None));
                                    }
                                    let outside = source_coordinate(mode, x, d).is_none();
                                    (mode == Mode::StrictBounds && outside).then(|| {
                                        let message =
                                            format!("coordinate {x} on axis 2 is outside [0, {d})");
                                        (ErrorKind::OutOfBounds, Some(message))
                                    })
                                });
                            let checked = check_axis(mode, &axis(start, size, stride, d), 2)
                                .err()
                                .map(|e| {
                                    let message = e.kind == ErrorKind::OutOfBounds;
                                    (e.kind, message.then_some(e.message))
                                });
                            assert_eq!(
                                checked, visited,
                                "{mode:?} d {d} start {start} stride {stride} size {size}"
                            );
                        }
                    }
                }
            }
        }
        // A size past any table, checked at once.
        let error = check_axis(Mode::StrictBounds, &axis(0, 1 << 40, 1, 3), 0).unwrap_err();
        assert_eq!(error.message, "coordinate 3 on axis 0 is outside [0, 3)");
    }

    #[test]
    fn axes_example_from_the_header() {
        // NvInfer.h: {{0,2,4},{1,3,5}}, start {1}, size {2}, stride {1}, axes {1} -> {{2,4},{3,5}}.
        let input = Tensor::from_bits(DType::Int32, vec![2, 3], vec![0, 2, 4, 1, 3, 5]);
        let attrs = Attrs {
            start: Some(vec![1]),
            size: Some(vec![2]),
            stride: Some(vec![1]),
            axes: Some(vec![1]),
            mode: None,
        };
        let out = run(&attrs, &input, Inputs::default()).unwrap();
        assert_eq!(out.shape, vec![2, 2]);
        assert_eq!(
            (0..4).map(|i| out.bits(i)).collect::<Vec<_>>(),
            vec![2, 4, 3, 5]
        );
    }

    #[test]
    fn axes_must_be_distinct_and_in_range() {
        assert_eq!(
            normalize_axes(Some(vec![-1, 1]), 2).unwrap_err().kind,
            ErrorKind::InvalidAxes
        );
        assert_eq!(
            normalize_axes(Some(vec![2]), 2).unwrap_err().kind,
            ErrorKind::InvalidAxes
        );
        assert_eq!(normalize_axes(Some(vec![-2]), 2).unwrap(), vec![0]);
    }
}
