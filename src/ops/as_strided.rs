//! AsStrided — Huawei Ascend ATB `AsStridedOperation` (seed 001; `docs/semantics.md` §5).
//!
//! ```text
//! out[i_0, …, i_k] = flat(input)[offset[0] + Σ_j i_j · stride[j]]     out.shape = size
//! ```
//! `flat` is the row-major flattening of the input; strides and offset count elements.
//! ATB checks every tensor before the attributes (`OperationBase::InferShapeCheck` →
//! `TensorCheck::CheckTensorShape`): the input has 1 to 8 dims (`invalid_rank`) and at least one
//! element (`empty_dimension`). Then the attributes (seed 001 "规格约束", ATB `ParamCheck`):
//! - `size`: at most 8 entries, each > 0 (`invalid_size`);
//! - `stride`: as many entries as `size`, each ≥ 0 (`invalid_stride`); 0 broadcasts;
//! - `offset`: exactly one entry, ≥ 0 (`invalid_offset`);
//! - the last element read, `offset + Σ (size_j - 1)·stride_j`, must be inside the input
//!   (`out_of_bounds`, ATB "over max length").
//!
//! `size = []` with `stride = []` passes `ParamCheck`; its rank-0 output then fails the same
//! tensor check at Setup (`invalid_rank`). docs/semantics.md §5.
//!
//! Data types: float16 and int64 only, as ATB lists them (`atb_ops_info.ini`); every other
//! dtype is rejected with `unsupported_dtype`, as ATB rejects float32. The suite encodes the
//! vendor's contract rather than extending it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use ndarray::{ArrayView, IxDyn, ShapeBuilder};

use crate::dtype::DType;
use crate::error::{fail, ErrorKind, OpError};
use crate::tensor::{map_buffer, Limits, Tensor};

/// Input positions.
pub(crate) const INPUTS: [&str; 1] = ["input"];

/// The dtypes ATB accepts.
pub const DTYPES: [DType; 2] = [DType::Float16, DType::Int64];

/// ATB's `MAX_DIM`.
const MAX_RANK: usize = 8;

/// AsStrided's attributes: `out[i] = flat(input)[offset + Σ i_j·stride_j]` (docs/protocol.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "AsStridedAttrs")]
pub struct Attrs {
    /// The output shape: 1 to 8 entries, each > 0.
    pub size: Vec<i64>,
    /// Element step of each output axis in the flattened input: as many entries as `size`,
    /// each >= 0 (0 repeats an element).
    pub stride: Vec<i64>,
    /// Exactly one entry, >= 0: the flat index of the first element read.
    pub offset: Vec<i64>,
}

/// A checked view: `out[y] = flat(input)[offset + Σ y_j · strides_j]`, `out.shape = shape`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub offset: usize,
}

/// Checks the input, then the attributes against it (each error citing its clause).
pub fn plan(attrs: &Attrs, input: &Tensor, limits: Limits) -> Result<Plan, OpError> {
    if input.rank() == 0 || input.rank() > MAX_RANK {
        return fail(
            ErrorKind::InvalidRank,
            "as_strided.tensor.rank",
            format!(
                "the input has rank {}, ATB tensors have 1 to {MAX_RANK} dims",
                input.rank()
            ),
        );
    }
    if input.is_empty() {
        return fail(
            ErrorKind::EmptyDimension,
            "as_strided.tensor.non-empty",
            format!("the input of shape {:?} has no element", input.shape),
        );
    }
    if !DTYPES.contains(&input.dtype) {
        return fail(
            ErrorKind::UnsupportedDtype,
            "as_strided.dtype.float16-int64",
            format!("AsStrided accepts float16 and int64, not {}", input.dtype),
        );
    }
    let Attrs {
        size,
        stride,
        offset,
    } = attrs;
    if size.len() > MAX_RANK {
        return fail(
            ErrorKind::InvalidSize,
            "as_strided.size.count",
            format!("size {size:?} must have at most {MAX_RANK} entries"),
        );
    }
    if let Some(bad) = size.iter().find(|&&s| s <= 0) {
        return fail(
            ErrorKind::InvalidSize,
            "as_strided.size.positive",
            format!("size {size:?} has entry {bad}, entries must be > 0"),
        );
    }
    if stride.len() != size.len() {
        return fail(
            ErrorKind::InvalidStride,
            "as_strided.stride.count",
            format!(
                "stride {stride:?} has {} entries, size has {}",
                stride.len(),
                size.len()
            ),
        );
    }
    if let Some(bad) = stride.iter().find(|&&s| s < 0) {
        return fail(
            ErrorKind::InvalidStride,
            "as_strided.stride.non-negative",
            format!("stride {stride:?} has entry {bad}, entries must be >= 0"),
        );
    }
    let &[offset] = offset.as_slice() else {
        return fail(
            ErrorKind::InvalidOffset,
            "as_strided.offset.count",
            format!("offset {offset:?} must have exactly one entry"),
        );
    };
    if offset < 0 {
        return fail(
            ErrorKind::InvalidOffset,
            "as_strided.offset.non-negative",
            format!("offset {offset} must be >= 0"),
        );
    }
    // i128 cannot overflow here: at most 8 products of two i64 values plus one i64.
    let last: i128 = offset as i128
        + size
            .iter()
            .zip(stride)
            .map(|(&s, &t)| (s as i128 - 1) * t as i128)
            .sum::<i128>();
    let elements = input.len() as i128;
    if last >= elements {
        return fail(
            ErrorKind::OutOfBounds,
            "as_strided.bounds.reach",
            format!("the view reads flat index {last}, the input has {elements} elements"),
        );
    }
    if size.is_empty() {
        return fail(
            ErrorKind::InvalidRank,
            "as_strided.tensor.rank",
            format!("size [] gives a rank-0 output, ATB tensors have 1 to {MAX_RANK} dims"),
        );
    }
    let shape: Vec<usize> = size.iter().map(|&s| s as usize).collect();
    limits.checked_volume(&shape)?;
    let strides: Vec<usize> = stride.iter().map(|&s| s as usize).collect();
    Ok(Plan {
        shape,
        strides,
        offset: offset as usize,
    })
}

/// The formula as it reads: a read-only view of the flat input from `offset` with the given
/// shape and strides (ndarray lets a read-only view's elements alias, which stride 0 and
/// overlapping windows need), read in row-major order. [`plan`] has checked that the view stays
/// inside the input.
pub(crate) fn evaluate(plan: &Plan, input: &Tensor) -> Tensor {
    let buffer = if plan.shape.contains(&0) {
        // No element to read (ndarray would still check the empty view's reach).
        map_buffer!(&input.buffer, _words => Vec::new())
    } else {
        map_buffer!(&input.buffer, words => {
            let shape = IxDyn(&plan.shape).strides(IxDyn(&plan.strides));
            let strided = ArrayView::from_shape(shape, &words[plan.offset..]);
            strided.expect("the plan keeps the view inside the input").iter().copied().collect()
        })
    };
    Tensor {
        dtype: input.dtype,
        shape: plan.shape.clone(),
        buffer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan, then the plain evaluation.
    fn run(attrs: &Attrs, input: &Tensor) -> Result<Tensor, OpError> {
        Ok(evaluate(&plan(attrs, input, Limits::DEFAULT)?, input))
    }

    fn seed_input() -> Tensor {
        Tensor::from_bits(DType::Int64, vec![3, 3], (1..=9).collect())
    }

    fn attrs(size: &[i64], stride: &[i64], offset: &[i64]) -> Attrs {
        Attrs {
            size: size.to_vec(),
            stride: stride.to_vec(),
            offset: offset.to_vec(),
        }
    }

    #[test]
    fn seed_examples() {
        // Seed 001: size [2,2], stride [2,3]: offset 0 -> [[1,4],[3,6]]; offset 2 -> [[3,6],[5,8]].
        let out = run(&attrs(&[2, 2], &[2, 3], &[0]), &seed_input()).unwrap();
        assert_eq!(
            (0..4).map(|i| out.bits(i)).collect::<Vec<_>>(),
            vec![1, 4, 3, 6]
        );
        let out = run(&attrs(&[2, 2], &[2, 3], &[2]), &seed_input()).unwrap();
        assert_eq!(
            (0..4).map(|i| out.bits(i)).collect::<Vec<_>>(),
            vec![3, 6, 5, 8]
        );
    }

    #[test]
    fn views_whose_elements_alias() {
        // Flat input 1..=9. Stride 0 repeats a row: offset 4 -> [[5,6],[5,6],[5,6]]; strides
        // [1,1] give overlapping windows: [[1,2],[2,3],[3,4]].
        let bits = |out: Tensor| (0..out.len()).map(|i| out.bits(i)).collect::<Vec<_>>();
        let broadcast = run(&attrs(&[3, 2], &[0, 1], &[4]), &seed_input()).unwrap();
        assert_eq!(bits(broadcast), vec![5, 6, 5, 6, 5, 6]);
        let windows = run(&attrs(&[3, 2], &[1, 1], &[0]), &seed_input()).unwrap();
        assert_eq!(bits(windows), vec![1, 2, 2, 3, 3, 4]);
    }

    #[test]
    fn bounds_are_checked_on_the_last_element() {
        // Last read = 2 + 1*2 + 1*3 = 7 < 9: valid; offset 4 reads index 9: out of bounds.
        assert!(plan(
            &attrs(&[2, 2], &[2, 3], &[2]),
            &seed_input(),
            Limits::DEFAULT
        )
        .is_ok());
        let err = plan(
            &attrs(&[2, 2], &[2, 3], &[4]),
            &seed_input(),
            Limits::DEFAULT,
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::OutOfBounds);
    }

    #[test]
    fn parameter_rules() {
        let kind = |a: Attrs| plan(&a, &seed_input(), Limits::DEFAULT).unwrap_err().kind;
        // ATB: size [] with stride [] passes ParamCheck, its rank-0 output fails the tensor
        // check; with stride [1, 0] (csv wrongParam9) it fails the length check.
        assert_eq!(kind(attrs(&[], &[], &[0])), ErrorKind::InvalidRank);
        assert_eq!(kind(attrs(&[], &[1, 0], &[0])), ErrorKind::InvalidStride);
        assert_eq!(kind(attrs(&[1; 9], &[0; 9], &[0])), ErrorKind::InvalidSize);
        assert_eq!(kind(attrs(&[0], &[1], &[0])), ErrorKind::InvalidSize);
        assert_eq!(kind(attrs(&[2], &[1, 1], &[0])), ErrorKind::InvalidStride);
        assert_eq!(kind(attrs(&[2], &[-1], &[0])), ErrorKind::InvalidStride);
        assert_eq!(kind(attrs(&[2], &[1], &[0, 0])), ErrorKind::InvalidOffset);
        assert_eq!(kind(attrs(&[2], &[1], &[-1])), ErrorKind::InvalidOffset);
        // The input is checked first: rank 1 to 8, at least one element.
        let input = |shape: Vec<usize>| {
            let n = shape.iter().product();
            plan(
                &attrs(&[1], &[1], &[0]),
                &Tensor::from_bits(DType::Int64, shape, vec![7; n]),
                Limits::DEFAULT,
            )
        };
        assert_eq!(input(vec![]).unwrap_err().kind, ErrorKind::InvalidRank);
        assert_eq!(input(vec![1; 9]).unwrap_err().kind, ErrorKind::InvalidRank);
        assert_eq!(
            input(vec![2, 0]).unwrap_err().kind,
            ErrorKind::EmptyDimension
        );
        assert!(input(vec![1; 8]).is_ok());
        let float = Tensor::from_bits(DType::Float32, vec![1], vec![0]);
        assert_eq!(
            plan(&attrs(&[1], &[1], &[0]), &float, Limits::DEFAULT)
                .unwrap_err()
                .kind,
            ErrorKind::UnsupportedDtype
        );
    }
}
