#!/usr/bin/env python3
"""Every MNN behaviour that known-failures.txt states (class `semantics`), shown on MNN directly
(`MNN.expr` on the CPU, no adapter): for each claim the smallest program that shows it, what MNN
answers, and whether the claim holds. Exit 0 when every claim holds, 1 when one no longer does
(the entry and its reason then need updating). The `defect` entries have their reproducers in
repro/; the `adapter` entries state a limit of the adapter, not of MNN, and are not shown here.
"""

import os
import platform
import sys

import numpy as np
import MNN
import MNN.expr as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from claims import Claims, shown  # noqa: E402

CLAIMS = Claims()
claim = CLAIMS.claim


def var(values, shape, dtype="float32", fmt=None):
    """An MNN constant; int8 is an int32 constant cast to int8 (expr.const refuses int8)."""
    fmt = F.NCHW if fmt is None else fmt
    values = np.asarray(values).reshape(-1)
    if dtype == "int8":
        return F.cast(F.const(values.astype(np.int32), list(shape), fmt, F.int), F.int8)
    kind = {"float32": (np.float32, F.float), "int32": (np.int32, F.int), "uint8": (np.uint8, F.uint8)}[dtype]
    return F.const(values.astype(kind[0]), list(shape), fmt, kind[1])


def ints(values):
    return F.const(np.asarray(values, dtype=np.int32), [len(values)], F.NCHW, F.int)


def answer(y, whole=False):
    """(shape, values) of Var `y`, or None when MNN rejects it. An empty Var is not read (MNN's
    read of one fails)."""
    try:
        if 0 in list(y.shape):
            return list(y.shape), []
        values = list(y.read_as_tuple()) if whole else np.asarray(y.read()).reshape(-1).tolist()
        return list(y.shape), values
    except Exception as e:  # noqa: BLE001 - a rejection is an answer
        print(f"    rejected: {type(e).__name__}: {e}")
        return None


@claim("as_strided.dtype.float16-int64", "MNN's Reshape and Gather take float32, int32, uint8 and int8")
def gather_types():
    ok = True
    for dtype in ("float32", "int32", "uint8", "int8"):
        got = shown(dtype, answer(F.gather(F.reshape(var([1, 2, 3, 4], [2, 2], dtype), [-1]), ints([3, 0]))))
        ok &= got is not None and got[1] == [4, 1]
    return ok


@claim("reformat.dtype.formats", "MNN converts float32, int32, uint8 and int8 to and from NC4HW4 and NHWC")
def convert_types():
    ok = True
    for dtype in ("float32", "int32", "uint8", "int8"):
        x = var([1, 2, 3, 4, 5, 6], [1, 3, 1, 2], dtype)
        packed = shown(f"{dtype} NC4HW4", answer(F.convert(x, F.NC4HW4), whole=True))
        nhwc = shown(f"{dtype} NHWC", answer(F.convert(x, F.NHWC), whole=True))
        back = shown(f"{dtype} NHWC -> NCHW", answer(F.convert(var([1, 3, 5, 2, 4, 6], [1, 1, 2, 3], dtype, F.NHWC), F.NCHW)))
        ok &= packed is not None and packed[1] == [1, 3, 5, 0, 2, 4, 6, 0]
        ok &= nhwc is not None and nhwc[1] == [1, 3, 5, 2, 4, 6] and back is not None and back[1] == [1, 2, 3, 4, 5, 6]
    return ok


@claim("reformat.layout.vector-major", "MNN's NC4HW4 buffer is [C/4][N][H][W][4]: TensorRT's CHW4 [N][C/4][H][W][4] for N = 1 or C <= 4 only")
def nc4hw4_layout():
    def trt_chw4(x):
        n, c, h, w = x.shape
        padded = np.zeros((n, -(-c // 4) * 4, h, w), x.dtype)
        padded[:, :c] = x
        return padded.reshape(n, -1, 4, h, w).transpose(0, 1, 3, 4, 2).reshape(-1).tolist()

    def mnn_order(x):  # the batch inside each block of 4 channels
        n, c, h, w = x.shape
        padded = np.zeros((n, -(-c // 4) * 4, h, w), x.dtype)
        padded[:, :c] = x
        return padded.reshape(n, -1, 4, h, w).transpose(1, 0, 3, 4, 2).reshape(-1).tolist()

    ok = True
    for shape in ([1, 5, 2, 3], [2, 3, 2, 3], [2, 5, 1, 1], [2, 9, 2, 3]):
        x = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)
        got = answer(F.convert(var(x, shape), F.NC4HW4), whole=True)[1]
        same = shown(f"{shape}: equal to TensorRT's CHW4", got == trt_chw4(x))
        ok &= got == mnn_order(x) and same == (shape[0] == 1 or shape[1] <= 4)
        # MNN reads a buffer in that order too.
        back = answer(F.convert(var(mnn_order(x), shape, fmt=F.NC4HW4), F.NCHW))[1]
        ok &= back == x.reshape(-1).tolist()
    return ok


@claim("reformat.rank.max", "MNN takes tensors of 9 dims (conversion, Transpose, Reshape, StridedSlice, Mul)")
def nine_dims():
    shape = [1] * 8 + [2]
    x = var([1, 2], shape)
    results = {
        "convert": answer(F.convert(x, F.NCHW)),
        "transpose": answer(F.transpose(x, [8, 1, 2, 3, 4, 5, 6, 7, 0])),
        "reshape": answer(F.reshape(var([1, 2, 3, 4], [2, 2]), [1] * 7 + [2, 2])),
        "strided_slice": answer(F.strided_slice(x, ints([0] * 9), ints([1] * 8 + [2]), ints([1] * 9), 0, 0)),
        "multiply": answer(F.multiply(x, var([2.0], []))),
    }
    for k, v in results.items():
        shown(k, v)
    return all(v is not None and len(v[0]) == 9 for v in results.values())


@claim("scale.channel-axis.spatial", "MNN's Mul, Add and Pow broadcast weights over any number of trailing dims, at any rank")
def broadcast():
    a = shown("[1,1,2,2] * [2,1] (one dim after the channel axis)", answer(F.multiply(var(np.ones(4), [1, 1, 2, 2]), var([1, 2], [2, 1]))))
    b = shown("[2,1,1,1,2] + [2,1,1,1,1] (four dims after)", answer(F.add(var(np.zeros(4), [2, 1, 1, 1, 2]), var([1, 2], [2, 1, 1, 1, 1]))))
    c = shown("[2,1,2] ^ [2,1,1] (rank 3)", answer(F.pow(var([2, 2, 2, 2], [2, 1, 2]), var([1, 2], [2, 1, 1]))))
    return (a is not None and a[1] == [1, 1, 2, 2] and b is not None and b[1] == [1, 1, 2, 2]
            and c is not None and c[1] == [2, 2, 4, 4])


@claim("scale.dtype.input", "MNN's Cast takes int32 and uint8 inputs and outputs int32")
def cast_types():
    a = shown("int32 -> float32", answer(F.cast(var([3, -4], [2], "int32"), F.float)))
    b = shown("uint8 -> float32", answer(F.cast(var([3, 200], [2], "uint8"), F.float)))
    c = shown("float32 -> int32", answer(F.cast(var([3.0, -4.0], [2]), F.int)))
    return a is not None and a[1] == [3.0, -4.0] and b is not None and b[1] == [3.0, 200.0] and c is not None and c[1] == [3, -4]


@claim("scale.int8.quantize", "MNN's Cast from float32 to int8 truncates toward zero and wraps modulo 256; NaN and infinities give 0")
def cast_int8():
    values = [1.5, 2.5, -2.5, 0.75, 300.0, -300.0, 127.9, float("nan"), float("inf"), float("-inf")]
    got = shown(f"Cast({values}) to int8", answer(F.cast(var(values, [len(values)]), F.int8)))
    return got is not None and got[1] == [1, 2, -2, 0, 44, -44, 127, 0, 0, 0]


@claim("shuffle.reshape.wildcard-indeterminate", "MNN's Reshape solves [0, -1] on [0, 3] as [0, 0]")
def reshape_zero_wildcard():
    got = shown("reshape([0,3], [0,-1])", answer(F.reshape(var([], [0, 3]), [0, -1])))
    return got is not None and got[0] == [0, 0]


@claim("shuffle.reshape.one-wildcard", "MNN's Reshape takes more than one -1: [-1, -1] on [2, 3] gives [1, 6]")
def reshape_two_wildcards():
    got = shown("reshape([2,3], [-1,-1])", answer(F.reshape(var(range(6), [2, 3]), [-1, -1])))
    return got is not None and got[0] == [1, 6]


@claim("shuffle.reshape.zero-past-rank", "MNN's Reshape of the output of another op (the int8 input's Cast) reads a 0 past the input's rank as 1: [6, 0] on [6] gives [6, 1]; of a constant it rejects")
def reshape_zero_past_rank():
    cast = shown("reshape(int8 Cast output [6], [6,0])", answer(F.reshape(var(range(6), [6], "int8"), [6, 0])))
    computed = shown("reshape(float32 Add output [6], [6,0])", answer(F.reshape(F.add(var(range(6), [6]), var([0.0], [])), [6, 0])))
    constant = shown("reshape(float32 constant [6], [6,0])", answer(F.reshape(var(range(6), [6]), [6, 0])))
    return (cast is not None and cast[0] == [6, 1] and computed is not None and computed[0] == [6, 1]
            and constant is None)


@claim("slice.strict.out-of-bounds", "MNN's Gather gives 0 for an index outside the input, an axis of 0 elements included")
def gather_outside():
    a = shown("gather([1..6], [7, 2])", answer(F.gather(var(range(1, 7), [6]), ints([7, 2]))))
    b = shown("gather(shape [0], [0, 1])", answer(F.gather(var([], [0]), ints([0, 1]))))
    return a is not None and a[1] == [0.0, 3.0] and b is not None and b[0] == [2] and b[1] == [0.0, 0.0]


@claim("slice.empty-dim.clamp-reflect", "MNN's Pad REFLECT pads an axis of 0 elements with zeros")
def reflect_empty():
    got = shown("pad(shape [0], [[0, 2]], REFLECT)", answer(F.pad(var([], [0]), F.const(np.array([0, 2], np.int32), [1, 2], F.NCHW, F.int), F.REFLECT)))
    return got is not None and got[0] == [2] and got[1] == [0.0, 0.0]


@claim("slice.strict.out-of-bounds", "MNN's StridedSlice answers begins and ends outside the input with what it reads inside (reading a negative begin from the back), rejecting none")
def strided_clamps():
    x = var(range(5), [5])
    past = shown("[0..4][3:6]", answer(F.strided_slice(x, ints([3]), ints([6]), ints([1]), 0, 0)))
    negative = shown("[0..4][-1:1]", answer(F.strided_slice(x, ints([-1]), ints([1]), ints([1]), 0, 0)))
    down = shown("[0..4][8:4:-1]", answer(F.strided_slice(x, ints([8]), ints([4]), ints([-1]), 0, 0)))
    return (past is not None and past[1] == [3.0, 4.0] and negative is not None and negative[0] == [0]
            and down is not None and down[1] == [4.0, 3.0])


@claim("slice.lengths.match", "MNN's StridedSlice slices the leading axes when given fewer entries than the input has dims")
def strided_short():
    got = shown("[2,3][0:1] with one entry", answer(F.strided_slice(var(range(6), [2, 3]), ints([0]), ints([1]), ints([1]), 0, 0)))
    return got is not None and got[0] == [1, 3]


@claim("slice.dtype.unlisted", "MNN's StridedSlice takes uint8")
def strided_uint8():
    got = shown("uint8 [1,2,3][0:2]", answer(F.strided_slice(var([1, 2, 3], [3], "uint8"), ints([0]), ints([2]), ints([1]), 0, 0)))
    return got is not None and got[1] == [1, 2]


@claim("slice.fill.conversion", "MNN's Cast converts an int32 value to float32")
def cast_fill():
    got = shown("Cast(int32 7) to float32", answer(F.cast(var([7], [], "int32"), F.float)))
    return got is not None and got[1] == [7.0]


def main():
    return CLAIMS.run(lambda: f"MNN {MNN.version()}, Python {platform.python_version()}, {platform.machine()}")


if __name__ == "__main__":
    sys.exit(main())
