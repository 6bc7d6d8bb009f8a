#!/usr/bin/env python3
"""Every engine claim of known-failures.txt, shown on XLA directly (jax.lax / jax.numpy on CPU,
no adapter): for each (clause, reason) the file states about XLA, the smallest program that shows
it, what XLA answers, and whether the claim holds. Run by runner/tests/engines.rs; exit 0 when
every claim holds, 1 when one no longer does (the entry and docs/engines.md then need updating).

The entries of class `adapter` state a limit of the adapter, not of XLA, and are not shown here.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from claims import Claims, shown  # noqa: E402

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", True)

CLAIMS = Claims()
claim = CLAIMS.claim


def accepted(f, *args):
    """XLA's answer to a jitted `f`: the output, or None when XLA (or JAX's shape checks) rejects
    the program."""
    try:
        return np.asarray(jax.jit(f)(*args))
    except Exception as e:  # noqa: BLE001 - any rejection is an answer
        print(f"    rejected: {type(e).__name__}: {' '.join(str(e).split())[:160]}")
        return None


@claim("as_strided.bounds.reach", "jnp.take's gather gives the fill value (NaN, or the smallest integer) for an index past the end instead of rejecting it")
def past_end():
    f = accepted(lambda x, i: jnp.take(x, i), jnp.arange(6, dtype=jnp.float16), np.array([5, 6]))
    i = accepted(lambda x, i: jnp.take(x, i), jnp.arange(6, dtype=jnp.int64), np.array([5, 6]))
    shown("float16 [0..5] at [5, 6]", f)
    shown("int64 [0..5] at [5, 6]", i)
    return f is not None and np.isnan(f[1]) and i is not None and i[1] == np.iinfo(np.int64).min


@claim("as_strided.dtype.float16-int64", "XLA's gather takes every type; ATB's AsStrided takes float16 and int64 only")
def every_type():
    answers = {t: accepted(lambda x, i: jnp.take(x, i), jnp.zeros(4, dtype=t), np.array([0, 1])) for t in (jnp.bool_, jnp.float32, jnp.int8, jnp.int32, jnp.uint8, ml_dtypes.bfloat16)}
    shown("gathered dtypes", [np.dtype(t).name for t, a in answers.items() if a is not None])
    return all(a is not None for a in answers.values())


@claim("as_strided.offset.non-negative", "jnp.take reads negative indices from the end")
@claim("as_strided.stride.non-negative", "jnp.take reads negative indices from the end")
def negative_index():
    y = shown("[0..5] at [-1, 0]", accepted(lambda x, i: jnp.take(x, i), jnp.arange(6, dtype=jnp.float16), np.array([-1, 0])))
    return y is not None and y.tolist() == [5, 0]


@claim("as_strided.size.count", "XLA's gather takes indices of any rank; ATB takes 1 to 8 sizes")
def nine_dims_of_indices():
    y = accepted(lambda x, i: jnp.take(x, i), jnp.arange(6, dtype=jnp.float16), np.zeros([1] * 9, dtype=np.int64))
    return shown("shape of a gather of rank-9 indices", None if y is None else y.shape) == (1,) * 9


@claim("as_strided.size.positive", "XLA's gather takes empty indices; ATB rejects a size of 0")
def empty_indices():
    y = accepted(lambda x, i: jnp.take(x, i), jnp.arange(6, dtype=jnp.float16), np.zeros([2, 0], dtype=np.int64))
    return shown("shape of a gather of [2, 0] indices", None if y is None else y.shape) == (2, 0)


@claim("as_strided.tensor.rank", "XLA's reshape and gather take inputs and indices of any rank, 0 and 9 included; ATB takes 1 to 8 dims")
def any_rank():
    scalar = accepted(lambda x, i: jnp.take(jnp.reshape(x, (-1,)), i), jnp.float16(3), np.array([0]))
    nine = accepted(lambda x, i: jnp.take(jnp.reshape(x, (-1,)), i), jnp.zeros([1] * 9, jnp.float16), np.array([0]))
    empty = accepted(lambda x, i: jnp.take(jnp.reshape(x, (-1,)), i), jnp.arange(3, dtype=jnp.float16), np.zeros([], dtype=np.int64))
    shown("rank-0 input, rank-9 input, rank-0 indices", [None if a is None else a.shape for a in (scalar, nine, empty)])
    return scalar is not None and nine is not None and empty is not None and empty.shape == ()


@claim("reformat.dtype.formats", "XLA has no tensor formats: the pad/reshape/transpose layout takes every type")
def layout_any_type():
    def pack(x):  # CHW4 of [1, 2, 1, 1]: pad C to 4, split, vector last, flatten
        y = lax.pad(x, jnp.zeros((), x.dtype), [(0, 0, 0), (0, 2, 0), (0, 0, 0), (0, 0, 0)])
        return jnp.reshape(lax.transpose(jnp.reshape(y, (1, 1, 4, 1, 1)), (0, 1, 3, 4, 2)), (-1,))

    answers = {t: accepted(pack, jnp.ones((1, 2, 1, 1), dtype=t)) for t in (jnp.float32, jnp.int32, jnp.uint8, ml_dtypes.bfloat16, jnp.int64)}
    shown("packed dtypes", [np.dtype(t).name for t, a in answers.items() if a is not None])
    return all(a is not None for a in answers.values())


@claim("reformat.rank.max", "XLA arrays have no rank limit; TensorRT's is 8 dims")
@claim("scale.rank.max", "XLA arrays have no rank limit; TensorRT's is 8 dims")
@claim("shuffle.rank.max", "XLA arrays have no rank limit; TensorRT's is 8 dims")
@claim("slice.rank.max", "XLA arrays have no rank limit; TensorRT's is 8 dims")
def rank_nine():
    x = jnp.zeros([1] * 8 + [2], jnp.float32)
    answers = [
        accepted(lambda x: lax.transpose(x, tuple(range(8, -1, -1))), x),
        accepted(lambda x: lax.slice(x, [0] * 9, [1] * 8 + [1]), x),
        accepted(lambda x: lax.mul(x, jnp.float32(2)), x),
        accepted(lambda x: jnp.reshape(x, (2, 1, 1, 1, 1, 1, 1, 1, 1, 1)), x),
    ]
    shown("ranks of transpose, slice, mul, reshape", [None if a is None else a.ndim for a in answers])
    return all(a is not None for a in answers)


@claim("scale.channel-axis.spatial", "XLA's mul/add/pow broadcast over any number of trailing dims; TensorRT needs 2 or 3 after the channel axis")
@claim("scale.rank.min-four", "XLA's mul/add/pow broadcast at any rank; TensorRT's Scale needs rank >= 4")
def broadcast_any_rank():
    answers = [accepted(lambda x, w: lax.mul(x, jnp.broadcast_to(w, x.shape)), jnp.ones(s, jnp.float32), np.full((s[0],) + (1,) * (len(s) - 1), 2, np.float32)) for s in ([3], [3, 2], [3, 2, 2, 2, 2])]
    shown("channel scales of ranks 1, 2 and 5 (0, 1 and 4 dims after the channel)", [None if a is None else a.shape for a in answers])
    return all(a is not None for a in answers)


@claim("scale.dtype.input", "XLA's convert_element_type takes every type; TensorRT's Scale takes int8, float16, bfloat16 or float32")
@claim("scale.dtype.output", "XLA's convert_element_type produces every type; TensorRT's Scale outputs int8, float16, bfloat16 or float32")
def convert_any_type():
    into = accepted(lambda x: lax.mul(lax.convert_element_type(x, np.float32), np.float32(2)), jnp.ones(2, jnp.int32))
    out = accepted(lambda x: lax.convert_element_type(lax.mul(x, np.float32(2)), np.int32), jnp.ones(2, jnp.float32))
    shown("int32 in, int32 out", (into, out))
    return into is not None and out is not None and out.dtype == np.int32


@claim("scale.float.rounding", "XLA on CPU runs with denormals flushed to zero (FTZ/DAZ): a subnormal input reads as 0 (so 0·inf = NaN) and a subnormal result comes back 0")
def flush_to_zero():
    tiny = np.float32(1e-40)  # subnormal
    w = np.float32(0.5)
    half = accepted(lambda x, w: lax.mul(x, w), np.array([tiny], np.float32), w)
    inf = accepted(lambda x, w: lax.mul(x, w), np.array([tiny], np.float32), np.float32(np.inf))
    shown("1e-40 * 0.5 (IEEE: 5e-41)", half)
    shown("1e-40 * inf (IEEE: inf)", inf)
    return half is not None and half[0] == 0 and inf is not None and np.isnan(inf[0])


@claim("slice.dtype.clamp-fill-reflect-exclude-int64-bf16", "XLA's slice, pad and gather take int64 and bfloat16 in every mode")
def modes_take_int64_bf16():
    answers = []
    for t in (jnp.int64, ml_dtypes.bfloat16):
        x = jnp.arange(3).astype(t)
        answers.append(accepted(lambda x: jnp.take(x, np.array([-1, 5]), mode="clip"), x))
        answers.append(accepted(lambda x: lax.pad(x, jnp.zeros((), x.dtype), [(1, 1, 0)]), x))
        answers.append(accepted(lambda x: jnp.pad(x, [(2, 0)], mode="reflect"), x))
    shown("clamp gather, fill pad, reflect pad of int64 and bfloat16", [None if a is None else a.tolist() for a in answers])
    return all(a is not None for a in answers)


@claim("slice.dtype.unlisted", "XLA's slice takes uint8, which TensorRT's Slice does not list")
def slice_uint8():
    y = shown("uint8 [0, 1, 2][1:3]", accepted(lambda x: lax.slice(x, [1], [3]), np.arange(3, dtype=np.uint8)))
    return y is not None and y.tolist() == [1, 2]


@claim("slice.fill.conversion", "XLA's convert_element_type converts any type to any; TensorRT converts a fill value only among float32, float16, int8 and fp8, exactly")
def fill_any_conversion():
    to_bool = accepted(lambda x, v: lax.pad(x, lax.convert_element_type(v, np.bool_), [(1, 0, 0)]), np.array([True]), np.float32(0.5))
    from_int32 = accepted(lambda x, v: lax.pad(x, lax.convert_element_type(v, np.float32), [(1, 0, 0)]), np.array([1], np.float32), np.int32(7))
    shown("float32 0.5 -> bool fill, int32 7 -> float32 fill", (to_bool, from_int32))
    return to_bool is not None and from_int32 is not None


def header():
    import jaxlib

    return f"jax {jax.__version__}, jaxlib {jaxlib.__version__} on {jax.devices()[0].platform}"


def main():
    return CLAIMS.run(header, os.path.join(os.path.dirname(os.path.abspath(__file__)), "known-failures.txt"))


if __name__ == "__main__":
    sys.exit(main())
