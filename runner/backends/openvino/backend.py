#!/usr/bin/env python3
"""opspec adapter for OpenVINO (CPU plugin): each case becomes an OpenVINO model of the engine's
own ops (opset 13), written the way a TensorRT-to-OpenVINO converter would write it (README.md
has the table). The adapter computes only what a converter computes from static shapes (Slice
ends, Pad amounts, Gather indices, layout shapes: ../common/convert.py).

Compiling a model on the CPU plugin takes about 0.1 s, so the models take every shape-dependent
value (permutations, reshape dims, Slice and Pad parameters, Gather indices, weights) as a
run-time input with dynamic dims: one compiled model serves every case of the same structure,
rank and dtypes.

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

from missing import serve_missing  # noqa: E402

try:
    import numpy as np
    import openvino as ov

    try:
        import openvino.opset13 as ops
    except ImportError:  # OpenVINO before 2025 (scripts/version_matrix.py runs 2024.6) has it here
        import openvino.runtime.opset13 as ops
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing(__file__, missing)

from wire import INPUT_COUNT, ITEMSIZE, OPS, OpError, Unsupported, encode_bytes, composed_of, inputs_of, int_list, main, nbytes, prod  # noqa: E402
from convert import SlicePlan, as_strided_indices, reformat_plan, scale_weights  # noqa: E402
from errors import error_kind  # noqa: E402

OV_TYPE = {
    "bool": ov.Type.boolean,
    "int4": ov.Type.i4,
    "int8": ov.Type.i8,
    "uint8": ov.Type.u8,
    "int32": ov.Type.i32,
    "int64": ov.Type.i64,
    "fp8": ov.Type.f8e4m3,
    "float16": ov.Type.f16,
    "bfloat16": ov.Type.bf16,
    "float32": ov.Type.f32,
}
WIRE_TYPE = {t.get_type_name(): n for n, t in OV_TYPE.items()}
CORE = ov.Core()
# The CPU plugin's default configuration but for one setting. On a CPU with bfloat16 arithmetic
# (AVX512_BF16, AMX) the plugin runs float32 computations at bfloat16 precision by default, which
# flushes subnormal results and rewrites NaNs of bfloat16 Scale cases
# (repro/config_bf16_inference_precision.py); TensorRT's Scale computes in float32, so the adapter
# asks for f32. No thread or stream setting: with INFERENCE_NUM_THREADS 1 the plugin skips run-time
# shape checks and returns what was in memory (repro/config_one_thread_skips_shape_checks.py).
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


class Builder:
    """A model under construction: data parameters (dynamic dims of a fixed rank) and integer
    parameters for every value a case varies; `feeds` collects the values of the current case."""

    def __init__(self):
        self.params, self.feeds, self.key = [], [], []

    def data(self, wire, static=False, rank=None):
        """A data input; `static` keeps its shape in the model (a shape tensor: its length
        decides the output's rank, which the CPU plugin needs to know); `rank` declares the
        input's rank when the converter knows it (a packed buffer is 1-D), so that OpenVINO
        checks the tensor against it."""
        shape = wire.shape if static else [-1] * (len(wire.shape) if rank is None else rank)
        p = ops.parameter(ov.PartialShape(shape), OV_TYPE[wire.dtype])
        self.params.append(p)
        self.feeds.append(wire)
        self.key.append(("data", wire.dtype, tuple(shape)))
        return p.output(0)

    def ints(self, values, static=True):
        """An int64 input; 1-D lists keep their length in the model (see `data`)."""
        array = np.asarray(values, dtype=np.int64)
        shape = list(array.shape) if static else [-1] * array.ndim
        p = ops.parameter(ov.PartialShape(shape), ov.Type.i64)
        self.params.append(p)
        self.feeds.append(array)
        self.key.append(("ints", tuple(shape)))
        return p.output(0)

    def const(self, values):
        """An int64 constant of the model, as a converter writes static attributes: OpenVINO
        checks permutations and reshape dims only when they are constants."""
        array = np.asarray(values, dtype=np.int64)
        self.key.append(("const", array.shape, array.tobytes()))
        return ops.constant(array).output(0)

    def floats(self, array):
        p = ops.parameter(ov.PartialShape([-1] * array.ndim), ov.Type.f32)
        self.params.append(p)
        self.feeds.append(np.asarray(array, dtype=np.float32))
        self.key.append(("floats", array.ndim))
        return p.output(0)

    def step(self, *what):
        """Records a structural choice (an op, its static attributes) in the cache key."""
        self.key.append(what)


def tensor(value):
    """A Wire (raw bits copied into a tensor of its type) or an int64/float32 array."""
    if isinstance(value, np.ndarray):
        return ov.Tensor(np.ascontiguousarray(value))
    t = ov.Tensor(OV_TYPE[value.dtype], value.shape)
    if value.data:
        np.asarray(t.data).reshape(-1).view(np.uint8)[: len(value.data)] = np.frombuffer(value.data, dtype=np.uint8)
    return t


def engine_error(e, when, op):
    """An exception of OpenVINO: a type without a kernel is `unsupported`, anything else is the
    engine rejecting the case, with the kind its message names (errors.py) or none."""
    text = " ".join(str(e).split())
    if "support" in text.lower() and "type" in text.lower() or "Unsupported" in text:
        return Unsupported(f"openvino {when}: {text[:300]}")
    return OpError(error_kind(text, op), f"openvino {when}: {text[:600]}")


# ----------------------------------------------------------------------------------------------
# The ops


def build_shuffle(b, attrs, t):
    x = b.data(t[0])
    p1 = int_list(attrs, "first_transpose")
    if p1 is not None:
        x = ops.transpose(x, b.const(p1)).output(0)
    if t[1] is not None:
        # The shape tensor goes to Reshape as given: OpenVINO's Reshape takes any integer type
        # and judges the rest itself.
        dims = b.data(t[1], static=True)
    elif attrs.get("reshape_dims") is not None:
        dims = b.const(int_list(attrs, "reshape_dims"))
    else:
        dims = None
    if dims is not None:
        zero = attrs.get("zero_is_placeholder", True)
        b.step("reshape", bool(zero))
        x = ops.reshape(x, dims, special_zero=bool(zero)).output(0)
    p2 = int_list(attrs, "second_transpose")
    if p2 is not None:
        x = ops.transpose(x, b.const(p2)).output(0)
    return x


PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect", "wrap": None}


def build_slice(b, attrs, t):
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4])
    x = b.data(t[0])
    for mode, before, after in plan.pad_stages(PAD_MODES):
        if mode is None:
            raise Unsupported("OpenVINO's Pad has no wrap mode")
        fill = t[4] if mode == "constant" else None
        b.step("pad", mode, fill is not None and (fill.dtype, len(fill.shape), fill.shape == [1]))
        args = [x, b.ints(before), b.ints(after), mode]
        if fill is not None:
            value = b.data(fill)
            if fill.shape == [1]:
                # TensorRT takes a fill of shape [1] as well as a scalar; OpenVINO's Pad takes a
                # scalar pad_value: a converter squeezes that one axis. Any other shape goes to
                # the Pad as it is, for OpenVINO to judge.
                value = ops.squeeze(value, ops.constant(np.array([0], dtype=np.int64))).output(0)
            if fill.dtype != t[0].dtype:
                value = ops.convert(value, OV_TYPE[t[0].dtype]).output(0)
            args.append(value)
        x = ops.pad(*args).output(0)
    entries, gathers = plan.slice_and_gathers()
    if entries:
        starts, ends, axes, steps = (list(column) for column in zip(*entries))
        b.step("slice", len(axes))
        x = ops.slice(x, b.ints(starts), b.ints(ends), b.ints(steps), b.ints(axes)).output(0)
    for axis, index in gathers:
        b.step("gather", axis)
        x = ops.gather(x, b.ints(index), ops.constant(np.int64(axis))).output(0)
    return x


def build_as_strided(b, attrs, t):
    index = as_strided_indices(attrs)
    flat = ops.reshape(b.data(t[0]), ops.constant(np.array([-1], dtype=np.int64)), special_zero=False)
    return ops.gather(flat, b.ints(index, static=False), ops.constant(np.int64(0))).output(0)


SCALE_OP = {"scale": ops.multiply, "shift": ops.add, "power": ops.power}


def build_scale(b, attrs, t):
    weights = scale_weights(attrs, t[0].shape)
    y = b.data(t[0])
    if t[0].dtype != "float32":
        y = ops.convert(y, ov.Type.f32).output(0)
    for name, w in weights:
        b.step(name, w.ndim)
        y = SCALE_OP[name](y, b.floats(w)).output(0)
    out_dtype = attrs.get("output_dtype") or t[0].dtype
    b.step("out", out_dtype)
    if out_dtype == "int8":
        # TensorRT quantizes to int8 rounding half to even and saturating: OpenVINO's own Round,
        # Clamp and Convert, as a converter writes it (Convert alone truncates toward zero).
        y = ops.round(y, "half_to_even").output(0)
        y = ops.clamp(y, -128.0, 127.0).output(0)
    if out_dtype != "float32":
        y = ops.convert(y, OV_TYPE[out_dtype]).output(0)
    return y


def build_reformat(b, attrs, t):
    _, src, dst = reformat_plan(attrs, t[0])
    # A buffer in a packed format is the format's 1-D memory image.
    y = b.data(t[0], rank=1 if src is not None else None)
    if src is not None:
        b.step("unpack", len(src.memory), len(src.split), len(src.shape))
        y = ops.reshape(y, b.ints(src.memory), special_zero=False).output(0)
        y = ops.transpose(y, b.ints(src.inverse)).output(0)
        if src.split != src.padded:
            y = ops.reshape(y, b.ints(src.padded), special_zero=False).output(0)
        rank = len(src.shape)
        y = ops.slice(y, b.ints([0] * rank), b.ints(src.shape), b.ints([1] * rank)).output(0)
    if dst is not None:
        b.step("pack", len(dst.shape), len(dst.split))
        rank = len(dst.shape)
        y = ops.pad(y, b.ints([0] * rank), b.ints(dst.pads), "constant").output(0)
        if dst.split != dst.padded:
            y = ops.reshape(y, b.ints(dst.split), special_zero=False).output(0)
        y = ops.transpose(y, b.ints(dst.perm)).output(0)
        y = ops.reshape(y, ops.constant(np.array([-1], dtype=np.int64)), special_zero=False).output(0)
    return y


# ----------------------------------------------------------------------------------------------
# Cases, cache, hello

BUILD = {
    "shuffle": build_shuffle,
    "slice": build_slice,
    "as_strided": build_as_strided,
    "scale": build_scale,
    "reformat": build_reformat,
}
CACHE = {}


def run(op, attrs, inputs):
    if op not in BUILD:
        raise Unsupported(f"op {op!r} is not mapped onto OpenVINO")
    tensors = inputs_of(inputs, INPUT_COUNT[op])
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    b = Builder()
    try:
        out = BUILD[op](b, attrs, tensors)
    except (OpError, Unsupported):
        raise
    except RuntimeError as e:  # OpenVINO checks each op as it is made
        raise engine_error(e, "building the model", op) from None
    key = (op, tuple(b.key))
    compiled = CACHE.get(key)
    if compiled is None:
        try:
            model = ov.Model([ops.result(out)], b.params)
            compiled = CORE.compile_model(model, "CPU", CONFIG).create_infer_request()
        except Exception as e:
            compiled = engine_error(e, "compiling the model", op)
        CACHE[key] = compiled
    if isinstance(compiled, Exception):
        raise compiled
    try:
        compiled.infer([tensor(v) for v in b.feeds])
    except Exception as e:
        raise engine_error(e, "running the model", op) from None
    out = compiled.get_output_tensor(0)
    dtype = WIRE_TYPE.get(out.element_type.get_type_name())
    if dtype is None:
        raise OpError("internal", f"the model returned {out.element_type}")
    shape = list(out.shape)
    size = nbytes(dtype, prod(shape))
    data = np.asarray(out.data).reshape(-1).view(np.uint8)[:size].tobytes() if size else b""
    return encode_bytes(dtype, shape, data)


def hello():
    # Compiling a probe per op and dtype would take seconds: the hello lists every type OpenVINO
    # has, and a case whose type the CPU plugin has no kernel for is answered `unsupported`.
    # The CPU plugin's own view of the machine: its kernels are chosen by these capabilities.
    core = ov.Core()
    version = ov.get_version().split("-")[0]
    return {
        "name": f"openvino-{version}",
        "engine": {"name": "openvino", "version": version},
        "platform": {
            "cpu_model": core.get_property("CPU", "FULL_DEVICE_NAME"),
            "engine_flags": list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")),
        },
        "composed": composed_of(__file__),
        "ops": OPS,
        "dtypes": {op: list(ITEMSIZE) for op in OPS},
    }


if __name__ == "__main__":
    main(hello, run)
