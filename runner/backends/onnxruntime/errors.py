"""Error kinds from ONNX Runtime's messages: where the message names the rule it enforces, the
kind of docs/protocol.md that rule is; anything else has no kind. Each pattern is checked against
the engine's own message by test_errors.py.

The patterns are read with the op the adapter wrote: a Reshape that cannot reshape its input is
the shuffle's volume rule in a shuffle, and the buffer's length in a reformat (whose first Reshape
turns the buffer into the format's memory image)."""

from kinds import classifier

# (op or None for any, pattern, kind)
PATTERNS = [
    (None, r"Op \(Transpose\) \[TypeInferenceError\] Invalid attribute perm", "invalid_permutation"),
    (None, r"Attribute perm for Transpose has repeated value", "invalid_permutation"),
    (None, r"running Transpose node\..*perm size", "invalid_permutation"),
    (None, r"Op \(Reshape\) \[ShapeInferenceError\] Invalid Target shape product of 0\. Product cannot be 0 in combination with -1", "indeterminate_wildcard"),
    (None, r"Op \(Reshape\) \[ShapeInferenceError\] Invalid dimension value: -\d+", "invalid_reshape"),
    (None, r"Op \(Reshape\) \[ShapeInferenceError\] Target shape may not have multiple -1 dimensions", "invalid_reshape"),
    (None, r"Op \(Reshape\) \[ShapeInferenceError\] Invalid position of 0", "invalid_reshape"),
    # Run time: the element counts differ (a -1 that cannot be solved fails another check,
    # `size != 0 && (input_shape_size % size) == 0`, which says neither whether the other dims
    # multiply to 0 nor whether they do not divide the count: no kind).
    ("shuffle", r"running Reshape node\..*input_shape_size == requested_shape_size was false", "volume_mismatch"),
    ("reformat", r"running Reshape node\. Name:'buffer'.*input_shape_size == requested_shape_size was false", "invalid_buffer"),
    # The adapter declares a packed buffer, always its first input v1, 1-D.
    ("reformat", r"Invalid rank for input: v1 Got: \d+ Expected: 1\b", "invalid_buffer"),
    (None, r"running Slice node\..*'axes' has duplicates", "invalid_axes"),
    (None, r"running Slice node\..*'axes' has an axis outside of the tensor dimension count", "invalid_axes"),
    (None, r"running Pad node\..*Cannot use '(edge|reflect)' mode to pad dimension with a value of 0", "empty_dimension"),
    (None, r"running Gather node\..*indices element out of data bounds", "out_of_bounds"),
]


# The kind the engine's message `text` names for a case of `op`, or None.
error_kind = classifier(PATTERNS)
