//! Reformat — the memory images of TensorRT `TensorFormat` (NvInferRuntime.h 10.16,
//! NvInferRuntimeBase.h 8.6; `docs/semantics.md` §4).
//!
//! A tensor in `LINEAR` is the logical tensor. Any other format is a 1-D buffer holding the
//! format's memory image, padding included. `reformat` packs a logical tensor into a buffer,
//! unpacks a buffer (whose logical `shape` is an attribute) back, or does both in turn.
//! Packing writes 0 into every padding slot (what TensorRT writes, \[obs\] cookbook DataFormat
//! log); unpacking ignores padding (\[inferred\], §4 "Padding contents"). Bits move unchanged.
//! Both are one pass over the image's slots (`Image::slot`: per logical coordinate, its
//! memory offset by the §4 formulas below): unpack reads every element from its slot, pack
//! writes every element to its slot in a zeroed buffer.
//!
//! With `C` the vector dim — the third-to-last axis, or the fourth-to-last for the `D…`
//! formats — and the axes before it kept outermost in order (§4 general rule):
//!
//! | format | memory | dtypes | rank |
//! |---|---|---|---|
//! | `LINEAR` | `[N][C][H][W]` | all | any |
//! | `CHW2` | `[N][⌈C/2⌉][H][W][2]` | float16, bfloat16 | ≥ 3 |
//! | `HWC8` | `[N][H][W][⌈C/8⌉·8]` | float16, bfloat16 | ≥ 3 |
//! | `CHW4` | `[N][⌈C/4⌉][H][W][4]` | int8, float16 | ≥ 3 |
//! | `CHW16` | `[N][⌈C/16⌉][H][W][16]` | float16 | ≥ 3 |
//! | `CHW32` | `[N][⌈C/32⌉][H][W][32]` | int8, float16, float32 | ≥ 3 |
//! | `DHWC8` | `[N][D][H][W][⌈C/8⌉·8]` | float16, bfloat16 | ≥ 4 |
//! | `CDHW32` | `[N][⌈C/32⌉][D][H][W][32]` | int8, float16 | ≥ 4 |
//! | `HWC` | `[N][H][W][C]` | float32, uint8 | ≥ 3 |
//! | `DLA_LINEAR` | `[N][C][H][roundUp(W, 64/e)]` | int8, float16 | = 4 |
//! | `DLA_HWC4` | `[N][H][roundUp(W, K/C'/e)][C']` | int8, float16 | = 4 |
//! | `HWC16` | `[N][H][W][⌈C/16⌉·16]` | int8, float16, fp8 | ≥ 3 |
//! | `DHWC` | `[N][D][H][W][C]` | float32 | ≥ 4 |
//!
//! `e` is the element size in bytes (1 for int8, 2 for float16). DLA_LINEAR is planar NCHW with
//! each W row padded to 64 bytes — not the channel-last layout of seed 002, which is wrong
//! (§4, §8.1). DLA_HWC4 takes `C ∈ {1, 3, 4}` only (`invalid_channels`), stored as `C' = 1, 4,
//! 4` lanes; a row is padded to `K = 64` bytes on Orin and `K = 32` on Xavier (the 8.6 text;
//! attribute `dla`). The DLA formats describe 4-D tensors (rank ≠ 4 is `invalid_rank`).
//!
//! CHW4 accepts float16 as well as int8: the 10.16 header says int8 only, but the 8.6 header
//! allows float16 and the 10.16 cookbook runs CHW4 in FP16 successfully on TensorRT 10.16 (§4
//! \[obs\], §8.8), so a real engine accepts it. The DLA-only constraints of CHW4/CHW16/CHW32
//! (C ≤ 4, dims ≤ 8192, strides in 64-byte units) are properties of a DLA engine, not of the
//! memory image, and are not checked here.
//!
//! Errors: a dtype the format does not list (`unsupported_dtype`), a rank below the format's
//! minimum or above 8 (TensorRT's `Dims64::MAX_DIMS`, §6.1) (`invalid_rank`), a missing or negative `shape`, or a `shape` that differs from a
//! LINEAR input's (`invalid_input`), a buffer that is not 1-D of the format's length for
//! `shape` (`invalid_buffer`), a padded size past the element budget (`too_large`).

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::dtype::{DType, Width};
use crate::error::{fail, ErrorKind, OpError};
use crate::tensor::{row_major, row_major_strides, Limits, Tensor};

/// Input positions.
pub(crate) const INPUTS: [&str; 1] = ["input"];

/// A `TensorFormat`, by the name the header gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Format {
    /// Row-major, no padding: the logical tensor (all dtypes).
    #[serde(rename = "LINEAR")]
    Linear,
    /// `[N][⌈C/2⌉][H][W][2]`; float16, bfloat16; rank >= 3.
    #[serde(rename = "CHW2")]
    Chw2,
    /// `[N][H][W][⌈C/8⌉·8]`; float16, bfloat16; rank >= 3.
    #[serde(rename = "HWC8")]
    Hwc8,
    /// `[N][⌈C/4⌉][H][W][4]`; int8, float16; rank >= 3.
    #[serde(rename = "CHW4")]
    Chw4,
    /// `[N][⌈C/16⌉][H][W][16]`; float16; rank >= 3.
    #[serde(rename = "CHW16")]
    Chw16,
    /// `[N][⌈C/32⌉][H][W][32]`; int8, float16, float32; rank >= 3.
    #[serde(rename = "CHW32")]
    Chw32,
    /// `[N][D][H][W][⌈C/8⌉·8]`; float16, bfloat16; rank >= 4.
    #[serde(rename = "DHWC8")]
    Dhwc8,
    /// `[N][⌈C/32⌉][D][H][W][32]`; int8, float16; rank >= 4.
    #[serde(rename = "CDHW32")]
    Cdhw32,
    /// `[N][H][W][C] (channel-last, unpadded)`; float32, uint8; rank >= 3.
    #[serde(rename = "HWC")]
    Hwc,
    /// `[N][C][H][roundUp(W, 64/elemSize)] (planar, 64-byte rows)`; int8, float16; rank 4.
    #[serde(rename = "DLA_LINEAR")]
    DlaLinear,
    /// `[N][H][roundUp(W, K/C'/elemSize)][C'], C in {1,3,4}, C' = 1,4,4, K = 64 Orin / 32 Xavier`; int8, float16; rank 4.
    #[serde(rename = "DLA_HWC4")]
    DlaHwc4,
    /// `[N][H][W][⌈C/16⌉·16]`; int8, float16, fp8; rank >= 3.
    #[serde(rename = "HWC16")]
    Hwc16,
    /// `[N][D][H][W][C] (channel-last, unpadded)`; float32; rank >= 4.
    #[serde(rename = "DHWC")]
    Dhwc,
}

/// Which DLA generation's DLA_HWC4 row rule applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dla {
    /// Rows padded to 64 bytes.
    #[default]
    Orin,
    /// Rows padded to 32 bytes (NvInferRuntimeBase.h 8.6).
    Xavier,
}

impl Dla {
    pub const ALL: [Dla; 2] = [Dla::Orin, Dla::Xavier];
}

/// How a format arranges memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Linear,
    /// `[..][⌈C/V⌉][spatial…][V]`; the vector dim is `from_end`-th to last.
    VectorMajor {
        lanes: usize,
        from_end: usize,
    },
    /// `[..][spatial…][⌈C/V⌉·V]`.
    VectorMinor {
        lanes: usize,
        from_end: usize,
    },
    DlaLinear,
    DlaHwc4,
}

impl Format {
    pub const ALL: [Format; 13] = [
        Format::Linear,
        Format::Chw2,
        Format::Hwc8,
        Format::Chw4,
        Format::Chw16,
        Format::Chw32,
        Format::Dhwc8,
        Format::Cdhw32,
        Format::Hwc,
        Format::DlaLinear,
        Format::DlaHwc4,
        Format::Hwc16,
        Format::Dhwc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Linear => "LINEAR",
            Format::Chw2 => "CHW2",
            Format::Hwc8 => "HWC8",
            Format::Chw4 => "CHW4",
            Format::Chw16 => "CHW16",
            Format::Chw32 => "CHW32",
            Format::Dhwc8 => "DHWC8",
            Format::Cdhw32 => "CDHW32",
            Format::Hwc => "HWC",
            Format::DlaLinear => "DLA_LINEAR",
            Format::DlaHwc4 => "DLA_HWC4",
            Format::Hwc16 => "HWC16",
            Format::Dhwc => "DHWC",
        }
    }

    fn kind(self) -> Kind {
        use Kind::*;
        match self {
            Format::Linear => Linear,
            Format::Chw2 => VectorMajor {
                lanes: 2,
                from_end: 3,
            },
            Format::Chw4 => VectorMajor {
                lanes: 4,
                from_end: 3,
            },
            Format::Chw16 => VectorMajor {
                lanes: 16,
                from_end: 3,
            },
            Format::Chw32 => VectorMajor {
                lanes: 32,
                from_end: 3,
            },
            Format::Cdhw32 => VectorMajor {
                lanes: 32,
                from_end: 4,
            },
            Format::Hwc8 => VectorMinor {
                lanes: 8,
                from_end: 3,
            },
            Format::Hwc16 => VectorMinor {
                lanes: 16,
                from_end: 3,
            },
            Format::Hwc => VectorMinor {
                lanes: 1,
                from_end: 3,
            },
            Format::Dhwc8 => VectorMinor {
                lanes: 8,
                from_end: 4,
            },
            Format::Dhwc => VectorMinor {
                lanes: 1,
                from_end: 4,
            },
            Format::DlaLinear => DlaLinear,
            Format::DlaHwc4 => DlaHwc4,
        }
    }

    /// The dtypes the format holds (§4 table; CHW4 also float16, see the module doc).
    pub fn dtypes(self) -> &'static [DType] {
        use DType::*;
        match self {
            Format::Linear => &DType::ALL,
            Format::Chw2 | Format::Hwc8 | Format::Dhwc8 => &[Float16, BFloat16],
            Format::Chw4 => &[Int8, Float16],
            Format::Chw16 => &[Float16],
            Format::Chw32 => &[Int8, Float16, Float32],
            Format::Cdhw32 | Format::DlaLinear | Format::DlaHwc4 => &[Int8, Float16],
            Format::Hwc => &[Float32, UInt8],
            Format::Hwc16 => &[Int8, Float16, Fp8],
            Format::Dhwc => &[Float32],
        }
    }

    /// The smallest rank the format describes (the DLA formats need exactly 4).
    pub fn min_rank(self) -> usize {
        match self.kind() {
            Kind::Linear => 0,
            Kind::VectorMajor { from_end, .. } | Kind::VectorMinor { from_end, .. } => from_end,
            Kind::DlaLinear | Kind::DlaHwc4 => 4,
        }
    }
}

/// Reformat's attributes: LINEAR → X packs, X → LINEAR unpacks, X → Y does both (docs/protocol.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ReformatAttrs")]
pub struct Attrs {
    /// The input's format (LINEAR = the logical tensor, any other = its 1-D memory image).
    pub from: Format,
    /// The output's format.
    pub to: Format,
    /// The logical shape; required when `from` is not LINEAR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<i64>>,
    /// The DLA generation (DLA_HWC4 row rule): `orin` (default, 64-byte rows) or `xavier` (32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dla: Option<Dla>,
}

/// A format's memory image of one logical shape.
///
/// `padded` is the logical shape with the vector dim rounded up to whole vectors (and DLA rows
/// rounded up); `split` is `padded` with a vector-major dim split into (vectors, lanes); memory
/// is `split` transposed by `order` (memory axis `i` is split axis `order[i]`), row-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub format: Format,
    pub logical: Vec<usize>,
    padded: Vec<usize>,
    split: Vec<usize>,
    order: Vec<usize>,
    /// The split vector-major axis: (logical axis, lanes).
    vector: Option<(usize, usize)>,
}

impl Image {
    /// Checks `dtype` and `shape` against `format` and lays the image out.
    pub fn new(
        format: Format,
        dtype: DType,
        shape: &[usize],
        dla: Dla,
        limits: Limits,
    ) -> Result<Image, OpError> {
        check_dtype(format, dtype)?;
        super::check_max_rank(shape, "reformat.rank.max", "the logical shape")?;
        let rank = shape.len();
        let kind = format.kind();
        let exact_rank = matches!(kind, Kind::DlaLinear | Kind::DlaHwc4);
        if rank < format.min_rank() || (exact_rank && rank != 4) {
            return fail(
                ErrorKind::InvalidRank,
                if exact_rank {
                    "reformat.dla.rank-four"
                } else {
                    "reformat.rank.minimum"
                },
                format!(
                    "{} needs rank {}{}, got shape {shape:?}",
                    format.name(),
                    if exact_rank { "" } else { ">= " },
                    format.min_rank()
                ),
            );
        }
        let too_large = || {
            OpError::new(
                ErrorKind::TooLarge,
                crate::tensor::BUDGET_CLAUSE,
                format!("the {} image of shape {shape:?} overflows", format.name()),
            )
        };
        let round_up = |value: usize, multiple: usize| {
            value
                .div_ceil(multiple)
                .checked_mul(multiple)
                .ok_or_else(too_large)
        };
        let identity = |n: usize| (0..n).collect::<Vec<_>>();
        let mut padded = shape.to_vec();
        let (split, order, vector) = match kind {
            Kind::Linear => (padded.clone(), identity(rank), None),
            Kind::VectorMajor { lanes, from_end } => {
                let c = rank - from_end;
                padded[c] = round_up(shape[c], lanes)?;
                let mut split = padded.clone();
                split[c] = padded[c] / lanes;
                split.insert(c + 1, lanes);
                // [lead.., blocks, lanes, spatial..] -> [lead.., blocks, spatial.., lanes]
                let mut order: Vec<usize> = (0..=c).collect();
                order.extend(c + 2..rank + 1);
                order.push(c + 1);
                (split, order, Some((c, lanes)))
            }
            Kind::VectorMinor { lanes, from_end } => {
                let c = rank - from_end;
                padded[c] = round_up(shape[c], lanes)?;
                let mut order: Vec<usize> = (0..c).collect();
                order.extend(c + 1..rank);
                order.push(c);
                (padded.clone(), order, None)
            }
            Kind::DlaLinear => {
                padded[3] = round_up(shape[3], 64 / element_bytes(dtype))?;
                (padded.clone(), identity(4), None)
            }
            Kind::DlaHwc4 => {
                let lanes = match shape[1] {
                    1 => 1,
                    3 | 4 => 4,
                    c => {
                        return fail(
                            ErrorKind::InvalidChannels,
                            "reformat.dla-hwc4.channels",
                            format!(
                                "DLA_HWC4 takes C in {{1, 3, 4}}, got C = {c} in shape {shape:?}"
                            ),
                        )
                    }
                };
                let row_bytes = match dla {
                    Dla::Orin => 64,
                    Dla::Xavier => 32,
                };
                padded[1] = lanes;
                padded[3] = round_up(shape[3], row_bytes / lanes / element_bytes(dtype))?;
                (padded.clone(), vec![0, 2, 3, 1], None)
            }
        };
        limits.checked_volume(&padded)?;
        Ok(Image {
            format,
            logical: shape.to_vec(),
            padded,
            split,
            order,
            vector,
        })
    }

    /// The buffer's element count.
    #[allow(clippy::len_without_is_empty)] // no caller needs one
    pub fn len(&self) -> usize {
        self.padded.iter().product()
    }

    /// Where each logical element lives in the image: per logical axis, the memory offset that
    /// each coordinate adds (a vector-major channel `y` adds its block's and its lane's offset).
    /// Every logical element has one slot and no two share one; the slots no element maps to
    /// are the padding.
    pub fn axis_slots(&self) -> Vec<AxisSlots> {
        let memory_shape: Vec<usize> = self.order.iter().map(|&axis| self.split[axis]).collect();
        let memory_strides = row_major_strides(&memory_shape);
        // The memory stride of each split axis.
        let mut split_strides = vec![0; self.split.len()];
        for (position, &axis) in self.order.iter().enumerate() {
            split_strides[axis] = memory_strides[position];
        }
        (0..self.logical.len())
            .map(|axis| match self.vector {
                Some((c, lanes)) if axis == c => AxisSlots::Vectors {
                    lanes,
                    block: split_strides[c],
                    lane: split_strides[c + 1],
                },
                // Logical axes after a split one sit one further along in `split`.
                Some((c, _)) if axis > c => AxisSlots::Strided(split_strides[axis + 1]),
                _ => AxisSlots::Strided(split_strides[axis]),
            })
            .collect()
    }

    /// The slot of logical coordinate `y`: the sum of what each axis adds ([`Image::axis_slots`]).
    fn slot(axis_slots: &[AxisSlots], y: &[usize]) -> usize {
        axis_slots
            .iter()
            .zip(y)
            .map(|(axis, &y)| axis.offset(y))
            .sum()
    }

    /// Logical tensor → buffer: every element written to its slot, padding left at 0, in one
    /// pass.
    fn pack(&self, logical: &Tensor) -> Tensor {
        let axis_slots = self.axis_slots();
        let slots = row_major(&self.logical, |y| Image::slot(&axis_slots, y));
        Tensor {
            dtype: logical.dtype,
            shape: vec![self.len()],
            buffer: logical.buffer.write_at(self.len(), slots, 0),
        }
    }

    /// Buffer → logical tensor: each logical element reads its slot; padding is never read.
    fn unpack(&self, buffer: &Tensor) -> Tensor {
        let axis_slots = self.axis_slots();
        let slots = row_major(&self.logical, |y| Some(Image::slot(&axis_slots, y)));
        Tensor {
            dtype: buffer.dtype,
            shape: self.logical.clone(),
            buffer: buffer.buffer.read_at(slots, 0),
        }
    }
}

/// How the coordinate `y` of one logical axis moves through a format's memory image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisSlots {
    /// `y · stride`.
    Strided(usize),
    /// A vector-major channel: `(y / lanes) · block + (y % lanes) · lane`.
    Vectors {
        lanes: usize,
        block: usize,
        lane: usize,
    },
}

impl AxisSlots {
    /// The memory offset coordinate `y` adds.
    pub fn offset(self, y: usize) -> usize {
        match self {
            AxisSlots::Strided(stride) => y * stride,
            AxisSlots::Vectors { lanes, block, lane } => (y / lanes) * block + (y % lanes) * lane,
        }
    }
}

/// `unsupported_dtype` unless `format` holds `dtype`.
fn check_dtype(format: Format, dtype: DType) -> Result<(), OpError> {
    if format.dtypes().contains(&dtype) {
        return Ok(());
    }
    let names: Vec<&str> = format.dtypes().iter().map(|d| d.name()).collect();
    fail(
        ErrorKind::UnsupportedDtype,
        "reformat.dtype.formats",
        format!("{} holds {}, not {dtype}", format.name(), names.join(", ")),
    )
}

/// Bytes per element of a DLA dtype (int8 1, float16 2).
fn element_bytes(dtype: DType) -> usize {
    match dtype.width() {
        Width::W8 => 1,
        Width::W16 => 2,
        Width::W32 => 4,
        Width::W64 => 8,
    }
}

/// The checked images of both sides (a LINEAR side is the logical tensor itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub from: Image,
    pub to: Image,
}

/// Checks formats, dtypes, shape and buffer length (each error citing its clause).
pub fn plan(attrs: &Attrs, input: &Tensor, limits: Limits) -> Result<Plan, OpError> {
    let dla = attrs.dla.unwrap_or_default();
    check_dtype(attrs.from, input.dtype)?;
    check_dtype(attrs.to, input.dtype)?;
    let shape: Vec<usize> = match (&attrs.shape, attrs.from) {
        (None, Format::Linear) => input.shape.clone(),
        (None, from) => {
            return fail(
                ErrorKind::InvalidInput,
                "reformat.shape.required",
                format!("reformat from {} needs the logical `shape`", from.name()),
            )
        }
        (Some(shape), from) => {
            let mut dims = Vec::with_capacity(shape.len());
            for &dim in shape {
                dims.push(usize::try_from(dim).map_err(|_| {
                    OpError::new(
                        ErrorKind::InvalidInput,
                        "reformat.shape.non-negative",
                        format!("shape {shape:?} has a negative dim {dim}"),
                    )
                })?);
            }
            if from == Format::Linear && dims != input.shape {
                return fail(
                    ErrorKind::InvalidInput,
                    "reformat.shape.matches-linear",
                    format!(
                        "shape {shape:?} differs from the LINEAR input's shape {:?}",
                        input.shape
                    ),
                );
            }
            dims
        }
    };
    limits.checked_volume(&shape)?;
    let from = Image::new(attrs.from, input.dtype, &shape, dla, limits)?;
    let to = Image::new(attrs.to, input.dtype, &shape, dla, limits)?;
    if attrs.from != Format::Linear && (input.rank() != 1 || input.len() != from.len()) {
        return fail(
            ErrorKind::InvalidBuffer,
            "reformat.buffer.length",
            format!(
                "a {} buffer of shape {:?} is 1-D with {} elements, got shape {:?}",
                attrs.from.name(),
                shape,
                from.len(),
                input.shape
            ),
        );
    }
    Ok(Plan { from, to })
}

/// Unpack the input unless it is LINEAR, then pack it unless the output is LINEAR.
pub(crate) fn evaluate(plan: &Plan, input: &Tensor) -> Tensor {
    // A LINEAR input is the logical tensor itself: borrowed, not copied, on the way to a pack.
    let logical = match plan.from.format {
        Format::Linear => Cow::Borrowed(input),
        _ => Cow::Owned(plan.from.unpack(input)),
    };
    match plan.to.format {
        Format::Linear => logical.into_owned(),
        _ => plan.to.pack(&logical),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64, the generator of `opspec_generate::rng` (which this crate does not depend
    /// on), for the generated shapes below.
    struct SplitMix(u64);

    impl SplitMix {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (((z ^ (z >> 31)) as u128 * n as u128) >> 64) as u64
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }

        fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[self.below(items.len() as u64) as usize]
        }
    }

    /// The plan, then the plain evaluation.
    fn run(attrs: &Attrs, input: &Tensor) -> Result<Tensor, OpError> {
        Ok(evaluate(&plan(attrs, input, Limits::DEFAULT)?, input))
    }

    fn tensor(dtype: DType, shape: &[usize], bits: &[u64]) -> Tensor {
        Tensor::from_bits(dtype, shape.to_vec(), bits.to_vec())
    }

    fn bits(tensor: &Tensor) -> Vec<u64> {
        (0..tensor.len()).map(|i| tensor.bits(i)).collect()
    }

    fn attrs(from: Format, to: Format, shape: Option<&[i64]>) -> Attrs {
        Attrs {
            from,
            to,
            shape: shape.map(<[i64]>::to_vec),
            dla: None,
        }
    }

    /// Packs 1..=volume (as bits) of `shape`, checks the buffer, and checks that unpacking
    /// gives the logical tensor back.
    fn pack_counting(format: Format, dtype: DType, shape: &[usize], dla: Dla) -> Vec<u64> {
        let volume: usize = shape.iter().product();
        let logical = tensor(dtype, shape, &(1..=volume as u64).collect::<Vec<_>>());
        let mut a = attrs(Format::Linear, format, None);
        a.dla = Some(dla);
        let buffer = run(&a, &logical).unwrap();
        assert_eq!(buffer.shape.len(), 1);
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let mut back = attrs(format, Format::Linear, Some(&dims));
        back.dla = Some(dla);
        assert_eq!(
            run(&back, &buffer).unwrap(),
            logical,
            "{format:?} round trip"
        );
        bits(&buffer)
    }

    fn zeros(n: usize) -> Vec<u64> {
        vec![0; n]
    }

    fn concat(parts: &[&[u64]]) -> Vec<u64> {
        parts.concat()
    }

    #[test]
    fn chw2_pairs_channels_and_pads_the_odd_one() {
        // (1,3,1,2): c0 = 1 2, c1 = 3 4, c2 = 5 6. [N][2][H][W][2]: block 0 per w: (c0,c1);
        // block 1 per w: (c2, pad) -- the cookbook's "13, 0, 14, 0" pattern.
        let out = pack_counting(Format::Chw2, DType::Float16, &[1, 3, 1, 2], Dla::Orin);
        assert_eq!(out, [1, 3, 2, 4, 5, 0, 6, 0]);
    }

    #[test]
    fn hwc8_puts_channels_last_padded_to_8() {
        // (1,3,1,2): per w, 8 lanes: c0 c1 c2 then 5 zeros.
        let out = pack_counting(Format::Hwc8, DType::BFloat16, &[1, 3, 1, 2], Dla::Orin);
        assert_eq!(out, concat(&[&[1, 3, 5], &zeros(5), &[2, 4, 6], &zeros(5)]));
    }

    #[test]
    fn chw4_blocks_of_four_channels() {
        // (1,5,2,1): c = 1 2 | 3 4 | 5 6 | 7 8 | 9 10 (h0 h1). [N][2][H][W][4]:
        // block 0: h0 -> 1 3 5 7, h1 -> 2 4 6 8; block 1: h0 -> 9 0 0 0, h1 -> 10 0 0 0.
        let out = pack_counting(Format::Chw4, DType::Int8, &[1, 5, 2, 1], Dla::Orin);
        assert_eq!(out, [1, 3, 5, 7, 2, 4, 6, 8, 9, 0, 0, 0, 10, 0, 0, 0]);
        let half = pack_counting(Format::Chw4, DType::Float16, &[1, 5, 2, 1], Dla::Orin);
        assert_eq!(half, out);
    }

    #[test]
    fn chw16_and_chw32_vectors() {
        // CHW16 (1,2,1,1): one vector of 16 lanes: c0 c1, 14 zeros.
        let out = pack_counting(Format::Chw16, DType::Float16, &[1, 2, 1, 1], Dla::Orin);
        assert_eq!(out, concat(&[&[1, 2], &zeros(14)]));
        // CHW32 (1,1,1,2): per w one vector: w0 -> 1 + 31 zeros, w1 -> 2 + 31 zeros.
        let out = pack_counting(Format::Chw32, DType::Float32, &[1, 1, 1, 2], Dla::Orin);
        assert_eq!(out, concat(&[&[1], &zeros(31), &[2], &zeros(31)]));
        // Rank 3 (no batch), C = 33: block 0 holds c0..c31, block 1 holds c32 + 31 zeros.
        let out = pack_counting(Format::Chw32, DType::Int8, &[33, 1, 1], Dla::Orin);
        let first: Vec<u64> = (1..=32).collect();
        assert_eq!(out, concat(&[&first, &[33], &zeros(31)]));
    }

    #[test]
    fn dhwc8_and_cdhw32_use_the_fourth_to_last_axis() {
        // DHWC8 (1,2,2,1,1): c0 = 1 2, c1 = 3 4 (over d). [N][D][H][W][8]: d0 -> 1 3 + 6 zeros.
        let out = pack_counting(Format::Dhwc8, DType::Float16, &[1, 2, 2, 1, 1], Dla::Orin);
        assert_eq!(out, concat(&[&[1, 3], &zeros(6), &[2, 4], &zeros(6)]));
        // CDHW32 (1,1,2,1,1): [N][1][D][H][W][32]: d0 -> 1 + 31 zeros, d1 -> 2 + 31 zeros.
        let out = pack_counting(Format::Cdhw32, DType::Int8, &[1, 1, 2, 1, 1], Dla::Orin);
        assert_eq!(out, concat(&[&[1], &zeros(31), &[2], &zeros(31)]));
    }

    #[test]
    fn hwc_hwc16_and_dhwc() {
        // HWC (1,2,2,2): c0 = 1 2 3 4, c1 = 5 6 7 8 over (h,w). Channel-last, no padding.
        let out = pack_counting(Format::Hwc, DType::Float32, &[1, 2, 2, 2], Dla::Orin);
        assert_eq!(out, [1, 5, 2, 6, 3, 7, 4, 8]);
        let out = pack_counting(Format::Hwc, DType::UInt8, &[2, 2, 2], Dla::Orin);
        assert_eq!(out, [1, 5, 2, 6, 3, 7, 4, 8]);
        // HWC16 (1,1,1,1) fp8: 1 then 15 zeros.
        let out = pack_counting(Format::Hwc16, DType::Fp8, &[1, 1, 1, 1], Dla::Orin);
        assert_eq!(out, concat(&[&[1], &zeros(15)]));
        // DHWC (1,2,1,1,2): c0 = 1 2, c1 = 3 4 over w: per w (c0, c1) -> 1 3 2 4.
        let out = pack_counting(Format::Dhwc, DType::Float32, &[1, 2, 1, 1, 2], Dla::Orin);
        assert_eq!(out, [1, 3, 2, 4]);
    }

    #[test]
    fn dla_linear_of_the_blog_tensor_is_planar_with_64_byte_rows() {
        // Seed 002's (2,3,4,4) int8 arange(96), done right (§4): 2·3·4 rows of 64 bytes;
        // (n,c,h,w) at ((n·3+c)·4+h)·64 + w; starts 0 1 2 3, 60 zeros, 4 5 6 7, ...
        let logical = tensor(DType::Int8, &[2, 3, 4, 4], &(0..96).collect::<Vec<_>>());
        let buffer = run(&attrs(Format::Linear, Format::DlaLinear, None), &logical).unwrap();
        assert_eq!(buffer.shape, vec![1536]);
        let out = bits(&buffer);
        assert_eq!(
            out[..68],
            concat(&[&[0, 1, 2, 3], &zeros(60), &[4, 5, 6, 7]])
        );
        assert_eq!(out[((3 + 2) * 4 + 3) * 64 + 3], 95); // (1,2,3,3)
        assert_eq!(out.iter().filter(|&&b| b != 0).count(), 95);
        // float16: rows of 32 elements.
        let out = pack_counting(Format::DlaLinear, DType::Float16, &[1, 1, 2, 3], Dla::Orin);
        assert_eq!(
            out,
            concat(&[&[1, 2, 3], &zeros(29), &[4, 5, 6], &zeros(29)])
        );
    }

    #[test]
    fn dla_hwc4_rows_on_orin_and_xavier() {
        // float16, C = 3 -> 4 lanes, W = 3: Orin rows roundUp(3, 64/4/2 = 8) = 8 pixels,
        // Xavier roundUp(3, 32/4/2 = 4) = 4 pixels. c0 = 1 2 3, c1 = 4 5 6, c2 = 7 8 9.
        let pixels: Vec<u64> = concat(&[&[1, 4, 7, 0], &[2, 5, 8, 0], &[3, 6, 9, 0]]);
        let orin = pack_counting(Format::DlaHwc4, DType::Float16, &[1, 3, 1, 3], Dla::Orin);
        assert_eq!(orin, concat(&[&pixels, &zeros(5 * 4)]));
        let xavier = pack_counting(Format::DlaHwc4, DType::Float16, &[1, 3, 1, 3], Dla::Xavier);
        assert_eq!(xavier, concat(&[&pixels, &zeros(4)]));
        // int8, C = 4, W = 3: Orin 16 pixels a row, Xavier 8.
        let row = |dla| pack_counting(Format::DlaHwc4, DType::Int8, &[1, 4, 1, 3], dla).len();
        assert_eq!((row(Dla::Orin), row(Dla::Xavier)), (16 * 4, 8 * 4));
        // float16, C = 1 (grayscale, 1 lane): Orin 32 pixels, Xavier 16; two rows (H = 2).
        let gray = |dla| pack_counting(Format::DlaHwc4, DType::Float16, &[1, 1, 2, 3], dla);
        assert_eq!(
            gray(Dla::Orin),
            concat(&[&[1, 2, 3], &zeros(29), &[4, 5, 6], &zeros(29)])
        );
        assert_eq!(gray(Dla::Xavier).len(), 2 * 16);
    }

    #[test]
    fn unpack_ignores_padding_and_repack_zeroes_it() {
        // CHW2 (1,3,1,1): buffer [c0, c1, c2, pad] with garbage in the pad slot.
        let buffer = tensor(DType::Float16, &[4], &[0x3c00, 0x4000, 0x4200, 0x7e01]);
        let logical = run(
            &attrs(Format::Chw2, Format::Linear, Some(&[1, 3, 1, 1])),
            &buffer,
        )
        .unwrap();
        assert_eq!(bits(&logical), [0x3c00, 0x4000, 0x4200]);
        let again = run(
            &attrs(Format::Chw2, Format::Chw2, Some(&[1, 3, 1, 1])),
            &buffer,
        )
        .unwrap();
        assert_eq!(bits(&again), [0x3c00, 0x4000, 0x4200, 0]);
        // Format to format: CHW2 -> HWC8 goes through the logical tensor.
        let hwc8 = run(
            &attrs(Format::Chw2, Format::Hwc8, Some(&[1, 3, 1, 1])),
            &buffer,
        )
        .unwrap();
        assert_eq!(bits(&hwc8), concat(&[&[0x3c00, 0x4000, 0x4200], &zeros(5)]));
    }

    /// Pack as it was first written, two plain passes: pad the logical tensor with zeros to
    /// `padded`, then lay `split` out in `order` (a transpose).
    fn pack_two_pass(image: &Image, logical: &Tensor) -> Vec<u64> {
        let strides = row_major_strides(&image.logical);
        let pad = row_major(&image.padded, |y| {
            let inside = y.iter().zip(&image.logical).all(|(&y, &dim)| y < dim);
            inside.then(|| y.iter().zip(&strides).map(|(&y, &s)| y * s).sum())
        });
        let padded = logical.buffer.read_at(pad, 0);
        // NumPy's transpose of the padded row-major tensor: output axis i is axis order[i].
        let strides = row_major_strides(&image.split);
        let memory_shape: Vec<usize> = image.order.iter().map(|&axis| image.split[axis]).collect();
        let memory = row_major(&memory_shape, |m| {
            Some(
                m.iter()
                    .zip(&image.order)
                    .map(|(&m, &axis)| m * strides[axis])
                    .sum(),
            )
        });
        let packed = padded.read_at(memory, 0);
        (0..packed.len()).map(|i| packed.bits(i)).collect()
    }

    #[test]
    fn one_pass_pack_matches_pad_then_transpose() {
        // Every format and dtype, generated shapes (ranks from the minimum to 2 more; C past
        // a 32-lane block, W past a DLA row, now and then a 0), against the plain loops of the
        // two-pass pack; the packed buffer unpacks back to the logical tensor.
        let mut rng = SplitMix(0x5eed_f0a7);
        for format in Format::ALL {
            for &dtype in format.dtypes() {
                for _ in 0..12 {
                    let exact = matches!(format.kind(), Kind::DlaLinear | Kind::DlaHwc4);
                    let rank =
                        format.min_rank().max(1) + if exact { 0 } else { rng.below(3) as usize };
                    let mut shape: Vec<usize> = (0..rank)
                        .map(|_| match rng.below(10) {
                            0 if rng.chance(30) => 0,
                            0..=2 => 1,
                            3 => 20 + rng.below(50) as usize,
                            _ => 2 + rng.below(4) as usize,
                        })
                        .collect();
                    if format == Format::DlaHwc4 {
                        shape[1] = *rng.pick(&[1, 3, 4]);
                    }
                    let volume: usize = shape.iter().product();
                    let logical =
                        Tensor::from_bits(dtype, shape.clone(), (1..=volume as u64).collect());
                    let dla = *rng.pick(&[Dla::Orin, Dla::Xavier]);
                    let image = Image::new(format, dtype, &shape, dla, Limits::DEFAULT).unwrap();
                    let mut a = attrs(Format::Linear, format, None);
                    a.dla = Some(dla);
                    let packed = run(&a, &logical).unwrap();
                    let expected = pack_two_pass(&image, &logical);
                    assert_eq!(bits(&packed), expected, "{format:?} {dtype} {shape:?}");
                    assert_eq!(image.unpack(&packed), logical, "{format:?} {shape:?}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        let kind = |a: Attrs, input: &Tensor| run(&a, input).unwrap_err().kind;
        let int8 = tensor(DType::Int8, &[1, 2, 1, 1], &[1, 2]);
        assert_eq!(
            kind(attrs(Format::Linear, Format::Chw2, None), &int8),
            ErrorKind::UnsupportedDtype
        );
        let int32 = tensor(DType::Int32, &[1, 4, 1, 1], &[1, 2, 3, 4]);
        assert_eq!(
            kind(attrs(Format::Linear, Format::Chw4, None), &int32),
            ErrorKind::UnsupportedDtype
        );
        let half2 = tensor(DType::Float16, &[2, 1], &[1, 2]);
        assert_eq!(
            kind(attrs(Format::Linear, Format::Chw2, None), &half2),
            ErrorKind::InvalidRank
        );
        let half3 = tensor(DType::Float16, &[2, 1, 1], &[1, 2]);
        assert!(run(&attrs(Format::Linear, Format::Chw2, None), &half3).is_ok());
        assert_eq!(
            kind(attrs(Format::Linear, Format::Dhwc8, None), &half3),
            ErrorKind::InvalidRank
        );
        let half5 = tensor(DType::Float16, &[1, 1, 1, 1, 2], &[1, 2]);
        assert_eq!(
            kind(attrs(Format::Linear, Format::DlaLinear, None), &half5),
            ErrorKind::InvalidRank
        );
        assert_eq!(
            kind(attrs(Format::Linear, Format::DlaHwc4, None), &int8),
            ErrorKind::InvalidChannels
        );
        // Buffers: missing shape, wrong length, wrong rank.
        let buffer = tensor(DType::Float16, &[4], &[0; 4]);
        assert_eq!(
            kind(attrs(Format::Chw2, Format::Linear, None), &buffer),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            kind(
                attrs(Format::Chw2, Format::Linear, Some(&[1, 3, 1, 2])),
                &buffer
            ),
            ErrorKind::InvalidBuffer
        );
        let matrix = tensor(DType::Float16, &[2, 2], &[0; 4]);
        assert_eq!(
            kind(
                attrs(Format::Chw2, Format::Linear, Some(&[1, 3, 1, 1])),
                &matrix
            ),
            ErrorKind::InvalidBuffer
        );
        assert_eq!(
            kind(
                attrs(Format::Chw2, Format::Linear, Some(&[1, -3, 1, 1])),
                &buffer
            ),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            kind(
                attrs(Format::Linear, Format::Chw2, Some(&[1, 1, 2, 1])),
                &half3
            ),
            ErrorKind::InvalidInput
        );
        // A padded size that overflows is too_large, not a panic.
        let huge = [1, i64::MAX / 2, 1, 1];
        assert_eq!(
            kind(attrs(Format::Chw32, Format::Linear, Some(&huge)), &buffer),
            ErrorKind::TooLarge
        );
    }

    #[test]
    fn format_names_round_trip_through_yaml() {
        for format in Format::ALL {
            let text = serde_yaml::to_string(&format).unwrap();
            assert_eq!(text.trim(), format.name());
            assert_eq!(serde_yaml::from_str::<Format>(&text).unwrap(), format);
        }
        let a: Attrs =
            serde_yaml::from_str("{from: DLA_HWC4, to: LINEAR, shape: [1, 3, 1, 3], dla: xavier}")
                .unwrap();
        assert_eq!(a.dla, Some(Dla::Xavier));
    }
}
