"""Error kinds from XLA's messages (the shape and type checks of jax.lax and jax.numpy, which
reject a program before XLA compiles it): where the message names the rule it enforces, the kind
of docs/protocol.md that rule is; anything else has no kind. Each pattern is checked against the
engine's own message by test_errors.py.

The patterns are read with the op the adapter wrote (README.md, "Mapping"): a reshape that cannot
reshape its input is the shuffle's volume rule in a shuffle, and the buffer's length in a
reformat (whose only reshape of a case's data is the 1-D buffer into the format's memory image);
a lax.slice index outside the input is a STRICT_BOUNDS coordinate outside it in a slice (the
other modes pad first or gather)."""

from kinds import classifier

# A shape of non-negative dims, as the messages print it: (2, 3) or [2, 3].
DIMS = r"[\[(][\d, ]*[\])]"

# (op or None for any, pattern, kind)
PATTERNS = [
    ("shuffle", r"TypeError: transpose permutation isn't a permutation of operand dimensions", "invalid_permutation"),
    ("shuffle", r"TypeError: can only specify one unknown axis size with a `-1` value", "invalid_reshape"),
    ("shuffle", r"TypeError: reshape new_sizes must all be positive", "invalid_reshape"),
    ("shuffle", r"TypeError: cannot reshape array of shape " + DIMS + r" \(size \d+\) into shape \[[^\]]*-(?:[2-9]|\d{2,})", "invalid_reshape"),
    ("shuffle", r"TypeError: cannot reshape array of shape " + DIMS + r" \(size \d+\) into shape " + DIMS + r" \(size \d+\)", "volume_mismatch"),
    ("shuffle", r"TypeError: cannot reshape array of shape " + DIMS + r" \(size \d+\) into shape .* because the product of specified axis sizes \(\d+\) does not evenly divide \d+", "volume_mismatch"),
    ("reformat", r"TypeError: cannot reshape array of shape \(\d+,\) \(size \d+\) into shape ", "invalid_buffer"),
    ("slice", r"TypeError: slice start_indices must have every element be nonnegative", "out_of_bounds"),
    ("slice", r"TypeError: slice limit_indices must be less than or equal to operand shape", "out_of_bounds"),
    ("slice", r"TypeError: slice limit_indices must have every element be nonnegative", "invalid_size"),
    ("slice", r"TypeError: slice start_indices must have length equal to the number of dimensions of the operand", "rank_mismatch"),
    ("slice", r"IndexError: Cannot do a non-empty jnp\.take\(\) from an empty axis", "empty_dimension"),
    # as_strided gathers from the flattened input: an empty axis is an input with no element.
    ("as_strided", r"IndexError: Cannot do a non-empty jnp\.take\(\) from an empty axis", "empty_dimension"),
    ("slice", r"ValueError: Cannot apply 'reflect' padding to empty axis", "empty_dimension"),
    ("slice", r"ValueError: padding_value must be a scalar", "invalid_fill"),
]


# The kind the engine's message `text` names for a case of `op`, or None.
error_kind = classifier(PATTERNS)
