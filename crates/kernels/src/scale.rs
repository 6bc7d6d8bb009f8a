//! Scale's typed loops: the same bits as `opspec::ops::scale::evaluate`, faster. Each dtype's
//! words are decoded and encoded in typed loops, one coefficient set per run of elements that
//! share it (the whole tensor for uniform, one channel row for channel, the trailing block for
//! elementwise), the output written straight into a buffer of its width. Every element still
//! goes through `scale::element`; the conversions are the reference's (exact to float32, then
//! rounded to the output dtype) specialised per dtype. Tested against the reference bit for bit on generated cases of every
//! dtype pair and mode, special values included.

use half::{bf16, f16};

use opspec::dtype::DType;
use opspec::float::FloatFormat;
use opspec::ops::scale::{element, Coefficients, Mode, Plan};
use opspec::tensor::{Buffer, Tensor};

use crate::pages::{self, ZeroBits};

/// A Scale dtype: its word, and its exact conversions to and from float32.
pub(crate) trait Lane {
    type Word: Copy + Default + ZeroBits;
    fn words(buffer: &Buffer) -> Option<&[Self::Word]>;
    fn wrap(words: Vec<Self::Word>) -> Buffer;
    /// Step 1 of the module doc: exact.
    fn decode(word: Self::Word) -> f32;
    /// Step 4 of the module doc.
    fn encode(value: f32) -> Self::Word;
}

pub(crate) struct Int8;
pub(crate) struct Float16;
pub(crate) struct BFloat16;
pub(crate) struct Float32;

impl Lane for Int8 {
    type Word = u8;
    fn words(buffer: &Buffer) -> Option<&[u8]> {
        match buffer {
            Buffer::W8(words) => Some(words),
            _ => None,
        }
    }
    fn wrap(words: Vec<u8>) -> Buffer {
        Buffer::W8(words)
    }
    #[inline]
    fn decode(word: u8) -> f32 {
        word as i8 as f32
    }
    /// Half to even, clamped to [-128, 127] (±∞ too); NaN is 0.
    #[inline]
    fn encode(value: f32) -> u8 {
        if value.is_nan() {
            0
        } else {
            value.round_ties_even().clamp(-128.0, 127.0) as i8 as u8
        }
    }
}

/// `half`'s float32 → float16 / bfloat16 conversions round to nearest even and overflow
/// to ±∞, as [`opspec::ops::scale::from_f32`] does; only a NaN needs the canonical NaN put in.
impl Lane for Float16 {
    type Word = u16;
    fn words(buffer: &Buffer) -> Option<&[u16]> {
        match buffer {
            Buffer::W16(words) => Some(words),
            _ => None,
        }
    }
    fn wrap(words: Vec<u16>) -> Buffer {
        Buffer::W16(words)
    }
    #[inline]
    fn decode(word: u16) -> f32 {
        f16::from_bits(word).to_f32()
    }
    #[inline]
    fn encode(value: f32) -> u16 {
        if value.is_nan() {
            FloatFormat::FLOAT16.canonical_nan() as u16
        } else {
            f16::from_f32(value).to_bits()
        }
    }
}

impl Lane for BFloat16 {
    type Word = u16;
    fn words(buffer: &Buffer) -> Option<&[u16]> {
        Float16::words(buffer)
    }
    fn wrap(words: Vec<u16>) -> Buffer {
        Buffer::W16(words)
    }
    #[inline]
    fn decode(word: u16) -> f32 {
        bf16::from_bits(word).to_f32()
    }
    #[inline]
    fn encode(value: f32) -> u16 {
        if value.is_nan() {
            FloatFormat::BFLOAT16.canonical_nan() as u16
        } else {
            bf16::from_f32(value).to_bits()
        }
    }
}

impl Lane for Float32 {
    type Word = u32;
    fn words(buffer: &Buffer) -> Option<&[u32]> {
        match buffer {
            Buffer::W32(words) => Some(words),
            _ => None,
        }
    }
    fn wrap(words: Vec<u32>) -> Buffer {
        Buffer::W32(words)
    }
    #[inline]
    fn decode(word: u32) -> f32 {
        f32::from_bits(word)
    }
    #[inline]
    fn encode(value: f32) -> u32 {
        if value.is_nan() {
            FloatFormat::FLOAT32.canonical_nan() as u32
        } else {
            value.to_bits()
        }
    }
}

/// Scale of a validated plan by typed loops, or `None` when the input's buffer is not of its
/// dtype's width (then the plain loop reads it bit by bit).
pub fn run(plan: &Plan, input: &Tensor) -> Option<Tensor> {
    Some(Tensor {
        dtype: plan.output_dtype,
        shape: input.shape.clone(),
        buffer: buffer(plan, input)?,
    })
}

/// The output buffer, or `None` when the input's buffer is not of its dtype's width (or a
/// dtype is not a Scale dtype; `opspec::ops::scale::plan` has already refused those).
fn buffer(plan: &Plan, input: &Tensor) -> Option<Buffer> {
    match input.dtype {
        DType::Int8 => to_output::<Int8>(plan, &input.buffer),
        DType::Float16 => to_output::<Float16>(plan, &input.buffer),
        DType::BFloat16 => to_output::<BFloat16>(plan, &input.buffer),
        DType::Float32 => to_output::<Float32>(plan, &input.buffer),
        _ => None,
    }
}

fn to_output<I: Lane>(plan: &Plan, input: &Buffer) -> Option<Buffer> {
    let words = I::words(input)?;
    Some(match plan.output_dtype {
        DType::Int8 => Int8::wrap(scale::<I, Int8>(plan, words)),
        DType::Float16 => Float16::wrap(scale::<I, Float16>(plan, words)),
        DType::BFloat16 => BFloat16::wrap(scale::<I, BFloat16>(plan, words)),
        DType::Float32 => Float32::wrap(scale::<I, Float32>(plan, words)),
        _ => return None,
    })
}

/// Coefficient `index` of a list, or the default when the list is empty.
#[inline]
fn coefficient(list: &Coefficients, default: f32, index: usize) -> f32 {
    if list.is_empty() {
        default
    } else {
        list.value(index)
    }
}

/// Every element of `input`, in rows that share a coefficient set: uniform, one row of
/// everything; channel, rows of `inner` elements (the volume after the channel axis), row
/// `r` taking coefficient `r % count`; elementwise, rows of `count` elements, element `j`
/// of each taking coefficient `j`.
fn scale<I: Lane, O: Lane>(plan: &Plan, input: &[I::Word]) -> Vec<O::Word> {
    let mut output = pages::zeroed::<O::Word>(input.len());
    if input.is_empty() {
        return output;
    }
    match plan.mode {
        Mode::Uniform | Mode::Channel => {
            let row = match plan.mode {
                Mode::Uniform => input.len(),
                _ => plan.inner,
            };
            let pairs = input.chunks(row).zip(output.chunks_mut(row));
            for (r, (src, dst)) in pairs.enumerate() {
                let c = r % plan.count;
                let scale = coefficient(plan.scale, 1.0, c);
                let shift = coefficient(plan.shift, 0.0, c);
                let power = coefficient(plan.power, 1.0, c);
                // The same `element`; with the power a constant 1 its `pow` branch folds.
                if power == 1.0 {
                    map::<I, O>(src, dst, |x| element(x, scale, shift, 1.0));
                } else {
                    map::<I, O>(src, dst, |x| element(x, scale, shift, power));
                }
            }
        }
        Mode::Elementwise => {
            let row = plan.count;
            for (src, dst) in input.chunks(row).zip(output.chunks_mut(row)) {
                for (j, (&x, y)) in src.iter().zip(dst).enumerate() {
                    let t = element(
                        I::decode(x),
                        coefficient(plan.scale, 1.0, j),
                        coefficient(plan.shift, 0.0, j),
                        coefficient(plan.power, 1.0, j),
                    );
                    *y = O::encode(t);
                }
            }
        }
    }
    output
}

#[inline(always)]
fn map<I: Lane, O: Lane>(src: &[I::Word], dst: &mut [O::Word], f: impl Fn(f32) -> f32) {
    for (y, &x) in dst.iter_mut().zip(src) {
        *y = O::encode(f(I::decode(x)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opspec::ops::scale::{self, Attrs, DTYPES};
    use opspec::tensor::Limits;
    use opspec_generate::rng::Rng;

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

    /// Special values of each input dtype, as bits: ±0, ±∞, NaNs with payloads and signs,
    /// subnormals, the largest finite, values whose results land on rounding ties.
    fn special_input(rng: &mut Rng, dtype: DType) -> u64 {
        match dtype {
            DType::Int8 => rng.next_u64() & 0xff,
            DType::Float16 | DType::BFloat16 => {
                let specials: &[u64] = if dtype == DType::Float16 {
                    // 0, -0, ∞, -∞, qNaN, sNaN, -NaN, subnormals, max, 1, 1 + ulp, 0.5, 2.5
                    &[
                        0, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe01, 0x0001, 0x83ff, 0x7bff,
                        0xfbff, 0x3c00, 0x3c01, 0x3800, 0x4100,
                    ]
                } else {
                    &[
                        0, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc1, 0x0001, 0x807f, 0x7f7f,
                        0xff7f, 0x3f80, 0x3f81, 0x3f00, 0x4020,
                    ]
                };
                if rng.chance(50) {
                    *rng.pick(specials)
                } else {
                    rng.next_u64() & 0xffff
                }
            }
            _ => {
                let bits = rng.next_u64() as u32;
                let value = match rng.below(8) {
                    // A float16 midpoint (exact in float32): a tie when scale is 1, shift 0.
                    0 => {
                        let k = (bits & 0x7bfe) as u16;
                        let low = half::f16::from_bits(k).to_f32();
                        let high = half::f16::from_bits(k + 1).to_f32();
                        (low + high) / 2.0 * if bits >> 31 == 1 { -1.0 } else { 1.0 }
                    }
                    // A bfloat16 midpoint.
                    1 => f32::from_bits(bits & 0xffff_0000 | 0x8000),
                    // An int8 tie, or near the clamp.
                    2 => (bits % 300) as f32 - 150.5,
                    3 => *rng.pick(&[
                        0.0,
                        -0.0,
                        f32::INFINITY,
                        f32::NEG_INFINITY,
                        f32::NAN,
                        f32::from_bits(0x7f80_0001),
                        f32::from_bits(0xffc0_0001),
                        f32::from_bits(1),
                        f32::from_bits(0x807f_ffff),
                        f32::MAX,
                        f32::MIN,
                        65504.0,
                        65520.0,
                        -65520.0,
                        127.5,
                        -128.5,
                        1.0 + 2f32.powi(-11),
                    ]),
                    _ => f32::from_bits(bits),
                };
                value.to_bits() as u64
            }
        }
    }

    /// A coefficient: mostly plain values that keep ties ties (1, 0, 0.5, ...), sometimes a
    /// special or random bits.
    fn special_coefficient(rng: &mut Rng, pool: &[f32]) -> f32 {
        if rng.chance(15) {
            f32::from_bits(rng.next_u64() as u32)
        } else {
            *rng.pick(pool)
        }
    }

    #[test]
    fn fast_path_matches_the_reference_bit_for_bit() {
        const SCALES: [f32; 16] = [
            1.0,
            1.0,
            1.0,
            -1.0,
            0.0,
            -0.0,
            0.5,
            2.0,
            3.0,
            1e-3,
            1e30,
            1e-40,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.1,
        ];
        const SHIFTS: [f32; 12] = [
            0.0,
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            2e-11,
            1e30,
            1e-45,
            f32::NAN,
            f32::NEG_INFINITY,
            -3.25,
        ];
        const POWERS: [f32; 14] = [
            1.0,
            1.0,
            1.0,
            1.0,
            2.0,
            0.5,
            3.0,
            -1.0,
            0.0,
            -0.5,
            f32::NAN,
            f32::INFINITY,
            1.000_000_1,
            0.333,
        ];
        let mut rng = Rng::new(0x5ca1e);
        let mut elements = 0;
        for input_dtype in DTYPES {
            for output_dtype in DTYPES {
                for mode in [Mode::Uniform, Mode::Channel, Mode::Elementwise] {
                    for _ in 0..25 {
                        // Rank 4-6, the default axis or one leaving 2 or 3 dims after it; dims
                        // mostly short, now and then 0 or a long last axis.
                        let rank = 4 + rng.below(3) as usize;
                        let channel_axis = match rng.below(3) {
                            0 => None,
                            1 => Some(rank as i64 - 3),
                            _ => Some(rank as i64 - 4),
                        };
                        let mut shape: Vec<usize> = (0..rank)
                            .map(|_| match rng.below(20) {
                                0 => 0,
                                1..=6 => 1,
                                _ => 2 + rng.below(3) as usize,
                            })
                            .collect();
                        if rng.chance(30) {
                            shape[rank - 1] = 17 + rng.below(40) as usize;
                        }
                        let volume: usize = shape.iter().product();
                        let bits = (0..volume)
                            .map(|_| special_input(&mut rng, input_dtype))
                            .collect();
                        let input = Tensor::from_bits(input_dtype, shape.clone(), bits);
                        let mut a = attrs(mode, &[], &[], &[]);
                        a.channel_axis = channel_axis;
                        a.output_dtype = Some(output_dtype);
                        let count = scale::plan(&a, &input, Limits::DEFAULT).unwrap().count;
                        let mut list = |pool: &[f32]| {
                            let n = if rng.chance(25) { 0 } else { count };
                            let values: Vec<f32> = (0..n)
                                .map(|_| special_coefficient(&mut rng, pool))
                                .collect();
                            Coefficients::from_values(&values)
                        };
                        a.scale = list(&SCALES);
                        a.shift = list(&SHIFTS);
                        a.power = list(&POWERS);
                        let plan = scale::plan(&a, &input, Limits::DEFAULT).unwrap();
                        let fast = run(&plan, &input).unwrap();
                        let reference = opspec::ops::Plan::Scale(plan).evaluate(&input);
                        assert_eq!(fast, reference, "{a:?} on {input_dtype} {shape:?}");
                        elements += volume;
                    }
                }
            }
        }
        assert!(elements > 100_000, "only {elements} elements compared");
    }

    /// The reference's Scale of `bits` with scale 1 and shift -0 (`x · 1 + -0` is `x`, -0
    /// included): its conversions alone, exact to float32 then rounded to `output`.
    fn converted(input: DType, bits: Vec<u64>, output: DType) -> Vec<u64> {
        let input = Tensor::from_bits(input, vec![1, 1, 1, bits.len()], bits);
        let mut a = attrs(Mode::Uniform, &[1.0], &[-0.0], &[]);
        a.output_dtype = Some(output);
        let out = opspec::ops::Plan::Scale(scale::plan(&a, &input, Limits::DEFAULT).unwrap())
            .evaluate(&input);
        (0..out.len()).map(|i| out.bits(i)).collect()
    }

    #[test]
    fn fast_conversions_match_the_reference() {
        // Decoding: every word of the 8- and 16-bit dtypes (NaN for NaN: payloads never reach
        // an output, which holds the canonical NaN).
        let same = |a: f32, b: u64| {
            (a.is_nan() && f32::from_bits(b as u32).is_nan()) || a.to_bits() as u64 == b
        };
        let bytes: Vec<u64> = (0..=u8::MAX as u64).collect();
        let int8 = converted(DType::Int8, bytes.clone(), DType::Float32);
        for (&word, &reference) in bytes.iter().zip(&int8) {
            assert!(same(Int8::decode(word as u8), reference));
        }
        let halves: Vec<u64> = (0..=u16::MAX as u64).collect();
        let float16 = converted(DType::Float16, halves.clone(), DType::Float32);
        let bfloat16 = converted(DType::BFloat16, halves.clone(), DType::Float32);
        for ((&word, &f16_reference), &bf16_reference) in halves.iter().zip(&float16).zip(&bfloat16)
        {
            assert!(same(Float16::decode(word as u16), f16_reference));
            assert!(same(BFloat16::decode(word as u16), bf16_reference));
        }
        // Encoding: every high half of a float32 with the low halves that decide a rounding
        // (ties to float16 and bfloat16 at every exponent, just below and above them), then
        // random patterns.
        let lows = [
            0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001, 0xe000,
            0xf000, 0xffff,
        ];
        let mut rng = Rng::new(0xf32);
        let patterns: Vec<u64> = (0..=u16::MAX as u32)
            .flat_map(|high| lows.iter().map(move |&low| (high << 16 | low) as u64))
            .chain((0..200_000).map(|_| rng.next_u64() as u32 as u64))
            .collect();
        let int8 = converted(DType::Float32, patterns.clone(), DType::Int8);
        let float16 = converted(DType::Float32, patterns.clone(), DType::Float16);
        let bfloat16 = converted(DType::Float32, patterns.clone(), DType::BFloat16);
        let float32 = converted(DType::Float32, patterns.clone(), DType::Float32);
        for (k, &bits) in patterns.iter().enumerate() {
            let value = f32::from_bits(bits as u32);
            assert_eq!(Int8::encode(value) as u64, int8[k]);
            assert_eq!(Float16::encode(value) as u64, float16[k]);
            assert_eq!(BFloat16::encode(value) as u64, bfloat16[k], "{bits:#x}");
            assert_eq!(Float32::encode(value) as u64, float32[k]);
        }
    }
}
