#!/usr/bin/python3
"""Each clause of specs/as_strided.clauses.yaml replayed on torch.as_strided directly, the golden of
Huawei's own checks of ATB's AsStridedOperation (msit opcheck's OpcheckAsStridedOperation
golden_calc: torch.as_strided(x, size, stride, offset[0]) on the contiguous input). For each clause
it prints what the suite expects, what torch does, and whether they agree; README.md ("AsStrided:
torch against the suite") quotes the result. Exit 0 when torch still does what this script records
for every clause, 1 otherwise (torch changed: update README.md and known-failures.txt)."""

import platform
import sys

import torch


def golden(x, size, stride, offset):
    """msit opcheck's golden: torch.as_strided(x, size, stride, offset[0])."""
    return torch.as_strided(x, size, stride, offset[0])


def outcome(call):
    try:
        y = call()
        return ("ok", y.contiguous().tolist(), list(y.shape), y.dtype)
    except Exception as e:  # noqa: BLE001 (what torch raises is the observation)
        return ("error", f"{type(e).__name__}: {' '.join(str(e).split())[:150]}")


x6 = torch.arange(6, dtype=torch.float16)
i6 = torch.arange(6, dtype=torch.int64)
nan = torch.tensor([0x7D01, 0x7E00, 0xFC00, 0x7C00, 0x8000, 0x0001], dtype=torch.int32).to(torch.int16).view(torch.float16)

# (clause, what the suite expects, the torch call, what torch does, agree?)
CHECKS = [
    ("as_strided.view.formula", "[[1, 2], [4, 5]]",
     "golden(arange(6), [2, 2], [3, 1], [1])", lambda: golden(x6, [2, 2], [3, 1], [1]),
     lambda o: o[0] == "ok" and o[1] == [[1, 2], [4, 5]], True),
    ("as_strided.view.flat-input", "a [2, 3] input reads as its 6 elements in row order",
     "golden(arange(6).reshape(2, 3), [3], [2], [0])", lambda: golden(x6.reshape(2, 3), [3], [2], [0]),
     lambda o: o[0] == "ok" and o[1] == [0, 2, 4], True),
    ("as_strided.tensor.rank", "a rank-0 input is invalid_rank",
     "golden(tensor(5.), [1], [1], [0])", lambda: golden(torch.tensor(5.0, dtype=torch.float16), [1], [1], [0]),
     lambda o: o[0] == "ok" and o[1] == [5.0], False),
    ("as_strided.tensor.rank", "a rank-9 input is invalid_rank",
     "golden(zeros([1]*9), [1], [1], [0])", lambda: golden(torch.zeros([1] * 9, dtype=torch.float16), [1], [1], [0]),
     lambda o: o[0] == "ok", False),
    ("as_strided.tensor.rank", "size [] with stride [] (a rank-0 output) is invalid_rank",
     "golden(arange(6), [], [], [0])", lambda: golden(x6, [], [], [0]),
     lambda o: o[0] == "ok" and o[2] == [], False),
    ("as_strided.tensor.non-empty", "an input with no element is empty_dimension",
     "golden(empty(0), [1], [0], [0])", lambda: golden(torch.empty(0, dtype=torch.float16), [1], [0], [0]),
     lambda o: o[0] == "error" and "out of bounds for storage of size 0" in o[1], "kind"),
    ("as_strided.view.overlap", "size [3, 3], stride [1, 0] reads overlapping elements",
     "golden(arange(6), [3, 3], [1, 0], [0])", lambda: golden(x6, [3, 3], [1, 0], [0]),
     lambda o: o[0] == "ok" and o[1] == [[0, 0, 0], [1, 1, 1], [2, 2, 2]], True),
    ("as_strided.view.broadcast", "stride 0 repeats one element",
     "golden(arange(6), [3], [0], [5])", lambda: golden(x6, [3], [0], [5]),
     lambda o: o[0] == "ok" and o[1] == [5, 5, 5], True),
    ("as_strided.size.count", "9 size entries are invalid_size",
     "golden(arange(6), [1]*9, [0]*9, [0])", lambda: golden(x6, [1] * 9, [0] * 9, [0]),
     lambda o: o[0] == "ok" and o[2] == [1] * 9, False),
    ("as_strided.size.positive", "a size of 0 is invalid_size",
     "golden(arange(6), [2, 0], [1, 1], [0])", lambda: golden(x6, [2, 0], [1, 1], [0]),
     lambda o: o[0] == "ok" and o[2] == [2, 0], False),
    ("as_strided.size.positive", "a negative size is invalid_size",
     "golden(arange(6), [-1], [1], [0])", lambda: golden(x6, [-1], [1], [0]),
     lambda o: o[0] == "error" and "Storage size calculation overflowed" in o[1], "kind"),
    ("as_strided.stride.count", "stride of another length than size is invalid_stride",
     "golden(arange(6), [2, 2], [1], [0])", lambda: golden(x6, [2, 2], [1], [0]),
     lambda o: o[0] == "error" and "mismatch in length of strides and shape" in o[1], True),
    ("as_strided.stride.count", "size [] with stride [1, 0] is invalid_stride",
     "golden(arange(6), [], [1, 0], [0])", lambda: golden(x6, [], [1, 0], [0]),
     lambda o: o[0] == "error" and "mismatch in length of strides and shape" in o[1], True),
    ("as_strided.stride.non-negative", "a negative stride is invalid_stride",
     "golden(arange(6), [2], [-1], [1])", lambda: golden(x6, [2], [-1], [1]),
     lambda o: o[0] == "error" and "Negative strides are not supported" in o[1], True),
    ("as_strided.offset.count", "offset [0, 0] is invalid_offset",
     "golden(arange(6), [2], [1], [0, 0])", lambda: golden(x6, [2], [1], [0, 0]),
     lambda o: o[0] == "ok" and o[1] == [0, 1], False),
    ("as_strided.offset.count", "offset [] is invalid_offset",
     "golden(arange(6), [2], [1], [])", lambda: golden(x6, [2], [1], []),
     lambda o: o[0] == "error" and o[1].startswith("IndexError"), "kind"),
    ("as_strided.offset.non-negative", "offset [-1] is invalid_offset",
     "golden(arange(6), [2], [1], [-1])", lambda: golden(x6, [2], [1], [-1]),
     lambda o: o[0] == "error" and "invalid storage offset -1" in o[1], True),
    ("as_strided.bounds.reach", "a reach past the last element is out_of_bounds",
     "golden(arange(6), [2], [5], [1])", lambda: golden(x6, [2], [5], [1]),
     lambda o: o[0] == "error" and "out of bounds for storage of size 12" in o[1], True),
    ("as_strided.bounds.reach", "a reach that overflows int64 (stride 2**63-1, size 3) is out_of_bounds",
     "golden(arange(6), [3], [2**63 - 1], [0])", lambda: golden(x6, [3], [(1 << 63) - 1], [0]),
     lambda o: o[0] == "error" and "Storage size calculation overflowed" in o[1], True),
    ("as_strided.bounds.reach", "an offset whose byte offset overflows int64 (2**62 · 4 bytes, float32) is out_of_bounds",
     "golden(arange(6, dtype=float32), [2], [1], [2**62])", lambda: golden(torch.arange(6, dtype=torch.float32), [2], [1], [1 << 62]),
     lambda o: o[0] == "ok", False),
    ("as_strided.output.bits-unchanged", "float16 NaN payloads and -0.0 keep their bits",
     "golden(nan, [6], [1], [0]).view(int16)", lambda: golden(nan, [6], [1], [0]).contiguous().view(torch.int16),
     lambda o: o[0] == "ok" and [v & 0xFFFF for v in o[1]] == [0x7D01, 0x7E00, 0xFC00, 0x7C00, 0x8000, 0x0001], True),
    ("as_strided.output.bits-unchanged", "int64 extremes unchanged",
     "golden(tensor([-2**63, 2**63-1]), [2], [1], [0])", lambda: golden(torch.tensor([-(1 << 63), (1 << 63) - 1]), [2], [1], [0]),
     lambda o: o[0] == "ok" and o[1] == [-(1 << 63), (1 << 63) - 1], True),
    ("as_strided.dtype.float16-int64", "float32 (and every dtype but float16, int64) is unsupported_dtype",
     "golden(arange(6, dtype=float32), [2], [1], [0])", lambda: golden(torch.arange(6, dtype=torch.float32), [2], [1], [0]),
     lambda o: o[0] == "ok" and o[1] == [0.0, 1.0], False),
]


def main():
    print(f"torch {torch.__version__} on {platform.machine()}")
    wrong = 0
    for clause, expected, text, call, holds, agree in CHECKS:
        o = outcome(call)
        shown = o[1] if o[0] == "error" else f"{o[1]} (shape {o[2]}, {o[3]})"
        verdict = {True: "agree", False: "DIFFER", "kind": "differ in kind"}[agree]
        ok = holds(o)
        wrong += not ok
        print(f"{'    ' if ok else 'CHANGED '}{verdict:15} {clause}: suite: {expected}; torch: {text} -> {o[0]}: {shown}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
