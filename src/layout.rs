//! Index maps: where each element of an output comes from.
//!
//! Shuffle's transposes, Slice and AsStrided all produce an output whose element at
//! `(y_0, …, y_{n-1})` is the input element at flat offset `base + Σ_i table_i[y_i]`, or a
//! fill value where any axis says "outside". [`AxisGather`] holds those per-axis tables;
//! [`gather`] applies one to a buffer of any width. The plain loop below is the reference.

use crate::tensor::{row_major_strides, Buffer};
use crate::{map_buffer, tensor::Tensor};

/// Per output axis, the flat input offset each coordinate contributes (`None` = fill).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisGather {
    pub base: usize,
    pub tables: Vec<Vec<Option<usize>>>,
}

impl AxisGather {
    /// The output shape: one dim per table.
    pub fn shape(&self) -> Vec<usize> {
        self.tables.iter().map(Vec::len).collect()
    }

    /// A strided view: `out[y] = in[base + Σ y_i · strides_i]`.
    pub fn strided(shape: &[usize], strides: &[usize], base: usize) -> AxisGather {
        let tables = shape
            .iter()
            .zip(strides)
            .map(|(&dim, &stride)| (0..dim).map(|y| Some(y * stride)).collect())
            .collect();
        AxisGather { base, tables }
    }

    /// NumPy transpose of a row-major tensor of `shape`: output axis `i` is input axis `perm[i]`.
    /// `perm` must already be validated as a permutation of `0..shape.len()`.
    pub fn transpose(shape: &[usize], perm: &[usize]) -> AxisGather {
        let strides = row_major_strides(shape);
        let out_shape: Vec<usize> = perm.iter().map(|&axis| shape[axis]).collect();
        let out_strides: Vec<usize> = perm.iter().map(|&axis| strides[axis]).collect();
        AxisGather::strided(&out_shape, &out_strides, 0)
    }
}

/// Builds the output buffer element by element, in row-major order.
pub fn gather(source: &Buffer, plan: &AxisGather, fill_bits: u64) -> Buffer {
    let shape = plan.shape();
    let volume: usize = shape.iter().product();
    let mut index = vec![0usize; shape.len()];
    map_buffer!(source, input => {
        let mut output = Vec::with_capacity(volume);
        for _ in 0..volume {
            let mut offset = Some(plan.base);
            for (table, &y) in plan.tables.iter().zip(&index) {
                offset = offset.zip(table[y]).map(|(a, b)| a + b);
            }
            output.push(match offset {
                Some(offset) => input[offset],
                None => fill_bits as _,
            });
            // Advance the row-major odometer.
            for axis in (0..shape.len()).rev() {
                index[axis] += 1;
                if index[axis] < shape[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
        output
    })
}

/// Applies a plan to a tensor, keeping its dtype.
pub fn gather_tensor(source: &Tensor, plan: &AxisGather, fill_bits: u64) -> Tensor {
    Tensor {
        dtype: source.dtype,
        shape: plan.shape(),
        buffer: gather(&source.buffer, plan, fill_bits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_of_a_matrix() {
        let source = Buffer::W32((0..6).collect());
        let plan = AxisGather::transpose(&[2, 3], &[1, 0]);
        assert_eq!(plan.shape(), vec![3, 2]);
        assert_eq!(
            gather(&source, &plan, 0),
            Buffer::W32(vec![0, 3, 1, 4, 2, 5])
        );
    }

    #[test]
    fn fill_where_a_table_says_outside() {
        let source = Buffer::W8(vec![1, 2]);
        let plan = AxisGather {
            base: 0,
            tables: vec![vec![Some(0), None, Some(1)]],
        };
        assert_eq!(gather(&source, &plan, 9), Buffer::W8(vec![1, 9, 2]));
    }

    #[test]
    fn scalar_and_empty_outputs() {
        let source = Buffer::W16(vec![7]);
        let scalar = AxisGather {
            base: 0,
            tables: vec![],
        };
        assert_eq!(gather(&source, &scalar, 0), Buffer::W16(vec![7]));
        let empty = AxisGather::strided(&[2, 0], &[1, 1], 0);
        assert_eq!(gather(&source, &empty, 0), Buffer::W16(vec![]));
    }
}
