//! The data types the operators list, and how each is held in memory.
//!
//! Source: TensorRT `DataType` (NvInferRuntimeBase.h 10.16) and the operator pages; see
//! `docs/semantics.md` §6. Every element is held as its raw bit pattern in the narrowest unsigned
//! word that fits (see [`crate::tensor::Buffer`]), so layout operators move bits unchanged.
//! int4 is held one element per byte (sign-extended) and packed two per byte only at the
//! edges (wire protocol, golden files).

use std::fmt;

use crate::float::FloatFormat;

/// A tensor element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Int4,
    Int8,
    UInt8,
    Int32,
    Int64,
    /// FP8 E4M3FN: bias 7, no infinities, NaN = S.1111.111, largest finite 448.
    Fp8,
    Float16,
    BFloat16,
    Float32,
}

/// The width of the word an element is held in (a [`crate::tensor::Buffer`] variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    W8,
    W16,
    W32,
    W64,
}

impl DType {
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::Int4,
        DType::Int8,
        DType::UInt8,
        DType::Int32,
        DType::Int64,
        DType::Fp8,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
    ];

    /// The name used in spec files and on the wire.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int4 => "int4",
            DType::Int8 => "int8",
            DType::UInt8 => "uint8",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::Fp8 => "fp8",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The width of the word an element is held in.
    pub fn width(self) -> Width {
        match self {
            DType::Bool | DType::Int4 | DType::Int8 | DType::UInt8 | DType::Fp8 => Width::W8,
            DType::Float16 | DType::BFloat16 => Width::W16,
            DType::Int32 | DType::Float32 => Width::W32,
            DType::Int64 => Width::W64,
        }
    }

    /// The binary floating-point format of a float type, `None` for the others.
    pub fn float_format(self) -> Option<FloatFormat> {
        match self {
            DType::Fp8 => Some(FloatFormat::FP8_E4M3FN),
            DType::Float16 => Some(FloatFormat::FLOAT16),
            DType::BFloat16 => Some(FloatFormat::BFLOAT16),
            DType::Float32 => Some(FloatFormat::FLOAT32),
            _ => None,
        }
    }

    /// Inclusive range of an integer type (bool counts as 0..=1), `None` for floats.
    pub fn int_range(self) -> Option<(i128, i128)> {
        match self {
            DType::Bool => Some((0, 1)),
            DType::Int4 => Some((-8, 7)),
            DType::Int8 => Some((-128, 127)),
            DType::UInt8 => Some((0, 255)),
            DType::Int32 => Some((i32::MIN as i128, i32::MAX as i128)),
            DType::Int64 => Some((i64::MIN as i128, i64::MAX as i128)),
            _ => None,
        }
    }

    /// Encodes an in-range integer as the element's bit pattern.
    pub fn int_to_bits(self, value: i128) -> u64 {
        match self.width() {
            Width::W8 => (value as i8) as u8 as u64,
            Width::W16 => (value as i16) as u16 as u64,
            Width::W32 => (value as i32) as u32 as u64,
            Width::W64 => value as i64 as u64,
        }
    }

    /// Decodes an integer element's bit pattern (sign-extending signed types).
    pub fn bits_to_int(self, bits: u64) -> i128 {
        match self {
            DType::Bool | DType::UInt8 => bits as u8 as i128,
            DType::Int4 | DType::Int8 => bits as u8 as i8 as i128,
            DType::Int32 => bits as u32 as i32 as i128,
            _ => bits as i64 as i128,
        }
    }

    /// A human-readable rendering of one element, exact for every bit pattern.
    pub fn format_bits(self, bits: u64) -> String {
        match self.float_format() {
            Some(format) => {
                let value = format.decode(bits);
                let hex = format!(
                    "0x{:0width$x}",
                    bits,
                    width = format.total_bits() as usize / 4
                );
                if value.is_nan() {
                    format!("nan({hex})")
                } else if value == 0.0 && value.is_sign_negative() {
                    format!("-0.0({hex})")
                } else {
                    // Every value of these formats is a float32: print the shortest decimal
                    // that reads back to it in float32, not binary64's longer one.
                    format!("{:?}", value as f32)
                }
            }
            None => match self {
                DType::Bool => (bits != 0).to_string(),
                _ => self.bits_to_int(bits).to_string(),
            },
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for dtype in DType::ALL {
            assert_eq!(DType::from_name(dtype.name()), Some(dtype));
        }
        assert_eq!(DType::from_name("float64"), None);
    }

    #[test]
    fn signed_integers_sign_extend() {
        assert_eq!(DType::Int4.bits_to_int(DType::Int4.int_to_bits(-8)), -8);
        assert_eq!(DType::Int8.bits_to_int(0x80), -128);
        assert_eq!(DType::UInt8.bits_to_int(0x80), 128);
        assert_eq!(DType::Int64.bits_to_int(u64::MAX), -1);
    }

    #[test]
    fn formatting_shows_nan_payload_and_negative_zero() {
        assert_eq!(DType::Float16.format_bits(0x7e01), "nan(0x7e01)");
        assert_eq!(DType::Float16.format_bits(0x8000), "-0.0(0x8000)");
        assert_eq!(DType::Fp8.format_bits(0x7e), "448.0");
        assert_eq!(DType::Bool.format_bits(1), "true");
    }
}
