#!/usr/bin/python3
"""Each message pattern of errors.py against torch's own message: the torch call that the adapter
makes, rejected for the rule, whose message must give the pattern's kind (and a message of another
rule must not). Run with the interpreter of engine.toml; exit 0 when every pattern holds."""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from errors import NOT_IMPLEMENTED, PATTERNS, error_kind, unsupported  # noqa: E402


def message(call):
    """torch's message for `call`, as the adapter words it (backend.py, run_tensors)."""
    try:
        call()
    except (RuntimeError, IndexError, ValueError, OverflowError) as e:
        return f"torch: {type(e).__name__}: {' '.join(str(e).split())[:400]}"
    raise AssertionError("the call was not rejected")


x6 = torch.arange(6.0)
x23 = x6.reshape(2, 3)
CASES = [
    # (op of the case, message, expected kind)
    ("shuffle", message(lambda: x23.permute([0])), "invalid_permutation"),
    ("shuffle", message(lambda: x23.permute([0, 0])), "invalid_permutation"),
    ("shuffle", message(lambda: x23.permute([0, 2])), "invalid_permutation"),
    ("shuffle", message(lambda: x6.reshape([4, 2])), "volume_mismatch"),
    ("shuffle", message(lambda: x6.reshape([-1, -1])), "invalid_reshape"),
    ("shuffle", message(lambda: x6.reshape([-2, 3])), "invalid_reshape"),
    ("shuffle", message(lambda: torch.empty(0, 3).reshape([0, -1])), "indeterminate_wildcard"),
    ("slice", message(lambda: x6.narrow(0, 5, 2)), "out_of_bounds"),
    ("slice", message(lambda: x6.narrow(0, 7, 1)), "out_of_bounds"),
    ("slice", message(lambda: torch.zeros(2).item()), "invalid_fill"),
    ("slice", message(lambda: F.pad(torch.zeros(1, 1, 2, dtype=torch.int8), (1, 1), value=128)), "invalid_fill"),
    ("slice", message(lambda: F.pad(torch.zeros(1, 1, 2, dtype=torch.float16), (1, 1), value=1e5)), "invalid_fill"),
    ("slice", message(lambda: F.pad(torch.zeros(1, 2, 0), (1, 1), mode="replicate")), "empty_dimension"),
    ("slice", message(lambda: F.pad(torch.zeros(1, 2, 0), (1, 1), mode="reflect")), "empty_dimension"),
    # an empty tensor whose padded axis is not empty: no kind
    ("slice", message(lambda: F.pad(torch.zeros(1, 0, 3), (1, 1), mode="replicate")), None),
    ("slice", message(lambda: F.pad(torch.zeros(1, 0, 3), (1, 1), mode="reflect")), None),
    ("as_strided", message(lambda: torch.as_strided(x6, [2], [1], 5)), "out_of_bounds"),
    ("as_strided", message(lambda: torch.as_strided(x6, [2, 2], [1 << 62, 1 << 62], 0)), "out_of_bounds"),
    ("as_strided", message(lambda: torch.as_strided(x6, [2], [-1], 1)), "invalid_stride"),
    ("as_strided", message(lambda: torch.as_strided(x6, [2], [1, 1], 1)), "invalid_stride"),
    ("as_strided", message(lambda: torch.as_strided(x6, [2], [1], -1)), "invalid_offset"),
    ("reformat", message(lambda: x23.reshape(1, 2, 3).contiguous(memory_format=torch.channels_last)), "invalid_rank"),
    ("reformat", message(lambda: torch.empty([2, 3], memory_format=torch.channels_last_3d)), "invalid_rank"),
    ("reformat", message(lambda: x6.view([5])), "invalid_buffer"),
    # another rule, or another op's: no kind
    ("as_strided", message(lambda: torch.as_strided(x6, [-2], [1], 1)), None),
    ("reformat", message(lambda: x23.view([5, 2])), None),
    ("slice", message(lambda: x6.reshape([4, 2])), None),
    ("slice", message(lambda: F.pad(torch.empty(1, 1, 0), (1, 1), mode="circular")), None),
]

# A missing kernel is unsupported, not a rejection.
KERNELS = [
    (message(lambda: F.pad(x6.reshape(1, 1, 6).half(), (2, 2), mode="reflect")), True),
    (message(lambda: F.pad(x6.reshape(1, 1, 6).to(torch.int8), (2, 2), mode="replicate")), True),
    (message(lambda: F.pad(x6.reshape(1, 1, 6), (6, 2), mode="reflect")), False),
]


def main():
    print(f"torch {torch.__version__}")
    failures = []
    for op, text, kind in CASES:
        got = error_kind(text, op)
        print(f"{'ok  ' if got == kind else 'FAIL'} {op}: {kind} <- {text[:160]}")
        if got != kind:
            failures.append((op, kind, got, text))
    for text, missing in KERNELS:
        got = unsupported(text)
        print(f"{'ok  ' if got == missing else 'FAIL'} unsupported {missing} <- {text[:160]}")
        if got != missing:
            failures.append(("unsupported", missing, got, text))
    used = {kind for _, _, kind in CASES}
    unused = [kind for _, _, kind in PATTERNS if kind not in used]
    if unused:
        failures.append(("patterns without a case", unused, None, ""))
    if not any(missing for _, missing in KERNELS):
        failures.append(("no case of", NOT_IMPLEMENTED, None, ""))
    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
