//! Shuffle — TensorRT `IShuffleLayer` (seed 000; `docs/semantics.md` §1).
//!
//! ```text
//! t1  = transpose(input, first_transpose)      out.shape[i] = in.shape[perm[i]]   (§1.2)
//! t2  = reshape(t1, reshape_dims)              skipped when no reshape dims       (§1.3)
//!         0  → t1.shape[i] if zero_is_placeholder, else a zero-length dim
//!        -1  → input volume / product of the other dims (at most one)
//! out = transpose(t2, second_transpose)
//! ```
//! Reshape dims may instead come from input 1, a 1-D int32/int64 tensor (§1.4), with the same
//! meaning of 0 and -1.
//!
//! Errors: an input or a reshape result of more than 8 dims (`invalid_rank`, TensorRT's
//! `Dims64::MAX_DIMS`, §6.1); a transpose that is not a permutation of `0..rank`
//! (`invalid_permutation`, §1.2: observed for the first, \[inferred\] for the second); a dim
//! below -1, two -1s, or a 0 placeholder at a position ≥ the input rank (`invalid_reshape`,
//! §1.3); a volume that changes or that -1 cannot divide (`volume_mismatch`);
//! -1 next to dims whose product is 0 (`indeterminate_wildcard`, §1.3 "indeterminate").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use ndarray::{ArrayView, IxDyn};

use crate::error::{fail, ErrorKind, OpError};
use crate::tensor::{map_buffer, Limits, Tensor};

/// Input positions.
pub(crate) const INPUTS: [&str; 2] = ["input", "reshape_dims"];

/// Shuffle's attributes: first transpose, reshape, second transpose (docs/protocol.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ShuffleAttrs")]
pub struct Attrs {
    /// Permutation applied first (output axis `i` takes input axis `perm[i]`); absent = identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_transpose: Option<Vec<i64>>,
    /// Dims after the reshape; absent = no reshape stage. `0` copies the dim at the same
    /// position (see `zero_is_placeholder`), `-1` is inferred (at most one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reshape_dims: Option<Vec<i64>>,
    /// Permutation applied last, over the reshape result's axes; absent = identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_transpose: Option<Vec<i64>>,
    /// Whether a 0 in the reshape dims copies the input dim (default true) or is a zero-length
    /// dim (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_is_placeholder: Option<bool>,
}

/// The validated shapes of each stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub first: Vec<usize>,
    pub reshaped: Vec<usize>,
    pub second: Vec<usize>,
}

/// Checks the attributes against the input shape and works out every stage's shape.
pub fn plan(
    attrs: &Attrs,
    input_shape: &[usize],
    reshape_input: Option<&Tensor>,
    limits: Limits,
) -> Result<Plan, OpError> {
    super::check_max_rank(input_shape, "shuffle.rank.max", "the input")?;
    let first = permutation(
        attrs.first_transpose.as_deref(),
        input_shape.len(),
        "first_transpose",
        "shuffle.transpose.first-permutation",
    )?;
    let transposed: Vec<usize> = first.iter().map(|&axis| input_shape[axis]).collect();
    let dims = match reshape_input {
        Some(tensor) => Some(shape_tensor_values(tensor)?),
        None => attrs.reshape_dims.clone(),
    };
    if let Some(dims) = &dims {
        if dims.len() > super::MAX_RANK {
            return fail(
                ErrorKind::InvalidRank,
                "shuffle.rank.max",
                format!(
                    "reshape dims {dims:?} give {} dims, TensorRT tensors have at most {}",
                    dims.len(),
                    super::MAX_RANK
                ),
            );
        }
    }
    let reshaped = match dims {
        Some(dims) => resolve_reshape(
            &dims,
            &transposed,
            attrs.zero_is_placeholder.unwrap_or(true),
            limits,
        )?,
        None => transposed,
    };
    let second = permutation(
        attrs.second_transpose.as_deref(),
        reshaped.len(),
        "second_transpose",
        "shuffle.transpose.second-permutation",
    )?;
    Ok(Plan {
        first,
        reshaped,
        second,
    })
}

/// The three stages one after the other, as the layer documents them.
pub(crate) fn evaluate(plan: &Plan, input: &Tensor) -> Tensor {
    let transposed = transpose(input, &plan.first);
    // A reshape of a row-major tensor keeps its buffer.
    let reshaped = Tensor {
        shape: plan.reshaped.clone(),
        ..transposed
    };
    if plan.second.iter().enumerate().all(|(i, &axis)| i == axis) {
        return reshaped;
    }
    transpose(&reshaped, &plan.second)
}

/// NumPy's transpose, `out[y] = in[y_{perm⁻¹}]`: the row-major elements of the input's view
/// with permuted axes (ndarray's `permuted_axes`, which panics unless `perm` is a permutation
/// of `0..rank`: [`plan`] has checked it).
fn transpose(input: &Tensor, perm: &[usize]) -> Tensor {
    let buffer = map_buffer!(&input.buffer, words => {
        let view = ArrayView::from_shape(IxDyn(&input.shape), words);
        let view = view.expect("a tensor's buffer holds its shape");
        view.permuted_axes(IxDyn(perm)).iter().copied().collect()
    });
    Tensor {
        dtype: input.dtype,
        shape: perm.iter().map(|&axis| input.shape[axis]).collect(),
        buffer,
    }
}

/// The reshape dims carried by input 1 (§1.4: a 1-D Int32 or Int64 tensor).
fn shape_tensor_values(tensor: &Tensor) -> Result<Vec<i64>, OpError> {
    match tensor.int_values() {
        Some(values) if tensor.rank() == 1 => Ok(values),
        _ => fail(
            ErrorKind::InvalidInput,
            "shuffle.shape-input.type",
            format!(
                "reshape_dims input must be a 1-D int32 or int64 tensor, got {} of shape {:?}",
                tensor.dtype, tensor.shape
            ),
        ),
    }
}

/// Validates `perm` (absent = identity) as a permutation of `0..rank`; `clause` is the rule of
/// the transpose it is.
fn permutation(
    perm: Option<&[i64]>,
    rank: usize,
    field: &str,
    clause: &'static str,
) -> Result<Vec<usize>, OpError> {
    let Some(perm) = perm else {
        return Ok((0..rank).collect());
    };
    if perm.len() != rank {
        return fail(
            ErrorKind::InvalidPermutation,
            clause,
            format!(
                "{field} {perm:?} has {} entries for a rank-{rank} tensor",
                perm.len()
            ),
        );
    }
    let mut seen = vec![false; rank];
    for &axis in perm {
        if axis < 0 || axis as usize >= rank || seen[axis as usize] {
            return fail(
                ErrorKind::InvalidPermutation,
                clause,
                format!("{field} {perm:?} is not a permutation of 0..{rank}"),
            );
        }
        seen[axis as usize] = true;
    }
    Ok(perm.iter().map(|&axis| axis as usize).collect())
}

/// Resolves 0 and -1 in reshape dims against the shape the reshape stage receives (§1.3).
fn resolve_reshape(
    dims: &[i64],
    input: &[usize],
    zero_is_placeholder: bool,
    limits: Limits,
) -> Result<Vec<usize>, OpError> {
    if let Some(&bad) = dims.iter().find(|&&d| d < -1) {
        return fail(
            ErrorKind::InvalidReshape,
            "shuffle.reshape.below-minus-one",
            format!("reshape dim {bad} in {dims:?} is below -1"),
        );
    }
    if dims.iter().filter(|&&d| d == -1).count() > 1 {
        return fail(
            ErrorKind::InvalidReshape,
            "shuffle.reshape.one-wildcard",
            format!("reshape dims {dims:?} have more than one -1"),
        );
    }
    let past_rank = |position: usize| {
        let message = format!(
            "reshape dim 0 at position {position} copies an input dim, but the input {input:?} has rank {}",
            input.len()
        );
        OpError::new(
            ErrorKind::InvalidReshape,
            "shuffle.reshape.zero-past-rank",
            message,
        )
    };
    let mut resolved = Vec::with_capacity(dims.len());
    for (position, &dim) in dims.iter().enumerate() {
        resolved.push(match dim {
            0 if zero_is_placeholder => *input.get(position).ok_or_else(|| past_rank(position))?,
            -1 => 0, // solved below
            _ => dim as usize,
        });
    }
    let volume = limits.checked_volume(input)?;
    let known: Vec<usize> = dims
        .iter()
        .zip(&resolved)
        .filter(|(&dim, _)| dim != -1)
        .map(|(_, &value)| value)
        .collect();
    // A product that overflows cannot equal the (budgeted) input volume.
    let known_volume = known
        .iter()
        .try_fold(1usize, |acc, &dim| acc.checked_mul(dim))
        .unwrap_or(usize::MAX);
    match dims.iter().position(|&d| d == -1) {
        Some(wildcard) => {
            if known_volume == 0 {
                let message = format!(
                    "-1 in reshape dims {dims:?} is indeterminate: the other dims multiply to 0"
                );
                return fail(
                    ErrorKind::IndeterminateWildcard,
                    "shuffle.reshape.wildcard-indeterminate",
                    message,
                );
            }
            if volume % known_volume != 0 {
                let message = format!(
                    "-1 in reshape dims {dims:?} cannot be solved: {volume} elements are not a multiple of {known_volume}"
                );
                return fail(
                    ErrorKind::VolumeMismatch,
                    "shuffle.reshape.wildcard-divides",
                    message,
                );
            }
            resolved[wildcard] = volume / known_volume;
        }
        None if known_volume != volume => {
            let message = format!(
                "reshape dims {dims:?} resolve to {resolved:?} with {known_volume} elements, the input {input:?} has {volume}"
            );
            return fail(ErrorKind::VolumeMismatch, "shuffle.reshape.volume", message);
        }
        None => {}
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan, then the plain evaluation.
    fn run(attrs: &Attrs, input: &Tensor, reshape: Option<&Tensor>) -> Result<Tensor, OpError> {
        Ok(evaluate(
            &plan(attrs, &input.shape, reshape, Limits::DEFAULT)?,
            input,
        ))
    }

    fn attrs(first: Option<Vec<i64>>, dims: Option<Vec<i64>>) -> Attrs {
        Attrs {
            first_transpose: first,
            reshape_dims: dims,
            ..Attrs::default()
        }
    }

    #[test]
    fn seed_example_shapes() {
        // Seed 000 example 1: (3,4) -> transpose [1,0] -> (4,3) -> reshape [2,6].
        let first = plan(
            &attrs(Some(vec![1, 0]), Some(vec![2, 6])),
            &[3, 4],
            None,
            Limits::DEFAULT,
        )
        .unwrap();
        assert_eq!(first.reshaped, vec![2, 6]);
        // Seed 000 example 2: (2,3,4) -> [1,0,2] -> (3,2,4) -> [2,-1,3] -> (2,4,3).
        let second = plan(
            &attrs(Some(vec![1, 0, 2]), Some(vec![2, -1, 3])),
            &[2, 3, 4],
            None,
            Limits::DEFAULT,
        )
        .unwrap();
        assert_eq!(second.second, vec![0, 1, 2]);
        assert_eq!(second.reshaped, vec![2, 4, 3]);
    }

    #[test]
    fn transpose_moves_elements() {
        let input = Tensor::from_bits(crate::DType::Int32, vec![2, 3], (0..6).collect());
        let out = run(&attrs(Some(vec![1, 0]), None), &input, None).unwrap();
        assert_eq!(out.shape, vec![3, 2]);
        assert_eq!(
            (0..6).map(|i| out.bits(i)).collect::<Vec<_>>(),
            vec![0, 3, 1, 4, 2, 5]
        );
    }

    #[test]
    fn zero_and_wildcard_rules() {
        // Cookbook case_zero: (1,3,4,5) with (0,0,-1) -> (1,3,20).
        assert_eq!(
            resolve_reshape(&[0, 0, -1], &[1, 3, 4, 5], true, Limits::DEFAULT).unwrap(),
            vec![1, 3, 20]
        );
        assert_eq!(
            resolve_reshape(&[1, 3, 4, 0], &[0], false, Limits::DEFAULT).unwrap(),
            vec![1, 3, 4, 0]
        );
        let kind = |dims: &[i64], input: &[usize], zip| {
            resolve_reshape(dims, input, zip, Limits::DEFAULT)
                .unwrap_err()
                .kind
        };
        assert_eq!(kind(&[-1, -1], &[4], true), ErrorKind::InvalidReshape);
        assert_eq!(kind(&[-2, 2], &[4], true), ErrorKind::InvalidReshape);
        assert_eq!(kind(&[0, 0], &[4], true), ErrorKind::InvalidReshape);
        assert_eq!(kind(&[3], &[4], true), ErrorKind::VolumeMismatch);
        assert_eq!(kind(&[3, -1], &[4], true), ErrorKind::VolumeMismatch);
        assert_eq!(
            kind(&[0, -1], &[4], false),
            ErrorKind::IndeterminateWildcard
        );
        // Input volume 0 with non-zero other dims: -1 resolves to 0 ([inferred]).
        assert_eq!(
            resolve_reshape(&[2, -1], &[0, 3], true, Limits::DEFAULT).unwrap(),
            vec![2, 0]
        );
    }

    #[test]
    fn bad_permutations() {
        for perm in [vec![0, 0], vec![0, 2], vec![0], vec![-1, 0]] {
            let err = plan(&attrs(Some(perm), None), &[2, 2], None, Limits::DEFAULT).unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidPermutation);
        }
    }
}
