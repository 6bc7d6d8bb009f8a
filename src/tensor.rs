//! Tensors: a dtype, a shape, and the elements' bit patterns in row-major order.
//!
//! Elements are held as raw bits in the narrowest word that fits the dtype, so that layout
//! operators are generic over four widths and compare bit for bit (NaN payloads and -0.0
//! included). Arithmetic operators decode through [`DType`].

use crate::dtype::{DType, Width};
use crate::error::{ErrorKind, OpError};

/// The bounds every tensor stays within, given by the caller: [`crate::ops::plan`] checks an
/// output's shape against them before allocating it, and the spec loader, the npy reader and
/// the wire bytes (crate `opspec-spec`) check the shapes they read against the same ones. The
/// library reads no variable: the runner takes them from `--max-elements` /
/// `OPSPEC_MAX_ELEMENTS`, having checked the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest element count of any tensor, input or output.
    pub max_elements: u64,
}

impl Limits {
    /// 2^28 elements, 1 GiB of float32: larger than any case here, small enough that a
    /// mistyped shape fails cleanly instead of exhausting memory.
    pub const DEFAULT: Limits = Limits {
        max_elements: 1 << 28,
    };

    /// The element count of `shape`, checked against overflow and the element budget before
    /// anything is allocated.
    pub fn checked_volume(self, shape: &[usize]) -> Result<usize, OpError> {
        let budget = self.max_elements;
        let mut volume: u64 = 1;
        for &dim in shape {
            volume = volume.checked_mul(dim as u64).ok_or_else(|| {
                OpError::new(
                    ErrorKind::TooLarge,
                    BUDGET_CLAUSE,
                    format!("the element count of shape {shape:?} overflows"),
                )
            })?;
        }
        if volume > budget {
            let message = format!(
                "shape {shape:?} has {volume} elements, over the budget of {budget} (OPSPEC_MAX_ELEMENTS)"
            );
            return Err(OpError::new(ErrorKind::TooLarge, BUDGET_CLAUSE, message));
        }
        Ok(volume as usize)
    }
}

/// The clause of the element budget (`specs/common.clauses.yaml`).
pub(crate) const BUDGET_CLAUSE: &str = "common.budget.too-large";

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// Row-major strides of `shape`, in elements.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    strides
}

/// Element bit patterns, one word per element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Buffer {
    W8(Vec<u8>),
    W16(Vec<u16>),
    W32(Vec<u32>),
    W64(Vec<u64>),
}

/// Applies `$body` to the vector inside a [`Buffer`], whatever its width.
macro_rules! with_buffer {
    ($buffer:expr, $vec:ident => $body:expr) => {
        match $buffer {
            $crate::tensor::Buffer::W8($vec) => $body,
            $crate::tensor::Buffer::W16($vec) => $body,
            $crate::tensor::Buffer::W32($vec) => $body,
            $crate::tensor::Buffer::W64($vec) => $body,
        }
    };
}

/// Like [`with_buffer!`], wrapping a resulting `Vec` of the same width back into a `Buffer`.
macro_rules! map_buffer {
    ($buffer:expr, $vec:ident => $body:expr) => {
        match $buffer {
            $crate::tensor::Buffer::W8($vec) => $crate::tensor::Buffer::W8($body),
            $crate::tensor::Buffer::W16($vec) => $crate::tensor::Buffer::W16($body),
            $crate::tensor::Buffer::W32($vec) => $crate::tensor::Buffer::W32($body),
            $crate::tensor::Buffer::W64($vec) => $crate::tensor::Buffer::W64($body),
        }
    };
}

pub(crate) use map_buffer;

impl Buffer {
    /// Collects bit patterns into a buffer of `width` (bits above the width are dropped).
    pub(crate) fn from_bits(width: Width, bits: impl IntoIterator<Item = u64>) -> Buffer {
        let bits = bits.into_iter();
        match width {
            Width::W8 => Buffer::W8(bits.map(|b| b as u8).collect()),
            Width::W16 => Buffer::W16(bits.map(|b| b as u16).collect()),
            Width::W32 => Buffer::W32(bits.map(|b| b as u32).collect()),
            Width::W64 => Buffer::W64(bits.collect()),
        }
    }

    #[allow(clippy::len_without_is_empty)] // no caller needs one (Tensor::is_empty reads len)
    pub fn len(&self) -> usize {
        with_buffer!(self, v => v.len())
    }

    /// The bit pattern of element `index`.
    #[allow(clippy::unnecessary_cast)] // the cast is needed for every width but 64
    pub fn bits(&self, index: usize) -> u64 {
        with_buffer!(self, v => v[index] as u64)
    }

    /// A buffer of the same width whose element `k` is this buffer's element at the `k`-th
    /// offset, or `fill_bits` where that offset is `None`: `out[k] = self[offsets_k]`.
    pub(crate) fn read_at(
        &self,
        offsets: impl Iterator<Item = Option<usize>>,
        fill_bits: u64,
    ) -> Buffer {
        map_buffer!(self, words => offsets.map(|offset| match offset {
            Some(offset) => words[offset],
            None => fill_bits as _,
        }).collect())
    }

    /// `len` elements of `fill_bits`, into which this buffer's element `k` is written at the
    /// `k`-th offset: `out[offsets_k] = self[k]`.
    pub(crate) fn write_at(
        &self,
        len: usize,
        offsets: impl Iterator<Item = usize>,
        fill_bits: u64,
    ) -> Buffer {
        map_buffer!(self, words => {
            let mut out = vec![fill_bits as _; len];
            for (&word, offset) in words.iter().zip(offsets) {
                out[offset] = word;
            }
            out
        })
    }
}

/// `f(y)` for every coordinate `y` of a tensor of `shape`, in row-major order (none when a
/// dim is 0; one, `[]`, for a scalar).
pub(crate) fn row_major<'a, T>(
    shape: &'a [usize],
    mut f: impl FnMut(&[usize]) -> T + 'a,
) -> impl Iterator<Item = T> + 'a {
    let volume: usize = shape.iter().product();
    let mut y = vec![0usize; shape.len()];
    (0..volume).map(move |_| {
        let value = f(&y);
        // The next coordinate: an odometer, the last axis fastest.
        for axis in (0..shape.len()).rev() {
            y[axis] += 1;
            if y[axis] < shape[axis] {
                break;
            }
            y[axis] = 0;
        }
        value
    })
}

/// A dense row-major tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub buffer: Buffer,
}

impl Tensor {
    /// A tensor from bit patterns; the count must match the shape.
    pub fn from_bits(dtype: DType, shape: Vec<usize>, bits: Vec<u64>) -> Tensor {
        assert_eq!(
            shape.iter().product::<usize>(),
            bits.len(),
            "bit count does not match shape {shape:?}"
        );
        Tensor {
            dtype,
            shape,
            buffer: Buffer::from_bits(dtype.width(), bits),
        }
    }

    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buffer.len() == 0
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn bits(&self, index: usize) -> u64 {
        self.buffer.bits(index)
    }

    /// The values of an integer tensor (shape-tensor inputs: reshape dims, start, size, ...).
    pub fn int_values(&self) -> Option<Vec<i64>> {
        matches!(self.dtype, DType::Int32 | DType::Int64).then(|| {
            (0..self.len())
                .map(|i| self.dtype.bits_to_int(self.bits(i)) as i64)
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_overflow_and_budget_are_errors() {
        let limits = Limits::DEFAULT;
        let err = limits.checked_volume(&[1 << 40, 1 << 40]).unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooLarge);
        let err = limits.checked_volume(&[1 << 20, 1 << 20]).unwrap_err();
        assert!(err.message.contains("budget"), "{}", err.message);
        assert_eq!(limits.checked_volume(&[3, 0, 5]).unwrap(), 0);
        assert_eq!(limits.checked_volume(&[]).unwrap(), 1);
        // The budget is the caller's: two at once in one process.
        let small = Limits { max_elements: 6 };
        assert_eq!(small.checked_volume(&[2, 3]).unwrap(), 6);
        let err = small.checked_volume(&[7]).unwrap_err();
        assert_eq!(
            err.message,
            "shape [7] has 7 elements, over the budget of 6 (OPSPEC_MAX_ELEMENTS)"
        );
        assert_eq!(limits.checked_volume(&[7]).unwrap(), 7);
    }

    #[test]
    fn strides_are_row_major() {
        assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(row_major_strides(&[]), Vec::<usize>::new());
    }

    #[test]
    fn int_values_only_for_shape_tensor_types() {
        let dims = Tensor::from_bits(DType::Int64, vec![2], vec![u64::MAX, 6]);
        assert_eq!(dims.int_values(), Some(vec![-1, 6]));
        let floats = Tensor::from_bits(DType::Float32, vec![1], vec![0]);
        assert_eq!(floats.int_values(), None);
    }
}
