//! Binary floating-point formats: exact decoding, and rounding of a binary64 value to the
//! nearest representable value, ties to even, with overflow reported instead of turned into ∞.
//!
//! One routine serves float32, float16, bfloat16 and fp8 (E4M3FN). `half`'s `from_f64` rounds
//! twice and may be one ULP off, so it is not used (see rust-notes "half 2.7").
//! fp8 E4M3FN (OCP; TensorRT kFP8, `docs/semantics.md` §6): bias 7, no infinities, NaN only at
//! S.1111.111, largest finite 448.

/// A binary interchange-style format: sign, `exponent_bits`, `mantissa_bits` (stored bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    /// IEEE formats reserve the all-ones exponent for ∞/NaN; E4M3FN uses it for finite
    /// values and keeps only mantissa all-ones as NaN.
    pub has_infinity: bool,
}

/// Why a value cannot be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The rounded magnitude exceeds the largest finite value (or is ∞ in a format without ∞).
    Overflow,
}

impl FloatFormat {
    pub const FLOAT32: FloatFormat = FloatFormat {
        exponent_bits: 8,
        mantissa_bits: 23,
        has_infinity: true,
    };
    pub const FLOAT16: FloatFormat = FloatFormat {
        exponent_bits: 5,
        mantissa_bits: 10,
        has_infinity: true,
    };
    pub const BFLOAT16: FloatFormat = FloatFormat {
        exponent_bits: 8,
        mantissa_bits: 7,
        has_infinity: true,
    };
    pub(crate) const FP8_E4M3FN: FloatFormat = FloatFormat {
        exponent_bits: 4,
        mantissa_bits: 3,
        has_infinity: false,
    };

    pub fn total_bits(self) -> u32 {
        1 + self.exponent_bits + self.mantissa_bits
    }

    fn bias(self) -> i64 {
        (1 << (self.exponent_bits - 1)) - 1
    }

    fn sign_bit(self) -> u64 {
        1 << (self.exponent_bits + self.mantissa_bits)
    }

    fn max_exponent_field(self) -> u64 {
        (1 << self.exponent_bits) - 1
    }

    fn mantissa_mask(self) -> u64 {
        (1 << self.mantissa_bits) - 1
    }

    /// The canonical quiet NaN: sign 0, exponent all ones, top mantissa bit set, rest 0
    /// (E4M3FN has a single NaN code per sign, S.1111.111).
    pub fn canonical_nan(self) -> u64 {
        let exponent = self.max_exponent_field() << self.mantissa_bits;
        if self.has_infinity {
            exponent | 1 << (self.mantissa_bits - 1)
        } else {
            exponent | self.mantissa_mask()
        }
    }

    pub fn is_nan(self, bits: u64) -> bool {
        let exponent = (bits >> self.mantissa_bits) & self.max_exponent_field();
        let mantissa = bits & self.mantissa_mask();
        exponent == self.max_exponent_field()
            && if self.has_infinity {
                mantissa != 0
            } else {
                mantissa == self.mantissa_mask()
            }
    }

    /// The exact value of a bit pattern (every one of these formats embeds in binary64).
    pub fn decode(self, bits: u64) -> f64 {
        let negative = bits & self.sign_bit() != 0;
        let exponent = ((bits >> self.mantissa_bits) & self.max_exponent_field()) as i64;
        let mantissa = bits & self.mantissa_mask();
        let magnitude = if self.is_nan(bits) {
            f64::NAN
        } else if self.has_infinity && exponent as u64 == self.max_exponent_field() {
            f64::INFINITY
        } else if exponent == 0 {
            mantissa as f64 * pow2(1 - self.bias() - self.mantissa_bits as i64)
        } else {
            (mantissa | 1 << self.mantissa_bits) as f64
                * pow2(exponent - self.bias() - self.mantissa_bits as i64)
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// Rounds `value` to the nearest representable value, ties to even, and returns its bits.
    /// NaN becomes the canonical quiet NaN; a magnitude that rounds past the largest finite
    /// value is an error, as is ∞ in a format without infinities.
    pub fn encode(self, value: f64) -> Result<u64, EncodeError> {
        if value.is_nan() {
            return Ok(self.canonical_nan());
        }
        let sign = if value.is_sign_negative() {
            self.sign_bit()
        } else {
            0
        };
        if value.is_infinite() {
            return if self.has_infinity {
                Ok(sign | self.max_exponent_field() << self.mantissa_bits)
            } else {
                Err(EncodeError::Overflow)
            };
        }
        if value == 0.0 {
            return Ok(sign);
        }
        // |value| = significand · 2^scale exactly, with an integer significand < 2^53.
        let raw = value.abs().to_bits();
        let raw_exponent = (raw >> 52) as i64;
        let (significand, scale) = if raw_exponent == 0 {
            (raw & ((1 << 52) - 1), -1074)
        } else {
            (raw & ((1 << 52) - 1) | 1 << 52, raw_exponent - 1075)
        };
        let binade = 63 - significand.leading_zeros() as i64 + scale;
        let min_normal_exponent = 1 - self.bias();
        // The spacing of representable values around |value|: 2^quantum.
        let quantum = binade.max(min_normal_exponent) - self.mantissa_bits as i64;
        let shift = quantum - scale;
        let units = if shift <= 0 {
            significand << (-shift) // exact: the value has no bits below the quantum
        } else {
            round_shift_right_even(significand, shift as u32)
        };
        // units · 2^quantum is the rounded magnitude; re-derive the binade after a carry.
        let implicit = 1u64 << self.mantissa_bits;
        let (exponent_field, mantissa) = if units < implicit {
            (0, units) // subnormal (or zero after rounding)
        } else if units >= implicit << 1 {
            (
                (quantum + self.mantissa_bits as i64 + 1 + self.bias()) as u64,
                0,
            )
        } else {
            (
                (quantum + self.mantissa_bits as i64 + self.bias()) as u64,
                units - implicit,
            )
        };
        let overflow = if self.has_infinity {
            exponent_field >= self.max_exponent_field()
        } else {
            exponent_field > self.max_exponent_field()
                || (exponent_field == self.max_exponent_field() && mantissa == self.mantissa_mask())
        };
        if overflow {
            return Err(EncodeError::Overflow);
        }
        Ok(sign | exponent_field << self.mantissa_bits | mantissa)
    }

    /// Whether `value` is representable exactly (NaN and, where the format has them, ±∞ are).
    pub fn is_exact(self, value: f64) -> bool {
        match self.encode(value) {
            Ok(bits) => {
                let back = self.decode(bits);
                (back.is_nan() && value.is_nan()) || back == value
            }
            Err(_) => false,
        }
    }
}

/// `x / 2^shift` rounded to nearest, ties to even.
fn round_shift_right_even(x: u64, shift: u32) -> u64 {
    if shift >= 64 {
        return 0; // x < 2^53, so x / 2^shift < 1/2
    }
    let quotient = x >> shift;
    let remainder = x & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if remainder > half || (remainder == half && quotient & 1 == 1) {
        quotient + 1
    } else {
        quotient
    }
}

fn pow2(exponent: i64) -> f64 {
    // Exact for the range these formats need (down to 2^-149).
    2f64.powi(exponent as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    const FP8: FloatFormat = FloatFormat::FP8_E4M3FN;

    #[test]
    fn fp8_all_codes_decode_and_re_encode() {
        for bits in 0u64..256 {
            let value = FP8.decode(bits);
            if bits & 0x7f == 0x7f {
                assert!(value.is_nan(), "{bits:#x}");
                continue;
            }
            assert!(value.is_finite(), "{bits:#x} has no infinity in E4M3FN");
            assert_eq!(FP8.encode(value), Ok(bits), "{bits:#x} = {value}");
        }
        assert_eq!(FP8.decode(0x7e), 448.0);
        assert_eq!(FP8.decode(0x01), 2f64.powi(-9)); // smallest subnormal
        assert_eq!(FP8.decode(0x08), 2f64.powi(-6)); // smallest normal
    }

    #[test]
    fn fp8_rounds_every_midpoint_to_even() {
        // Between consecutive positive finite codes, the midpoint goes to the even code.
        for bits in 0u64..0x7e {
            let low = FP8.decode(bits);
            let high = FP8.decode(bits + 1);
            let mid = (low + high) / 2.0;
            let even = if bits & 1 == 0 { bits } else { bits + 1 };
            assert_eq!(FP8.encode(mid), Ok(even), "midpoint {mid}");
            assert_eq!(FP8.encode(-mid), Ok(0x80 | even));
            assert_eq!(FP8.encode(mid * (1.0 - 1e-9)), Ok(bits));
            assert_eq!(FP8.encode(mid * (1.0 + 1e-9)), Ok(bits + 1));
        }
    }

    #[test]
    fn fp8_saturation_boundary() {
        // 448 (mantissa 110, even) is the largest finite; 464, the midpoint to the absent 480
        // (mantissa 111 would be NaN), rounds to even = 448; anything above rounds past it.
        assert_eq!(FP8.encode(464.0), Ok(0x7e));
        assert_eq!(FP8.encode(464.5), Err(EncodeError::Overflow));
        assert_eq!(FP8.encode(1e6), Err(EncodeError::Overflow));
        assert_eq!(FP8.encode(f64::INFINITY), Err(EncodeError::Overflow));
        assert_eq!(FP8.encode(f64::NAN), Ok(0x7f));
        assert_eq!(FP8.encode(-0.0), Ok(0x80));
    }

    #[test]
    fn float32_matches_hardware_conversion() {
        let samples = [
            0.1,
            1.0 / 3.0,
            16777217.0,
            3.4028235e38,
            1.0e-45,
            7.0e-46,
            1.4e-45,
            -2.5e-40,
            123456.789,
        ];
        for value in samples {
            let expected = (value as f32).to_bits() as u64;
            assert_eq!(FloatFormat::FLOAT32.encode(value), Ok(expected), "{value}");
        }
        assert_eq!(
            FloatFormat::FLOAT32.encode(1e40),
            Err(EncodeError::Overflow)
        );
        assert_eq!(
            FloatFormat::FLOAT32.encode(f64::NEG_INFINITY),
            Ok(0xff80_0000)
        );
    }

    #[test]
    fn half_formats_match_half_crate_on_every_f32_exact_input() {
        // half's from_f32 rounds correctly; every f16/bf16 code and its midpoints are f32-exact.
        for bits in 0u64..=0xffff {
            for (format, to_f32) in [
                (
                    FloatFormat::FLOAT16,
                    (|b: u16| f16::from_bits(b).to_f32()) as fn(u16) -> f32,
                ),
                (FloatFormat::BFLOAT16, |b: u16| bf16::from_bits(b).to_f32()),
            ] {
                let value = to_f32(bits as u16);
                if value.is_nan() {
                    assert!(format.is_nan(bits));
                    continue;
                }
                assert_eq!(format.decode(bits), value as f64);
                if value.is_finite() {
                    assert_eq!(format.encode(value as f64), Ok(bits));
                }
            }
        }
        // Midpoints in f16 between 1 and 1 + 2^-10 go to even (1.0).
        let mid = 1.0 + 2f64.powi(-11);
        assert_eq!(FloatFormat::FLOAT16.encode(mid), Ok(0x3c00));
        assert_eq!(
            FloatFormat::FLOAT16.encode(mid),
            Ok(f16::from_f32(mid as f32).to_bits() as u64)
        );
        assert_eq!(
            FloatFormat::FLOAT16.encode(65520.0),
            Err(EncodeError::Overflow)
        );
        assert_eq!(FloatFormat::FLOAT16.encode(65519.0), Ok(0x7bff));
    }

    #[test]
    fn exactness() {
        assert!(FloatFormat::FLOAT32.is_exact(16777216.0));
        assert!(!FloatFormat::FLOAT32.is_exact(16777217.0));
        assert!(FP8.is_exact(448.0));
        assert!(!FP8.is_exact(17.0));
    }
}
