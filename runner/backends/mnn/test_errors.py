#!/usr/bin/env python3
"""Each message pattern of errors.py against MNN's own message: the smallest MNN program that MNN
rejects for the rule, its message captured as the adapter captures it (MNN prints on file
descriptor 1) and prefixed with the stage as the adapter prefixes it; the message must give the
pattern's kind, and a message of another rule must not. Exit 0 when every pattern holds."""

import ctypes
import os
import sys
import tempfile

# MNN prints on fd 1: it goes to a scratch file, this script's own output to a copy of stdout.
OUT = os.fdopen(os.dup(1), "w")
SCRATCH = tempfile.TemporaryFile(mode="w+b")
os.dup2(SCRATCH.fileno(), 1)
sys.stdout = OUT
LIBC = ctypes.CDLL(None)

import numpy as np  # noqa: E402
import MNN.expr as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from errors import PATTERNS, error_kind  # noqa: E402


def printed():
    LIBC.fflush(None)
    SCRATCH.seek(0)
    text = SCRATCH.read().decode("utf-8", "replace")
    SCRATCH.seek(0)
    SCRATCH.truncate()
    return " ".join(text.split())


def message(stage, build):
    """MNN's message for `build()` (which must fail, or make a Var without a shape), prefixed by
    `stage` as the adapter does."""
    printed()
    try:
        y = build()
        if y.shape is not None:
            raise AssertionError(f"{stage}: MNN did not reject it (shape {y.shape})")
    except AssertionError:
        raise
    except Exception as e:
        cause = e.__cause__ if e.__cause__ is not None else e
        return f"MNN {stage}: {printed() or cause}"
    return f"MNN {stage}: {printed()}"


x23 = F.const(np.arange(6, dtype=np.float32), [2, 3], F.NCHW)
CASES = [
    # (op of the case, message, expected kind)
    ("reformat", message("building the buffer tensor", lambda: F.const(np.zeros(6, np.float32), [1, 3, 1, 2], F.NC4HW4)), "invalid_buffer"),
    ("reformat", message("building the buffer tensor", lambda: F.const(np.zeros(7, np.float32), [1, 1, 2, 3], F.NHWC)), "invalid_buffer"),
    ("shuffle", message("Transpose", lambda: F.transpose(x23, [0, 0])), "invalid_permutation"),
    ("shuffle", message("Transpose", lambda: F.transpose(x23, [0, 2])), "invalid_permutation"),
    ("shuffle", message("Transpose", lambda: F.transpose(x23, [0])), "invalid_permutation"),
    ("shuffle", message("Reshape", lambda: F.reshape(x23, [4, 2])), "volume_mismatch"),
    ("shuffle", message("Reshape", lambda: F.reshape(x23, [4, -1])), "volume_mismatch"),
    ("shuffle", message("Reshape", lambda: F.reshape(x23, [-2, 3])), "invalid_reshape"),
    # another op's stage, or a product of 0 (which does not say which rule): no kind
    ("shuffle", message("Reshape", lambda: F.reshape(F.const(np.arange(6, dtype=np.float32), [6], F.NCHW), [6, 0])), None),
    ("reformat", message("Transpose", lambda: F.transpose(x23, [0, 0])), None),
    ("shuffle", message("building the buffer tensor", lambda: F.const(np.zeros(6, np.float32), [1, 3, 1, 2], F.NC4HW4)), None),
]


def main():
    failures = []
    for op, text, kind in CASES:
        got = error_kind(text, op)
        print(f"{'ok  ' if got == kind else 'FAIL'} {op}: {kind} <- {text[:160]}")
        if got != kind:
            failures.append((op, kind, got, text))
    used = {kind for _, _, kind in CASES}
    unused = [kind for _, _, kind in PATTERNS if kind not in used]
    if unused:
        failures.append(("patterns without a case", unused, None, ""))
    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
