"""Error kinds from OpenVINO's messages: where the message names the rule it enforces, the kind of
docs/protocol.md that rule is; anything else has no kind. Each pattern is checked against the
engine's own message by test_errors.py."""

from kinds import classifier

# (op or None for any, pattern, kind)
PATTERNS = [
    (None, r"Check 'ov::util::is_valid_axes_order\(axes_order, output_rank\)' failed at \S*transpose_shape_inference", "invalid_permutation"),
    (None, r"Check 'input_order_shape\[0\]\.compatible\(input_rank\.get_max_length\(\)\).*transpose_shape_inference", "invalid_permutation"),
    (None, r"Cannot infer '-1' dimension with zero-size output dimension unless at least one input dimension is also zero-size", "indeterminate_wildcard"),
    (None, r"Output pattern dim\[\d+\] has invalid bounds: -\d+", "invalid_reshape"),
    (None, r"Check 'minus_one_idx == dim::inf_bound' failed at \S*reshape_shape_inference", "invalid_reshape"),
    (None, r"Shape inference input shapes \{[^}]*\} '0' dimension is out of range", "invalid_reshape"),
    (None, r"Check 'pattern_shape_rank\.compatible\(1\)' failed at \S*reshape_shape_inference", "invalid_input"),
    (None, r"Check 'pad_value_shape\.rank\(\)\.compatible\(0\)' failed at \S*pad_shape_inference", "invalid_fill"),
    # The adapter declares a packed buffer, always the model's input 0, 1-D.
    ("reformat", r"Can't set the input tensor with index: 0, because the model input \(shape=\[\?\]\) and the tensor \(shape=\([^)]*\)\) are incompatible", "invalid_buffer"),
]


# The kind the engine's message `text` names for a case of `op`, or None.
error_kind = classifier(PATTERNS)
