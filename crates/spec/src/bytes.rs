//! The bytes of a tensor's elements, as the wire protocol carries them and npy files hold them
//! (docs/protocol.md, "Tensors"). (A format's memory image, padding included, is something
//! else: `ops::reformat::Image`.) Not part of the interpreter's rules: the ops
//! work on [`opspec::tensor::Buffer`]s of one word per element.

use opspec::dtype::{DType, Width};
use opspec::tensor::{Buffer, Limits, Tensor};

/// The bytes of a tensor's elements: row-major, little-endian, the dtype's width;
/// bool one byte 0/1; int4 two per byte, element 2k in the low nibble (TensorRT Constant
/// docs), an odd count leaving the last high nibble 0. Used on the wire and in golden files.
pub fn to_le_bytes(tensor: &Tensor) -> Vec<u8> {
    if tensor.dtype == DType::Int4 {
        let nibble = |i: usize| (tensor.bits(i) & 0xf) as u8;
        return (0..tensor.len().div_ceil(2))
            .map(|byte| {
                let low = nibble(2 * byte);
                let high = if 2 * byte + 1 < tensor.len() {
                    nibble(2 * byte + 1)
                } else {
                    0
                };
                low | high << 4
            })
            .collect();
    }
    match &tensor.buffer {
        Buffer::W8(v) => v.clone(),
        Buffer::W16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::W32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Buffer::W64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// The number of bytes [`to_le_bytes`] gives for `elements` elements of `dtype`.
pub fn byte_len(dtype: DType, elements: usize) -> usize {
    match (dtype, dtype.width()) {
        (DType::Int4, _) => elements.div_ceil(2),
        (_, Width::W8) => elements,
        (_, Width::W16) => 2 * elements,
        (_, Width::W32) => 4 * elements,
        (_, Width::W64) => 8 * elements,
    }
}

/// Bytes that do not fit their dtype and shape ([`from_le_bytes`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BytesError {
    /// The shape's element count overflows or exceeds the element budget.
    #[error("{0}")]
    TooLarge(String),
    /// Not the byte count the dtype and shape need.
    #[error("{dtype} {shape:?} needs {expected} bytes, got {actual}")]
    Length {
        dtype: DType,
        shape: Vec<usize>,
        expected: usize,
        actual: usize,
    },
    /// A bool byte other than 0 or 1.
    #[error("bool byte {0} is neither 0 nor 1")]
    Bool(u8),
}

/// Reads the bytes of a tensor's elements back, its shape within `limits`; `Err` says what does
/// not fit (byte count, a bool other than 0/1, a non-zero unused int4 nibble is accepted and
/// ignored).
pub fn from_le_bytes(
    dtype: DType,
    shape: Vec<usize>,
    bytes: &[u8],
    limits: Limits,
) -> Result<Tensor, BytesError> {
    let elements = limits
        .checked_volume(&shape)
        .map_err(|e| BytesError::TooLarge(e.message))?;
    let expected = byte_len(dtype, elements);
    if bytes.len() != expected {
        return Err(BytesError::Length {
            dtype,
            shape,
            expected,
            actual: bytes.len(),
        });
    }
    let buffer = match (dtype, dtype.width()) {
        (DType::Int4, _) => Buffer::W8(
            (0..elements)
                .map(|i| {
                    let nibble = (bytes[i / 2] >> (4 * (i % 2))) & 0xf;
                    ((nibble << 4) as i8 >> 4) as u8 // sign-extend
                })
                .collect(),
        ),
        (DType::Bool, _) => {
            if let Some(bad) = bytes.iter().find(|&&b| b > 1) {
                return Err(BytesError::Bool(*bad));
            }
            Buffer::W8(bytes.to_vec())
        }
        (_, Width::W8) => Buffer::W8(bytes.to_vec()),
        (_, Width::W16) => Buffer::W16(
            bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        ),
        (_, Width::W32) => Buffer::W32(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        ),
        (_, Width::W64) => Buffer::W64(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
        ),
    };
    Ok(Tensor {
        dtype,
        shape,
        buffer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int4_packs_low_nibble_first() {
        // TensorRT Constant docs: [[0..7],[-1..-8],[7..0],[-7..0]] packs to
        // 10 32 54 76 ef cd ab 89 67 45 23 01 a9 cb ed 0f.
        let values: [i128; 32] = [
            0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3, -4, -5, -6, -7, -8, 7, 6, 5, 4, 3, 2, 1, 0, -7, -6,
            -5, -4, -3, -2, -1, 0,
        ];
        let bits = values.iter().map(|&v| DType::Int4.int_to_bits(v)).collect();
        let tensor = Tensor::from_bits(DType::Int4, vec![4, 8], bits);
        let bytes = to_le_bytes(&tensor);
        assert_eq!(
            bytes,
            [
                0x10, 0x32, 0x54, 0x76, 0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01, 0xa9, 0xcb,
                0xed, 0x0f
            ]
        );
        assert_eq!(
            from_le_bytes(DType::Int4, vec![4, 8], &bytes, Limits::DEFAULT),
            Ok(tensor)
        );
    }

    #[test]
    fn bytes_round_trip_and_are_checked() {
        let t = Tensor::from_bits(DType::Float16, vec![2], vec![0x7e01, 0x8000]);
        assert_eq!(to_le_bytes(&t), [0x01, 0x7e, 0x00, 0x80]);
        assert_eq!(
            from_le_bytes(DType::Float16, vec![2], &to_le_bytes(&t), Limits::DEFAULT),
            Ok(t)
        );
        assert_eq!(
            from_le_bytes(DType::Float16, vec![2], &[0; 3], Limits::DEFAULT),
            Err(BytesError::Length {
                dtype: DType::Float16,
                shape: vec![2],
                expected: 4,
                actual: 3
            })
        );
        assert_eq!(
            from_le_bytes(DType::Bool, vec![1], &[2], Limits::DEFAULT),
            Err(BytesError::Bool(2))
        );
        let odd = Tensor::from_bits(DType::Int4, vec![3], vec![0xf9, 0x01, 0x07]);
        assert_eq!(to_le_bytes(&odd), [0x19, 0x07]);
    }
}
