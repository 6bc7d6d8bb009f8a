"""Error kinds from torch's messages: where the message names the rule it enforces, the kind of
docs/protocol.md that rule is; anything else has no kind. Each pattern is checked against torch's
own message by test_errors.py.

The patterns are read with the op the adapter called torch for: a view that cannot reshape its
input is the shuffle's volume rule in a shuffle, and the buffer's length in a reformat (whose
unpacking views the buffer as the layout's storage)."""

import re

# (op or None for any, pattern, kind)
PATTERNS = [
    ("shuffle", r"number of dimensions in the tensor input does not match the length of the desired ordering of dimensions", "invalid_permutation"),
    ("shuffle", r"permute\(\): duplicate dims are not allowed", "invalid_permutation"),
    ("shuffle", r"IndexError: Dimension out of range", "invalid_permutation"),
    ("shuffle", r"shape '\[[-\d, ]*\]' is invalid for input of size \d+", "volume_mismatch"),
    ("shuffle", r"only one dimension can be inferred", "invalid_reshape"),
    ("shuffle", r"invalid shape dimension -\d+", "invalid_reshape"),
    ("shuffle", r"because the unspecified dimension size -1 can be any value and is ambiguous", "indeterminate_wildcard"),
    ("as_strided", r"setStorage: .* are out of bounds for storage of size \d+", "out_of_bounds"),
    # narrow's checks of the span a slice reads (the adapter checks the axes before: the dim torch
    # says is out of range is narrow's start).
    ("slice", r"start \(-?\d+\) \+ length \(-?\d+\) exceeds dimension size \(\d+\)", "out_of_bounds"),
    ("slice", r"IndexError: Dimension out of range \(expected to be in range of \[-?\d+, -?\d+\], but got -?\d+\)", "out_of_bounds"),
    # The fill value: a Python number from a one-element tensor (Tensor.item), which F.pad converts
    # to the input's type.
    ("slice", r"only one element tensors can be converted to Python scalars", "invalid_fill"),
    ("slice", r"value cannot be converted to type \S+ without overflow", "invalid_fill"),
    # F.pad's replicate and reflect kernels refuse an axis of 0 (the adapter pads the axis as the
    # last dim of an (N, C, W) tensor, so a 0 last dim is the padded axis).
    ("slice", r"Expected 2D or 3D \(batch mode\) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: \[1, \d+, 0\]", "empty_dimension"),
    ("slice", r"2D or 3D \(batch mode\) tensor expected for input, but got: \[ torch\.\w+\{1,\d+,0\} \]", "empty_dimension"),
    # The view's storage size overflows int64 (sizes of no negative entry: a negative one fails the
    # same computation, and is no reach).
    ("as_strided", r"Storage size calculation overflowed with sizes=\[[\d, ]*\]", "out_of_bounds"),
    ("as_strided", r"as_strided: Negative strides are not supported", "invalid_stride"),
    ("as_strided", r"mismatch in length of strides and shape", "invalid_stride"),
    ("as_strided", r"invalid storage offset -\d+", "invalid_offset"),
    ("reformat", r"required rank \d tensor to use channels_last(_3d)? format", "invalid_rank"),
    ("reformat", r"shape '\[\d+\]' is invalid for input of size \d+", "invalid_buffer"),
]

# torch has no kernel of that type: the case is unsupported, not rejected.
NOT_IMPLEMENTED = r"\" not implemented for '\w+'"


def error_kind(text, op):
    """The kind torch's message `text` names for a case of `op`, or None."""
    for scope, pattern, kind in PATTERNS:
        if (scope is None or scope == op) and re.search(pattern, text):
            return kind
    return None


def unsupported(text):
    return re.search(NOT_IMPLEMENTED, text) is not None
