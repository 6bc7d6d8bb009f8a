//! Scale — TensorRT `IScaleLayer`, `add_scale` / `add_scale_nd` (seed 003; `docs/semantics.md` §3).
//!
//! ```text
//! out = (input · scale + shift) ^ power          per element (§3.1)
//! ```
//! Coefficients (§3.1, §3.2): `uniform` one for every element; `channel` one per index of the
//! channel axis; `elementwise` one per coordinate `[a_axis, …, a_n]`, laid out row-major
//! (\[inferred\], §3.2), so the leading (batch) axes before the channel axis are not indexed. An
//! empty (or absent) list means scale 1, shift 0, power 1; each list independently has 0
//! entries or exactly the mode's count — 1, `dim[axis]`, or `dim[axis] · … · dim[n]` —
//! anything else is `invalid_weights` (\[inferred\], §3.2).
//!
//! Channel axis (§3.3): `channel_axis` as `add_scale_nd` takes it, or, when absent, the
//! `add_scale` default, the third-to-last axis. It must lie in `[-rank, rank)`, a negative axis
//! counting from the end (`invalid_channel_axis`; TensorRT-RTX's builder, §3.3), and exactly 2 or 3 axes must
//! follow it ("Only 2D or 3D scale is supported"; `invalid_rank`). The input has rank ≥ 4
//! (§3.4: the C++ header; the seed's "n ≥ 4" is off by one, §8.2; `invalid_rank`) and at most 8
//! (TensorRT's `Dims64::MAX_DIMS`, §6.1; `invalid_rank`).
//!
//! Data types (§3.5, §6): input and output in {int8, float16, bfloat16, float32}; int32 ("not
//! valid input tensors") and every other type are `unsupported_dtype`. `output_dtype` defaults
//! to the input's; any of the four may be asked for (\[inferred\]: the header documents float32 →
//! int8, the quantization use).
//!
//! How an element is computed (the reference's reading, stated so implementations can be
//! compared with it under a tolerance, see `opspec_spec::compare`):
//! 1. `x` is converted to float32 exactly (an int8 input is its integer value, float16 and
//!    bfloat16 embed exactly); coefficients are float32 values.
//! 2. `t = x · scale` rounded to float32, then `t + shift` rounded to float32: two roundings,
//!    no fused multiply-add (an FMA is one ULP away at most, absent cancellation).
//! 3. If `power ≠ 1`: `t = pow(t, power)` with IEEE `pow` special cases — a negative finite
//!    base with a non-integer power gives NaN (§3.5; mark such cases `implementation_defined`).
//!    It is evaluated in binary64 and rounded once to float32, which is the correctly rounded
//!    `powf` result apart from rare double roundings (vendor `powf`s are not correctly rounded
//!    either, §9; the default tolerance covers both).
//! 4. Rounded to the output type: float32 as is; float16 / bfloat16 to nearest even, with
//!    overflow to ±∞ (an arithmetic result, unlike a spec value, may overflow); int8 rounds
//!    half to even and clamps to [-128, 127] (§3.5, \[doc\]), ±∞ clamp, and NaN becomes 0
//!    (\[inferred\]: TensorRT does not say; 0 is what a saturating float→int conversion gives on
//!    CUDA). A NaN float result is the format's canonical NaN (payloads are not compared).
//!
//! `evaluate` is the reference: these steps one element at a time, in row-major order. The
//! fast kernels (crate `opspec-kernels`) give the same bits by their own loops on the same
//! [`Plan`], tested against `evaluate` (as `ops::Plan::evaluate`) bit for bit on generated
//! cases of every dtype pair and mode, special values included.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::error::{fail, ErrorKind, OpError};
use crate::float::FloatFormat;
use crate::tensor::{Buffer, Limits, Tensor};

/// Input positions.
pub(crate) const INPUTS: [&str; 1] = ["input"];

/// The types Scale accepts, as input and as output (§3.5).
pub const DTYPES: [DType; 4] = [DType::Int8, DType::Float16, DType::BFloat16, DType::Float32];

/// The smallest input rank (§3.4).
const MIN_RANK: usize = 4;

/// `ScaleMode`: how many coefficients there are and which elements share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// One coefficient for every element.
    Uniform,
    /// One coefficient per index of the channel axis.
    Channel,
    /// One coefficient per coordinate from the channel axis to the last, row-major.
    Elementwise,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Uniform, Mode::Channel, Mode::Elementwise];
}

/// A list of float32 coefficients, held as bit patterns so that NaN payloads and -0.0 survive
/// from the spec file to the wire. It is written as a list of numbers (finite values, exact: every
/// float32 is a binary64) and quoted bit patterns (NaN, ±∞); spec files are read by the tensor
/// value rules (`.nan`, `"0x7fc00001"`, `0.1` rounded once to nearest even, ...), which are the
/// spec format's (crate `opspec-spec`), so this crate only writes it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Coefficients(pub Vec<u32>);

impl Serialize for Coefficients {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for &bits in &self.0 {
            let value = f32::from_bits(bits);
            if value.is_finite() {
                seq.serialize_element(&value)?;
            } else {
                seq.serialize_element(&format!("0x{bits:08x}"))?;
            }
        }
        seq.end()
    }
}

impl Coefficients {
    pub fn from_values(values: &[f32]) -> Coefficients {
        Coefficients(values.iter().map(|v| v.to_bits()).collect())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn value(&self, index: usize) -> f32 {
        f32::from_bits(self.0[index])
    }
}

impl fmt::Debug for Coefficients {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(
                self.0
                    .iter()
                    .map(|&bits| DisplayAsDebug(DType::Float32.format_bits(bits as u64))),
            )
            .finish()
    }
}

struct DisplayAsDebug(String);

impl fmt::Debug for DisplayAsDebug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Scale's attributes: `out = (input · scale + shift) ^ power` (docs/protocol.md). Written as
/// the other ops' are; read by `opspec_spec::ScaleAttrs`, whose coefficients follow the spec
/// format's value rules.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Attrs {
    /// `uniform`, `channel` or `elementwise` (required).
    pub mode: Mode,
    /// Empty or absent = 1.
    #[serde(default, skip_serializing_if = "Coefficients::is_empty")]
    pub scale: Coefficients,
    /// Empty or absent = 0.
    #[serde(default, skip_serializing_if = "Coefficients::is_empty")]
    pub shift: Coefficients,
    /// Empty or absent = 1.
    #[serde(default, skip_serializing_if = "Coefficients::is_empty")]
    pub power: Coefficients,
    /// `add_scale_nd`'s channel axis; absent = `add_scale`'s third-to-last axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_axis: Option<i64>,
    /// int8, float16, bfloat16 or float32; absent = the input's dtype (`int8` with a float32
    /// input is TensorRT's INT8 quantization).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "dtype_name")]
    pub output_dtype: Option<DType>,
}

impl Attrs {
    /// Whether some power coefficient is not 1 (so `pow` is evaluated; NaN counts as not 1).
    pub fn has_power(&self) -> bool {
        self.power.0.iter().any(|&bits| f32::from_bits(bits) != 1.0)
    }
}

/// `output_dtype` by its name.
fn dtype_name<S: serde::Serializer>(dtype: &Option<DType>, s: S) -> Result<S::Ok, S::Error> {
    match dtype {
        Some(dtype) => s.serialize_str(dtype.name()),
        None => s.serialize_none(),
    }
}

/// A checked Scale: the output dtype, the coefficients, and how each element finds its own:
/// `index = (flat / inner) % count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan<'a> {
    pub mode: Mode,
    pub scale: &'a Coefficients,
    pub shift: &'a Coefficients,
    pub power: &'a Coefficients,
    pub output_dtype: DType,
    channel_axis: usize,
    /// The mode's coefficient count.
    pub count: usize,
    /// Elements that share one coefficient in a row: 1 for elementwise, the volume after the
    /// channel axis for channel; unused for uniform (`count` = 1).
    pub inner: usize,
}

impl Plan<'_> {
    fn coefficient_index(&self, flat: usize) -> usize {
        if self.count <= 1 {
            0
        } else {
            (flat / self.inner.max(1)) % self.count
        }
    }
}

/// Checks dtypes, rank, channel axis and coefficient counts (each error citing its clause).
pub fn plan<'a>(attrs: &'a Attrs, input: &Tensor, limits: Limits) -> Result<Plan<'a>, OpError> {
    super::check_max_rank(&input.shape, "scale.rank.max", "the input")?;
    if !DTYPES.contains(&input.dtype) {
        return fail(
            ErrorKind::UnsupportedDtype,
            "scale.dtype.input",
            format!(
                "Scale accepts int8, float16, bfloat16 and float32, not {}",
                input.dtype
            ),
        );
    }
    let output_dtype = attrs.output_dtype.unwrap_or(input.dtype);
    if !DTYPES.contains(&output_dtype) {
        return fail(
            ErrorKind::UnsupportedDtype,
            "scale.dtype.output",
            format!("Scale outputs int8, float16, bfloat16 or float32, not {output_dtype}"),
        );
    }
    let rank = input.rank();
    if rank < MIN_RANK {
        return fail(
            ErrorKind::InvalidRank,
            "scale.rank.min-four",
            format!(
                "Scale needs an input of rank >= {MIN_RANK}, got shape {:?}",
                input.shape
            ),
        );
    }
    let channel_axis = match attrs.channel_axis {
        None => rank - 3,
        Some(axis) if axis < -(rank as i64) || axis >= rank as i64 => {
            return fail(
                ErrorKind::InvalidChannelAxis,
                "scale.channel-axis.range",
                format!(
                    "channel_axis {axis} is outside [-{rank}, {rank}) for shape {:?}",
                    input.shape
                ),
            )
        }
        // A negative axis counts from the end, as TensorRT-RTX's builder reads it (§3.3).
        Some(axis) if axis < 0 => (axis + rank as i64) as usize,
        Some(axis) => axis as usize,
    };
    let spatial = rank - channel_axis - 1;
    if !(2..=3).contains(&spatial) {
        let message = format!(
            "channel_axis {channel_axis} leaves {spatial} dims after it in shape {:?}; only 2D or 3D scale is supported",
            input.shape
        );
        return fail(
            ErrorKind::InvalidRank,
            "scale.channel-axis.spatial",
            message,
        );
    }
    // Checked: with a leading dim of 0 the trailing dims alone could overflow.
    let after = limits.checked_volume(&input.shape[channel_axis + 1..])?;
    let (count, inner) = match attrs.mode {
        Mode::Uniform => (1, 1),
        Mode::Channel => (input.shape[channel_axis], after),
        Mode::Elementwise => (limits.checked_volume(&input.shape[channel_axis..])?, 1),
    };
    for (name, list) in [
        ("scale", &attrs.scale),
        ("shift", &attrs.shift),
        ("power", &attrs.power),
    ] {
        if !list.is_empty() && list.len() != count {
            let message = format!(
                "{name} has {} coefficients; {:?} mode on shape {:?} with channel axis {channel_axis} takes 0 or {count}",
                list.len(),
                attrs.mode,
                input.shape
            );
            return fail(ErrorKind::InvalidWeights, "scale.weights.count", message);
        }
    }
    Ok(Plan {
        mode: attrs.mode,
        scale: &attrs.scale,
        shift: &attrs.shift,
        power: &attrs.power,
        output_dtype,
        channel_axis,
        count,
        inner,
    })
}

/// Scale as the module doc states it: element by element in row-major order, each through
/// `to_f32`, [`element`] and `from_f32` (the four steps), its coefficients found by
/// the plan's mode (`coefficient_index`).
pub(crate) fn evaluate(plan: &Plan, input: &Tensor) -> Tensor {
    let coefficient = |list: &Coefficients, default: f32, flat: usize| {
        if list.is_empty() {
            default
        } else {
            list.value(plan.coefficient_index(flat))
        }
    };
    let bits = (0..input.len()).map(|flat| {
        let x = to_f32(input.dtype, input.bits(flat));
        let t = element(
            x,
            coefficient(plan.scale, 1.0, flat),
            coefficient(plan.shift, 0.0, flat),
            coefficient(plan.power, 1.0, flat),
        );
        from_f32(t, plan.output_dtype)
    });
    Tensor {
        dtype: plan.output_dtype,
        shape: input.shape.clone(),
        buffer: Buffer::from_bits(plan.output_dtype.width(), bits),
    }
}

/// `(x · scale + shift) ^ power` in float32, steps 2 and 3 of the module doc.
#[inline]
pub fn element(x: f32, scale: f32, shift: f32, power: f32) -> f32 {
    let product = x * scale;
    let t = product + shift;
    if power == 1.0 {
        t
    } else {
        (t as f64).powf(power as f64) as f32
    }
}

/// An element of a Scale dtype as float32 (exact).
fn to_f32(dtype: DType, bits: u64) -> f32 {
    match dtype.float_format() {
        Some(format) => format.decode(bits) as f32,
        None => dtype.bits_to_int(bits) as f32,
    }
}

/// Rounds a float32 result to the output dtype's bits (step 4 of the module doc).
fn from_f32(value: f32, dtype: DType) -> u64 {
    match dtype.float_format() {
        Some(format) if value.is_nan() => format.canonical_nan(),
        Some(format) => format.encode(value as f64).unwrap_or_else(|_| {
            // Overflow: round-to-nearest sends it to ±∞ (every Scale float type has ∞).
            let infinity = if value < 0.0 {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            format
                .encode(infinity)
                .unwrap_or(FloatFormat::FLOAT32.canonical_nan())
        }),
        None if value.is_nan() => dtype.int_to_bits(0),
        None => {
            let (low, high) = dtype.int_range().unwrap_or((-128, 127));
            let rounded = value.round_ties_even().clamp(low as f32, high as f32);
            dtype.int_to_bits(rounded as i128)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan, then the plain evaluation.
    fn run(attrs: &Attrs, input: &Tensor) -> Result<Tensor, OpError> {
        Ok(evaluate(&plan(attrs, input, Limits::DEFAULT)?, input))
    }

    fn attrs(mode: Mode, scale: &[f32], shift: &[f32], power: &[f32]) -> Attrs {
        Attrs {
            mode,
            scale: Coefficients::from_values(scale),
            shift: Coefficients::from_values(shift),
            power: Coefficients::from_values(power),
            channel_axis: None,
            output_dtype: None,
        }
    }

    fn f32_tensor(shape: &[usize], values: &[f32]) -> Tensor {
        Tensor::from_bits(
            DType::Float32,
            shape.to_vec(),
            values.iter().map(|v| v.to_bits() as u64).collect(),
        )
    }

    fn f32_values(tensor: &Tensor) -> Vec<f32> {
        assert_eq!(tensor.dtype, DType::Float32);
        (0..tensor.len())
            .map(|i| f32::from_bits(tensor.bits(i) as u32))
            .collect()
    }

    fn one_to_nine() -> Vec<f32> {
        (1..=9).map(|v| v as f32).collect()
    }

    #[test]
    fn seed_uniform_4d() {
        // Seed 003 "Scale 4D": x = 1..9, scale 2, shift 1, power 2 -> (2x+1)^2.
        let input = f32_tensor(&[1, 1, 3, 3], &one_to_nine());
        let out = run(&attrs(Mode::Uniform, &[2.0], &[1.0], &[2.0]), &input).unwrap();
        assert_eq!(out.shape, vec![1, 1, 3, 3]);
        assert_eq!(
            f32_values(&out),
            [9.0, 25.0, 49.0, 81.0, 121.0, 169.0, 225.0, 289.0, 361.0]
        );
    }

    #[test]
    fn seed_channel_5d_with_channel_axis_1() {
        // Seed 003 "Scale 5D": shape (1,2,1,3,3), channel_axis 1, scale [1,2], shift [0,1],
        // power [1,2]: channel 0 unchanged, channel 1 is (2x+1)^2.
        let values: Vec<f32> = one_to_nine().repeat(2);
        let input = f32_tensor(&[1, 2, 1, 3, 3], &values);
        let mut a = attrs(Mode::Channel, &[1.0, 2.0], &[0.0, 1.0], &[1.0, 2.0]);
        a.channel_axis = Some(1);
        let out = run(&a, &input).unwrap();
        let mut expected = one_to_nine();
        expected.extend([9.0, 25.0, 49.0, 81.0, 121.0, 169.0, 225.0, 289.0, 361.0]);
        assert_eq!(f32_values(&out), expected);
        // Without channel_axis the add_scale default is the third-to-last axis (2, of size 1):
        // two coefficients for a channel dim of 1 is an error.
        a.channel_axis = None;
        assert_eq!(
            plan(&a, &input, Limits::DEFAULT).unwrap_err().kind,
            ErrorKind::InvalidWeights
        );
    }

    #[test]
    fn elementwise_indexes_from_the_channel_axis_row_major() {
        // Shape (2,1,2,2), default axis 1: 4 coefficients over [c,h,w], repeated per batch.
        let input = f32_tensor(&[2, 1, 2, 2], &[0.0; 8]);
        let out = run(
            &attrs(Mode::Elementwise, &[], &[1.0, 2.0, 3.0, 4.0], &[]),
            &input,
        )
        .unwrap();
        assert_eq!(f32_values(&out), [1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0]);
        // Channel mode on (1,2,1,2): coefficient per channel, shared by its 2 elements.
        let input = f32_tensor(&[1, 2, 1, 2], &[1.0; 4]);
        let out = run(&attrs(Mode::Channel, &[10.0, 20.0], &[], &[]), &input).unwrap();
        assert_eq!(f32_values(&out), [10.0, 10.0, 20.0, 20.0]);
    }

    #[test]
    fn int8_output_rounds_half_to_even_and_saturates() {
        // float32 -> int8 quantization: 2.5 -> 2, 3.5 -> 4, -2.5 -> -2, -3.5 -> -4, 0.5 -> 0,
        // 1000 -> 127, -1000 -> -128, -inf -> -128, NaN -> 0 ([inferred]).
        let values = [
            2.5,
            3.5,
            -2.5,
            -3.5,
            0.5,
            1000.0,
            -1000.0,
            f32::NEG_INFINITY,
            f32::NAN,
            126.6,
            -128.4,
            127.5,
        ];
        let input = f32_tensor(&[1, 1, 3, 4], &values);
        let mut a = attrs(Mode::Uniform, &[], &[], &[]);
        a.output_dtype = Some(DType::Int8);
        let out = run(&a, &input).unwrap();
        assert_eq!(out.dtype, DType::Int8);
        let ints: Vec<i128> = (0..out.len())
            .map(|i| DType::Int8.bits_to_int(out.bits(i)))
            .collect();
        assert_eq!(ints, [2, 4, -2, -4, 0, 127, -128, -128, 0, 127, -128, 127]);
    }

    #[test]
    fn int8_input_is_its_integer_value() {
        // int8 in, int8 out: x*2 + 0.5 = -255.5 -> clamps to -128; 3*2+0.5 = 6.5 -> 6.
        let input = Tensor::from_bits(
            DType::Int8,
            vec![1, 1, 1, 2],
            vec![DType::Int8.int_to_bits(-128), 3],
        );
        let out = run(&attrs(Mode::Uniform, &[2.0], &[0.5], &[]), &input).unwrap();
        assert_eq!(DType::Int8.bits_to_int(out.bits(0)), -128);
        assert_eq!(DType::Int8.bits_to_int(out.bits(1)), 6);
    }

    #[test]
    fn half_outputs_round_to_nearest_even_and_overflow_to_infinity() {
        // float16: 1 + 2^-11 is the midpoint between 1 and 1 + 2^-10: ties to even -> 1.0.
        let input = Tensor::from_bits(DType::Float16, vec![1, 1, 1, 2], vec![0x3c00, 0x7bff]);
        let out = run(
            &attrs(Mode::Uniform, &[1.0], &[2f32.powi(-11)], &[]),
            &input,
        )
        .unwrap();
        assert_eq!(out.bits(0), 0x3c00);
        // 65504 + 2^-11 rounds back to 65504 (not an overflow).
        assert_eq!(out.bits(1), 0x7bff);
        let out = run(&attrs(Mode::Uniform, &[2.0], &[], &[]), &input).unwrap();
        assert_eq!(out.bits(1), 0x7c00, "131008 overflows float16 to +inf");
        // bfloat16: 1 * 3 = 3 exactly (0x4040).
        let input = Tensor::from_bits(DType::BFloat16, vec![1, 1, 1, 1], vec![0x3f80]);
        let out = run(&attrs(Mode::Uniform, &[3.0], &[], &[]), &input).unwrap();
        assert_eq!(out.bits(0), 0x4040);
    }

    #[test]
    fn pow_follows_ieee_special_cases() {
        // Negative base, non-integer power: NaN; integer power keeps the sign.
        assert!(element(-8.0, 1.0, 0.0, 0.5).is_nan());
        assert_eq!(element(-2.0, 1.0, 0.0, 3.0), -8.0);
        assert_eq!(element(f32::NAN, 1.0, 0.0, 0.0), 1.0);
        assert_eq!(element(4.0, 1.0, 0.0, 0.5), 2.0);
        // NaN results are the canonical NaN of the output format.
        assert_eq!(from_f32(f32::NAN, DType::Float16), 0x7e00);
        assert_eq!(from_f32(-f32::NAN, DType::Float32), 0x7fc0_0000);
    }

    #[test]
    fn rank_axis_and_count_rules() {
        let kind = |a: &Attrs, shape: &[usize]| {
            let volume = shape.iter().product::<usize>();
            plan(a, &f32_tensor(shape, &vec![0.0; volume]), Limits::DEFAULT)
                .unwrap_err()
                .kind
        };
        let uniform = attrs(Mode::Uniform, &[], &[], &[]);
        assert_eq!(kind(&uniform, &[1, 2, 2]), ErrorKind::InvalidRank);
        let mut a = uniform.clone();
        for (axis, expected) in [
            (-5, ErrorKind::InvalidChannelAxis),
            (4, ErrorKind::InvalidChannelAxis),
            (-1, ErrorKind::InvalidRank), // axis 3, 0 dims after it
            (3, ErrorKind::InvalidRank),  // 0 dims after it
            (2, ErrorKind::InvalidRank),  // 1 dim after it
        ] {
            a.channel_axis = Some(axis);
            assert_eq!(kind(&a, &[1, 1, 1, 1]), expected, "axis {axis}");
        }
        a.channel_axis = Some(0); // 3 spatial dims: allowed (cookbook Add_scale_nd).
        assert!(plan(&a, &f32_tensor(&[1, 1, 1, 1], &[0.0]), Limits::DEFAULT).is_ok());
        // Default axis on rank 6 leaves 2 after it; explicit 1 on rank 6 leaves 4.
        a.channel_axis = Some(1);
        assert_eq!(kind(&a, &[1; 6]), ErrorKind::InvalidRank);
        // Counts: elementwise on (2,3,4,5), axis 1 -> 60; channel -> 3.
        let shape = [2, 3, 4, 5];
        let tensor = f32_tensor(&shape, &[0.0; 120]);
        let mut e = attrs(Mode::Elementwise, &[1.0; 60], &[], &[0.5; 60]);
        assert_eq!(plan(&e, &tensor, Limits::DEFAULT).unwrap().count, 60);
        e.shift = Coefficients::from_values(&[0.0; 3]);
        assert_eq!(
            plan(&e, &tensor, Limits::DEFAULT).unwrap_err().kind,
            ErrorKind::InvalidWeights
        );
        let c = attrs(Mode::Channel, &[1.0; 3], &[0.0; 4], &[]);
        assert_eq!(
            plan(&c, &tensor, Limits::DEFAULT).unwrap_err().kind,
            ErrorKind::InvalidWeights
        );
        let u = attrs(Mode::Uniform, &[1.0, 2.0], &[], &[]);
        assert_eq!(
            plan(&u, &tensor, Limits::DEFAULT).unwrap_err().kind,
            ErrorKind::InvalidWeights
        );
    }

    #[test]
    fn dtype_rules() {
        let int32 = Tensor::from_bits(DType::Int32, vec![1, 1, 1, 1], vec![0]);
        let uniform = attrs(Mode::Uniform, &[], &[], &[]);
        assert_eq!(
            plan(&uniform, &int32, Limits::DEFAULT).unwrap_err().kind,
            ErrorKind::UnsupportedDtype
        );
        let mut a = uniform.clone();
        a.output_dtype = Some(DType::Int32);
        let input = f32_tensor(&[1, 1, 1, 1], &[0.0]);
        assert_eq!(
            plan(&a, &input, Limits::DEFAULT).unwrap_err().kind,
            ErrorKind::UnsupportedDtype
        );
    }

    #[test]
    fn coefficients_are_written_with_their_bits() {
        let mut a = attrs(Mode::Channel, &[0.1, -0.0, 2.0], &[], &[]);
        a.scale.0.push(0x7fc0_0001);
        a.output_dtype = Some(DType::Int8);
        assert_eq!(
            serde_yaml::to_string(&a).unwrap(),
            "mode: channel\nscale:\n- 0.1\n- -0.0\n- 2.0\n- '0x7fc00001'\noutput_dtype: int8\n"
        );
        assert!(!attrs(Mode::Uniform, &[2.0], &[], &[1.0]).has_power());
        assert!(attrs(Mode::Uniform, &[], &[], &[1.0, 2.0]).has_power());
    }
}
