"""Error kinds from MNN's messages: where the message names the rule MNN enforces, the kind of
docs/protocol.md that rule is; anything else has no kind. Each pattern is checked against MNN's
own message by test_errors.py.

MNN prints its messages on standard output (the adapter captures them); the adapter's message is
"MNN <stage>: <what MNN printed, or its exception>", the stage being the MNN op whose output shape
MNN could not compute (Transpose, Reshape) or what the adapter was doing."""

import re

# (op or None for any, pattern, kind)
PATTERNS = [
    # expr.const of the buffer checks its length against the format's size for the shape.
    ("reformat", r"^MNN building the buffer tensor: .*data size does not match each other", "invalid_buffer"),
    # A Transpose whose input is valid and whose output has no shape: the permutation.
    ("shuffle", r"^MNN Transpose: .*getshape: unable to get variable info", "invalid_permutation"),
    # "Reshape error: <input count> -> <product of the dims>": a positive product that differs is
    # the volume rule; a negative one comes from a dim below -1.
    ("shuffle", r"^MNN Reshape: Reshape error: \d+ -> [1-9]\d*\b", "volume_mismatch"),
    ("shuffle", r"^MNN Reshape: Reshape error: \d+ -> -\d+", "invalid_reshape"),
]


def error_kind(text, op):
    """The kind MNN's message `text` names for a case of `op`, or None."""
    for scope, pattern, kind in PATTERNS:
        if (scope is None or scope == op) and re.search(pattern, text):
            return kind
    return None
