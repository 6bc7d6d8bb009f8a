//! Index maps: where each element of an output comes from.
//!
//! Shuffle's transposes, Slice and AsStrided all produce an output whose element at
//! `(y_0, …, y_{n-1})` is the input element at flat offset `base + Σ_i table_i[y_i]`, or a
//! fill value where any axis says "outside". [`AxisGather`] holds those per-axis tables;
//! [`gather`] applies one to a buffer of any width.
//!
//! The plain loops below ([`gather_reference`], [`scatter_reference`]) are the reference: one
//! element at a time, in row-major order. [`gather`] and [`scatter`] give the same bits by the
//! fast paths of [`crate::kernels`] (contiguous runs, tiled transposes), which are tested
//! against these loops on generated plans of every dtype. `OPSPEC_PLAIN_LAYOUT=1` makes
//! [`gather`] and [`scatter`] use the plain loops, to run the suite (or a fuzzing session) on
//! the reference path alone.

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

/// A strided view of a flat buffer, `out[y] = source[base + Σ y_i · strides_i]` (AsStrided),
/// kept as strides: one axis of a view may have millions of coordinates, whose table of
/// offsets was built and scanned again on every call (a tenth of the AsStrided benchmark).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StridedView {
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub base: usize,
}

impl StridedView {
    /// The same map as per-axis tables, for the plain loop.
    pub fn plan(&self) -> AxisGather {
        AxisGather::strided(&self.shape, &self.strides, self.base)
    }
}

/// Builds the view's output buffer: the same result as [`gather_reference`] of
/// [`StridedView::plan`], by the fast paths of [`crate::kernels`].
pub fn gather_view(source: &Buffer, view: &StridedView) -> Buffer {
    if plain_layout() {
        return gather_reference(source, &view.plan(), 0);
    }
    crate::kernels::gather_view(source, view)
}

/// Builds the output buffer: `out[y] = source[base + Σ table_i[y_i]]`, or `fill_bits` where a
/// table says `None`. Same result as [`gather_reference`], by the fast paths of
/// [`crate::kernels`].
pub fn gather(source: &Buffer, plan: &AxisGather, fill_bits: u64) -> Buffer {
    if plain_layout() {
        return gather_reference(source, plan, fill_bits);
    }
    crate::kernels::gather(source, plan, fill_bits)
}

/// Whether `OPSPEC_PLAIN_LAYOUT=1` asks for the plain loops (read once).
fn plain_layout() -> bool {
    static PLAIN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PLAIN.get_or_init(|| std::env::var("OPSPEC_PLAIN_LAYOUT").is_ok_and(|v| v == "1"))
}

/// The reference [`gather`]: builds the output buffer element by element, in row-major order.
pub fn gather_reference(source: &Buffer, plan: &AxisGather, fill_bits: u64) -> Buffer {
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
            advance(&mut index, &shape);
        }
        output
    })
}

/// The inverse movement: a buffer of `len` elements, all `fill_bits`, into which element `y`
/// of `source` (row-major in the plan's shape) is written at `base + Σ table_i[y_i]`; elements
/// where a table says `None` are dropped. The plan's offsets must be distinct (a memory image
/// has one slot per element), and `source` must hold exactly the plan's volume. Same result as
/// [`scatter_reference`], by the fast paths of [`crate::kernels`].
///
/// A format's pack is the scatter of its unpack map: every logical element to its slot, padding
/// left at the fill value, in one pass.
pub fn scatter(source: &Buffer, plan: &AxisGather, len: usize, fill_bits: u64) -> Buffer {
    if plain_layout() {
        return scatter_reference(source, plan, len, fill_bits);
    }
    crate::kernels::scatter(source, plan, len, fill_bits)
}

/// The reference [`scatter`], element by element in the source's row-major order.
pub fn scatter_reference(source: &Buffer, plan: &AxisGather, len: usize, fill_bits: u64) -> Buffer {
    let shape = plan.shape();
    let volume: usize = shape.iter().product();
    assert_eq!(
        source.len(),
        volume,
        "scatter source does not match the plan's shape"
    );
    let mut index = vec![0usize; shape.len()];
    map_buffer!(source, input => {
        let mut output = vec![fill_bits as _; len];
        for &element in input.iter() {
            let mut offset = Some(plan.base);
            for (table, &y) in plan.tables.iter().zip(&index) {
                offset = offset.zip(table[y]).map(|(a, b)| a + b);
            }
            if let Some(offset) = offset {
                output[offset] = element;
            }
            advance(&mut index, &shape);
        }
        output
    })
}

/// The strides of a strided view of `shape` reshaped to `new_shape` without moving any
/// element, or `None` when the reshape needs a copy (NumPy's `_attempt_nocopy_reshape`): each
/// group of old axes that multiplies to a group of new axes must be contiguous in the view.
/// The two shapes must have the same volume.
pub fn reshape_strides(
    shape: &[usize],
    strides: &[usize],
    new_shape: &[usize],
) -> Option<Vec<usize>> {
    let mut new_strides = vec![0; new_shape.len()];
    if shape.iter().product::<usize>() == 0 {
        return (new_shape.iter().product::<usize>() == 0).then_some(new_strides);
    }
    // Length-1 axes can go anywhere: drop the old ones, and give new ones any stride.
    let (old, old_strides): (Vec<usize>, Vec<usize>) = shape
        .iter()
        .zip(strides)
        .filter(|(&dim, _)| dim != 1)
        .map(|(&dim, &stride)| (dim, stride))
        .unzip();
    let (mut oi, mut ni) = (0, 0);
    while oi < old.len() && ni < new_shape.len() {
        let (mut oj, mut nj) = (oi + 1, ni + 1);
        let (mut op, mut np) = (old[oi], new_shape[ni]);
        while op != np {
            if np < op {
                np *= *new_shape.get(nj)?;
                nj += 1;
            } else {
                op *= *old.get(oj)?;
                oj += 1;
            }
        }
        if (oi..oj - 1).any(|k| old_strides[k] != old[k + 1] * old_strides[k + 1]) {
            return None;
        }
        new_strides[nj - 1] = old_strides[oj - 1];
        for k in (ni + 1..nj).rev() {
            new_strides[k - 1] = new_strides[k] * new_shape[k];
        }
        (oi, ni) = (oj, nj);
    }
    Some(new_strides)
}

/// Shuffle's `transpose(first) → reshape → transpose(second)` of a row-major tensor of `shape`
/// as a single plan, when the reshape of the transposed view needs no copy (see
/// [`reshape_strides`]); `None` otherwise (then the first transpose must be materialised).
/// The permutations must be valid and `reshaped` must have the input's volume.
pub fn transpose_reshape_transpose(
    shape: &[usize],
    first: &[usize],
    reshaped: &[usize],
    second: &[usize],
) -> Option<AxisGather> {
    let strides = row_major_strides(shape);
    let view_shape: Vec<usize> = first.iter().map(|&axis| shape[axis]).collect();
    let view_strides: Vec<usize> = first.iter().map(|&axis| strides[axis]).collect();
    let reshaped_strides = reshape_strides(&view_shape, &view_strides, reshaped)?;
    let out_shape: Vec<usize> = second.iter().map(|&axis| reshaped[axis]).collect();
    let out_strides: Vec<usize> = second.iter().map(|&axis| reshaped_strides[axis]).collect();
    Some(AxisGather::strided(&out_shape, &out_strides, 0))
}

/// Steps a row-major odometer: the coordinates after `index` in a tensor of `shape` (back to
/// all zeros after the last).
pub(crate) fn advance(index: &mut [usize], shape: &[usize]) {
    for axis in (0..shape.len()).rev() {
        index[axis] += 1;
        if index[axis] < shape[axis] {
            return;
        }
        index[axis] = 0;
    }
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
