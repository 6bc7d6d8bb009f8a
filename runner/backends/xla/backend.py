#!/usr/bin/env python3
"""opspec adapter for XLA through JAX on CPU: each case runs as `jax.lax` / `jax.numpy` ops, the
StableHLO ops a TensorRT-to-XLA converter would emit (README.md has the table). The adapter
computes only what a converter computes from static shapes (Slice bounds, Pad amounts, Gather
indices, layout shapes: ../common/convert.py); XLA's shapes are static, so a reshape's 0 and -1
are resolved by the converter too.

Each case runs as one jitted function, compiled once per op, attributes, shapes and dtypes (and
the values of shape-tensor inputs, which XLA needs statically) and cached.

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

from missing import serve_missing  # noqa: E402

REQUIREMENTS = "runner/backends/xla/requirements.txt"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
try:
    import numpy as np
    import ml_dtypes
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing("xla", missing, REQUIREMENTS)
    sys.exit(0)

from wire import INPUT_COUNT, ITEMSIZE, OPS, OpError, Unsupported, encode_bytes, encode_raw, inputs_of, int_list, pack_int4, serve  # noqa: E402
from convert import SlicePlan, as_strided_indices, reformat_plan, scale_weights  # noqa: E402

# int64 stays int64 (JAX would otherwise run it as int32).
jax.config.update("jax_enable_x64", True)

JNP_TYPE = {
    "bool": np.dtype(np.bool_),
    "int4": np.dtype(ml_dtypes.int4),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "fp8": np.dtype(ml_dtypes.float8_e4m3fn),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype("<f4"),
}
WIRE_TYPE = {v: k for k, v in JNP_TYPE.items()}


def array(wire):
    """The wire's bits as a device array of its type (no conversion)."""
    raw = wire.raw()
    if wire.dtype == "int4":
        host = raw.astype(ml_dtypes.int4)
    elif wire.dtype == "bool":
        host = raw.view(np.bool_)
    else:
        host = raw.view(JNP_TYPE[wire.dtype])
    return jnp.asarray(host)


def encode(y):
    host = np.asarray(y)
    dtype = WIRE_TYPE.get(host.dtype)
    if dtype is None:
        raise OpError("internal", f"XLA returned {host.dtype}")
    if dtype == "int4":
        return encode_bytes(dtype, host.shape, pack_int4(host.astype(np.int8)))
    if dtype == "bool":
        return encode_raw(dtype, host.view(np.uint8))
    return encode_bytes(dtype, host.shape, np.ascontiguousarray(host).tobytes())


# ----------------------------------------------------------------------------------------------
# The ops


def op_shuffle(attrs, t, A):
    x = A[0]
    p1 = int_list(attrs, "first_transpose")
    if p1 is not None:
        x = lax.transpose(x, p1)
    dims = t[1].ints("reshape_dims") if t[1] is not None else int_list(attrs, "reshape_dims")
    if dims is not None:
        if attrs.get("zero_is_placeholder", True):
            # XLA's shapes are static: the converter copies a placeholder's dim itself.
            if any(d == 0 and i >= x.ndim for i, d in enumerate(dims)):
                raise OpError("invalid_reshape", f"a 0 placeholder past the input's rank {x.ndim}")
            dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
        x = jnp.reshape(x, dims)
    p2 = int_list(attrs, "second_transpose")
    if p2 is not None:
        x = lax.transpose(x, p2)
    return x


PAD_MODE = {"wrap": "wrap", "clamp": "edge", "reflect": "reflect", "fill": "constant"}


def strided_slice(x, axis, start, size, step):
    """lax.slice of `size` elements from `start` every `step` on one axis; a negative step
    reverses the axis first (lax.rev), a zero step broadcasts one element. lax.slice takes no
    negative index and none past the end: XLA rejects those."""
    if size <= 0:
        start, limit, step = 0, 0, 1
    elif step == 0:
        one = strided_slice(x, axis, start, 1, 1)
        shape = list(x.shape)
        shape[axis] = size
        return jnp.broadcast_to(one, shape)
    elif step < 0:
        x = lax.rev(x, (axis,))
        start, step = x.shape[axis] - 1 - start, -step
        limit = start + (size - 1) * step + 1
    else:
        limit = start + (size - 1) * step + 1
    starts, limits, steps = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], steps[axis] = start, limit, step
    return lax.slice(x, starts, limits, steps)


def op_slice(attrs, t, A):
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4])
    x = A[0]
    if plan.padded:
        pads = list(zip(plan.before, plan.after))
        if plan.mode == "fill":
            value = 0
            if t[4] is not None:
                value = lax.convert_element_type(A[4].reshape(()), x.dtype)
            x = jnp.pad(x, pads, mode="constant", constant_values=value)
        else:
            x = jnp.pad(x, pads, mode=PAD_MODE[plan.mode])
    for axis, start, n, step in zip(plan.axes, plan.starts, plan.sizes, plan.steps):
        if not -x.ndim <= axis < x.ndim:
            raise OpError(None, f"no axis {axis} in a rank-{x.ndim} input")
        x = strided_slice(x, axis % x.ndim, start, n, step)
    return x


def op_as_strided(attrs, t, A):
    index = as_strided_indices(attrs)
    flat = jnp.reshape(A[0], (-1,))
    # jnp.take's default mode: an index past the end gives the fill value (NaN, or the type's
    # smallest integer), a negative one counts from the end.
    return jnp.take(flat, jnp.asarray(index))


SCALE_OP = {"scale": lax.mul, "shift": lax.add, "power": lax.pow}


def op_scale(attrs, t, A):
    weights = scale_weights(attrs, t[0].shape)
    y = lax.convert_element_type(A[0], np.float32)
    for name, w in weights:
        y = SCALE_OP[name](y, jnp.broadcast_to(jnp.asarray(w), y.shape))
    out = attrs.get("output_dtype") or t[0].dtype
    if out == "int8":
        # The quantization of TensorRT's INT8 output, as XLA writes it: round half to even,
        # clamp, convert.
        y = lax.clamp(np.float32(-128), lax.round(y, lax.RoundingMethod.TO_NEAREST_EVEN), np.float32(127))
    return lax.convert_element_type(y, JNP_TYPE[out])


def op_reformat(attrs, t, A):
    _, src, dst = reformat_plan(attrs, t[0])
    y = A[0]
    if src is not None:
        y = jnp.reshape(y, src.memory)
        y = lax.transpose(y, src.inverse)
        y = jnp.reshape(y, src.padded)
        y = lax.slice(y, [0] * len(src.shape), src.shape)
    if dst is not None:
        y = lax.pad(y, jnp.zeros((), y.dtype), [(0, p, 0) for p in dst.pads])
        y = jnp.reshape(y, dst.split)
        y = lax.transpose(y, dst.perm)
        y = jnp.reshape(y, (-1,))
    return y


# ----------------------------------------------------------------------------------------------
# Cases and hello

RUN = {
    "shuffle": op_shuffle,
    "slice": op_slice,
    "as_strided": op_as_strided,
    "scale": op_scale,
    "reformat": op_reformat,
}


CACHE = {}


def run(op, attrs, inputs):
    """Runs a case as one jitted function: one XLA compilation per op, attributes, shapes,
    dtypes and shape-tensor values (cached), the data passed as arguments."""
    if op not in RUN:
        raise Unsupported(f"op {op!r} is not mapped onto XLA")
    tensors = inputs_of(inputs, INPUT_COUNT[op])
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    present = [i for i, w in enumerate(tensors) if w is not None]
    key = (op, json.dumps(attrs, sort_keys=True), tuple(None if w is None else (w.dtype, tuple(w.shape), w.data if i in (1, 2, 3, 5) else None) for i, w in enumerate(tensors)))
    try:
        compiled = CACHE.get(key)
        if compiled is None:

            def case(*args):
                return RUN[op](attrs, tensors, dict(zip(present, args)))

            compiled = jax.jit(case)
            if len(CACHE) > 256:  # each holds a compiled executable
                CACHE.clear()
            CACHE[key] = compiled
        y = compiled(*[array(tensors[i]) for i in present])
        return encode(jax.block_until_ready(y))
    except (OpError, Unsupported):
        raise
    except (TypeError, ValueError, IndexError, ZeroDivisionError) as e:  # XLA's shape and type checks, jnp.reshape's -1
        raise OpError(None, f"xla: {type(e).__name__}: {' '.join(str(e).split())[:300]}") from None
    except Exception as e:
        text = " ".join(str(e).split())
        if "UNIMPLEMENTED" in text or "not supported" in text.lower():
            raise Unsupported(f"xla: {text[:300]}") from None
        raise


def hello():
    return {"name": f"xla-jax-{jax.__version__}", "ops": OPS, "dtypes": {op: list(ITEMSIZE) for op in OPS}}


if __name__ == "__main__":
    try:
        serve(hello, run)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
