//! Input values of generated cases: provenance, special values, random bit patterns.
//!
//! **Provenance.** Element `i` (row-major) of a provenance tensor holds the `i`-th code of its
//! dtype, so that any element of a layout op's output names the input element it was copied
//! from. The codes are the integers 1, 2, 3, … while the dtype holds them exactly (float32 to
//! 2^24, float16 to 2048, bfloat16 to 256, fp8 to 16, int8 to 127, int4 to 7), then the
//! dtype's remaining bit patterns in increasing order (int8: -128…-1; float16: 0x0001,
//! 0x0002, … skipping those already used). 0 is never a code, so a fill value or a padding
//! slot of 0 is never mistaken for an input element. A dtype has a limited number of codes
//! (bool 1, int4 15, int8/uint8/fp8 255, float16/bfloat16 65535); past that the codes repeat
//! and provenance is **partial**: [`Provenance::decode`] then names the first element holding
//! the value.
//!
//! **Special values** ([`special_bits`]): the values implementations get wrong — ±0,
//! subnormals, the extreme finite values, ±∞, NaNs with and without payload, signalling NaN,
//! integer extremes.

use std::collections::HashMap;

use crate::rng::Rng;
use opspec::dtype::DType;
use opspec::float::FloatFormat;
use opspec::tensor::Tensor;

/// The provenance codes of `n` elements of one dtype, and their inverse.
#[derive(Clone, Debug)]
pub struct Provenance {
    pub dtype: DType,
    codes: Vec<u64>,
    /// How many distinct codes these elements use (they repeat past this).
    pub capacity: usize,
    decode: HashMap<u64, usize>,
}

impl Provenance {
    pub fn new(dtype: DType, n: usize) -> Provenance {
        let distinct = distinct_codes(dtype, n);
        let capacity = distinct.len();
        let codes: Vec<u64> = if capacity == 0 {
            vec![0; n]
        } else {
            (0..n).map(|i| distinct[i % capacity]).collect()
        };
        let decode = distinct.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        Provenance {
            dtype,
            codes,
            capacity,
            decode,
        }
    }

    /// The bit pattern of element `i`.
    pub fn code(&self, i: usize) -> u64 {
        self.codes[i]
    }

    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Whether some codes repeat (more elements than the dtype has codes).
    pub fn is_partial(&self) -> bool {
        self.codes.len() > self.decode.len()
    }

    /// The flat index of the (first) element holding `bits`, if any does.
    pub fn decode(&self, bits: u64) -> Option<usize> {
        self.decode.get(&bits).copied()
    }

    /// A tensor of `shape` holding the codes.
    pub fn tensor(dtype: DType, shape: Vec<usize>) -> Tensor {
        let n = shape.iter().product();
        let provenance = Provenance::new(dtype, n);
        Tensor::from_bits(dtype, shape, provenance.codes)
    }

    /// Whether `tensor` holds exactly the provenance codes of its shape.
    pub fn holds(tensor: &Tensor) -> bool {
        let provenance = Provenance::new(tensor.dtype, tensor.len());
        (0..tensor.len()).all(|i| tensor.bits(i) == provenance.code(i))
    }
}

/// The first `n` distinct codes of `dtype` (fewer if the dtype has fewer).
fn distinct_codes(dtype: DType, n: usize) -> Vec<u64> {
    let mut codes = Vec::with_capacity(n.min(1 << 16));
    // 1, 2, 3, ... while exact.
    let mut k: i128 = 1;
    while codes.len() < n {
        match exact_integer(dtype, k) {
            Some(bits) => codes.push(bits),
            None => break,
        }
        k += 1;
    }
    if codes.len() >= n {
        return codes;
    }
    // Then the other bit patterns, in increasing order.
    let used: std::collections::HashSet<u64> = codes.iter().copied().collect();
    let width = match dtype {
        DType::Bool => return codes,
        DType::Int4 => {
            for value in -8..=-1 {
                if codes.len() >= n {
                    break;
                }
                codes.push(dtype.int_to_bits(value));
            }
            return codes;
        }
        DType::Int8 | DType::UInt8 | DType::Fp8 => 8,
        DType::Float16 | DType::BFloat16 => 16,
        DType::Int32 | DType::Float32 => 32,
        DType::Int64 => 64,
    };
    let mut bits: u64 = 1;
    while codes.len() < n && (width == 64 || bits < 1u64 << width) {
        if !used.contains(&bits) {
            codes.push(bits);
        }
        bits += 1;
    }
    codes
}

/// The bits of the integer `k` in `dtype`, if exactly representable.
fn exact_integer(dtype: DType, k: i128) -> Option<u64> {
    match dtype.float_format() {
        Some(format) => {
            let value = k as f64;
            if format.is_exact(value) {
                format.encode(value).ok()
            } else {
                None
            }
        }
        None => {
            let (low, high) = dtype.int_range()?;
            (low..=high).contains(&k).then(|| dtype.int_to_bits(k))
        }
    }
}

/// The special values of a dtype, as bit patterns, in a fixed order.
pub fn special_bits(dtype: DType) -> Vec<u64> {
    if let Some(format) = dtype.float_format() {
        return float_specials(format);
    }
    let ints: Vec<i128> = match dtype {
        DType::Bool => vec![0, 1],
        DType::Int4 => vec![-8, -7, -1, 0, 1, 6, 7],
        DType::Int8 => vec![-128, -127, -1, 0, 1, 126, 127],
        DType::UInt8 => vec![0, 1, 127, 128, 254, 255],
        DType::Int32 => vec![
            i32::MIN as i128,
            i32::MIN as i128 + 1,
            -1,
            0,
            1,
            i32::MAX as i128 - 1,
            i32::MAX as i128,
        ],
        _ => vec![
            i64::MIN as i128,
            i64::MIN as i128 + 1,
            -1,
            0,
            1,
            i64::MAX as i128 - 1,
            i64::MAX as i128,
        ],
    };
    ints.into_iter().map(|v| dtype.int_to_bits(v)).collect()
}

fn float_specials(format: FloatFormat) -> Vec<u64> {
    let m = format.mantissa_bits;
    let sign = 1u64 << (format.exponent_bits + m);
    let exponent_all = ((1u64 << format.exponent_bits) - 1) << m;
    let mantissa_all = (1u64 << m) - 1;
    let one = format.encode(1.0).expect("1 is finite");
    let half = format.encode(0.5).expect("0.5 is finite");
    let min_subnormal = 1;
    let max_subnormal = mantissa_all;
    let min_normal = 1u64 << m;
    let mut values = vec![
        0,
        sign,
        min_subnormal,
        sign | min_subnormal,
        max_subnormal,
        min_normal,
        sign | min_normal,
        half,
        one,
        sign | one,
    ];
    if format.has_infinity {
        let max_finite = exponent_all - 1;
        let quiet = exponent_all | 1 << (m - 1);
        values.extend([
            max_finite,
            sign | max_finite,
            exponent_all,        // +inf
            sign | exponent_all, // -inf
            quiet,               // canonical quiet NaN
            sign | quiet,
            quiet | 1,        // quiet NaN with a payload
            exponent_all | 1, // signalling NaN
        ]);
    } else {
        // E4M3FN: the largest finite value is S.1111.110; NaN is S.1111.111.
        let max_finite = exponent_all | (mantissa_all - 1);
        values.extend([
            max_finite,
            sign | max_finite,
            exponent_all | mantissa_all,
            sign | exponent_all | mantissa_all,
        ]);
    }
    values
}

/// `n` random bit patterns valid for `dtype` (bool 0/1, int4 in range; floats any pattern,
/// NaNs and infinities included).
pub fn random_bits(dtype: DType, n: usize, rng: &mut Rng) -> Vec<u64> {
    (0..n).map(|_| random_element(dtype, rng)).collect()
}

pub fn random_element(dtype: DType, rng: &mut Rng) -> u64 {
    match dtype {
        DType::Bool => rng.below(2),
        DType::Int4 => dtype.int_to_bits(rng.range(-8, 7) as i128),
        DType::Int8 | DType::UInt8 | DType::Fp8 => rng.below(256),
        DType::Float16 | DType::BFloat16 => rng.below(1 << 16),
        DType::Int32 | DType::Float32 => rng.below(1 << 32),
        DType::Int64 => rng.next_u64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_codes_are_readable_then_distinct() {
        let p = Provenance::new(DType::Float32, 5);
        assert_eq!(p.code(0), 1f32.to_bits() as u64);
        assert_eq!(p.code(4), 5f32.to_bits() as u64);
        assert_eq!(p.decode(3f32.to_bits() as u64), Some(2));
        assert_eq!(p.decode(0), None);

        let p = Provenance::new(DType::Int8, 255);
        assert!(!p.is_partial());
        assert_eq!(DType::Int8.bits_to_int(p.code(126)), 127);
        assert_eq!(DType::Int8.bits_to_int(p.code(127)), -128);
        let p = Provenance::new(DType::Int8, 300);
        assert!(p.is_partial());

        let p = Provenance::new(DType::Fp8, 255);
        let mut seen = std::collections::HashSet::new();
        for i in 0..255 {
            assert!(seen.insert(p.code(i)), "fp8 code {i} repeats");
            assert_ne!(p.code(i), 0);
        }
        assert_eq!(p.code(15), 0x58); // 16.0 is the last integer fp8 holds exactly
        assert_eq!(p.code(16), 0x01); // then the other patterns, from the smallest
        let p = Provenance::new(DType::Int4, 15);
        assert!(!p.is_partial());
        assert_eq!(DType::Int4.bits_to_int(p.code(7)), -8);
        let p = Provenance::new(DType::Bool, 3);
        assert!(p.is_partial());
        assert_eq!(p.code(2), 1);
        let p = Provenance::new(DType::Float16, 2100);
        assert_eq!(p.code(2047), 0x6800); // 2048.0
        assert!(!p.is_partial());
        assert_eq!(p.decode(p.code(2099)), Some(2099));
    }

    #[test]
    fn special_values_cover_the_edges() {
        let f16 = special_bits(DType::Float16);
        for bits in [
            0x0000, 0x8000, 0x0001, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x7c01,
        ] {
            assert!(f16.contains(&bits), "{bits:#x}");
        }
        let fp8 = special_bits(DType::Fp8);
        assert!(fp8.contains(&0x7e) && fp8.contains(&0x7f) && !fp8.contains(&0x78));
        assert!(special_bits(DType::Int8).contains(&0x80));
    }
}
