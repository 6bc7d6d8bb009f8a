//! Shuffle in one pass: `transpose(first) → reshape → transpose(second)` of a row-major tensor
//! is a single strided view when the reshape of the transposed view needs no copy (NumPy's
//! rule for a reshape without copy, `_attempt_nocopy_reshape` in
//! numpy/core/src/multiarray/shape.c), so the three stages of `opspec::ops::shuffle` become
//! one gather instead of two or three. Same bits as the stages, tested below and in the
//! kernels' tests.

use opspec::ops::shuffle::Plan;
use opspec::tensor::{row_major_strides, Tensor};

use crate::maps::StridedView;

/// Shuffle of a validated plan on the kernels: in one pass, or its stages one after the other
/// when the reshape needs a copy.
pub fn run(input: &Tensor, plan: &Plan) -> Tensor {
    if let Some(out) = one_pass(input, plan) {
        return out;
    }
    let transposed = gather(input, &transpose(&input.shape, &plan.first));
    // A reshape of a row-major tensor keeps its buffer.
    let reshaped = Tensor {
        shape: plan.reshaped.clone(),
        ..transposed
    };
    gather(&reshaped, &transpose(&plan.reshaped, &plan.second))
}

/// Shuffle of a validated plan in one pass on the kernels, or `None` when the reshape needs a
/// copy.
pub fn one_pass(input: &Tensor, plan: &Plan) -> Option<Tensor> {
    let single =
        transpose_reshape_transpose(&input.shape, &plan.first, &plan.reshaped, &plan.second)?;
    Some(gather(input, &single))
}

/// A view applied to a tensor on the kernels, keeping its dtype.
fn gather(input: &Tensor, view: &StridedView) -> Tensor {
    Tensor {
        dtype: input.dtype,
        shape: view.shape.clone(),
        buffer: crate::gather_view(&input.buffer, view),
    }
}

/// NumPy transpose of a row-major tensor of `shape` as a view: output axis `i` is input axis
/// `perm[i]`.
fn transpose(shape: &[usize], perm: &[usize]) -> StridedView {
    let strides = row_major_strides(shape);
    StridedView {
        shape: perm.iter().map(|&axis| shape[axis]).collect(),
        strides: perm.iter().map(|&axis| strides[axis]).collect(),
        base: 0,
    }
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
) -> Option<StridedView> {
    let strides = row_major_strides(shape);
    let view_shape: Vec<usize> = first.iter().map(|&axis| shape[axis]).collect();
    let view_strides: Vec<usize> = first.iter().map(|&axis| strides[axis]).collect();
    let reshaped_strides = reshape_strides(&view_shape, &view_strides, reshaped)?;
    let out_shape: Vec<usize> = second.iter().map(|&axis| reshaped[axis]).collect();
    let out_strides: Vec<usize> = second.iter().map(|&axis| reshaped_strides[axis]).collect();
    Some(StridedView {
        shape: out_shape,
        strides: out_strides,
        base: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use opspec::ops::shuffle::{self, Attrs};
    use opspec::tensor::Limits;

    #[test]
    fn one_pass_equals_the_three_stages() {
        // Every rank-3 permutation pair around a few reshapes, composed or not.
        let input = Tensor::from_bits(opspec::DType::Int32, vec![2, 3, 4], (0..24).collect());
        let mut composed = 0;
        let perms3 = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        for first in perms3 {
            for dims in [vec![6, 4], vec![4, 6], vec![2, 12], vec![24, 1]] {
                for second in [[0, 1], [1, 0]] {
                    let attrs = Attrs {
                        first_transpose: Some(first.to_vec()),
                        reshape_dims: Some(dims.clone()),
                        second_transpose: Some(second.to_vec()),
                        zero_is_placeholder: None,
                    };
                    let plan = shuffle::plan(&attrs, &input.shape, None, Limits::DEFAULT).unwrap();
                    let staged = opspec::ops::Plan::Shuffle(plan.clone()).evaluate(&input);
                    // Composed into one pass where it can be, the stages otherwise.
                    assert_eq!(run(&input, &plan), staged, "{attrs:?}");
                    composed += usize::from(one_pass(&input, &plan).is_some());
                }
            }
        }
        assert!(composed > 0, "no plan was composed");
    }
}
