#!/usr/bin/env python3
"""opspec adapter for OpenVINO (CPU plugin): each case becomes an OpenVINO model of the engine's
own ops (opset 13), written the way a TensorRT-to-OpenVINO converter would write it (README.md
has the table). The adapter computes only what a converter computes from static shapes (Slice
ends, Pad amounts, Gather indices, layout shapes: ../common/convert.py).

Compiling a model on the CPU plugin costs about 15 ms of CPU, so the models take every
shape-dependent value (permutations, reshape dims, Slice and Pad parameters, Gather indices,
weights) as a run-time input with dynamic dims: one compiled model serves every case of the same
structure, rank and dtypes, and a small cache keeps the models of the structures seen last.

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import collections
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

from wire import INPUT_COUNT, ITEMSIZE, OPS, OpError, Unsupported, composed_of, encode_bytes, inputs_of, int_list, main, nbytes, prod  # noqa: E402
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
    """One case's subgraph under construction: data parameters (dynamic dims of a fixed rank) and
    integer parameters for every value a case varies; `feeds` collects the case's values for them,
    `key` its structure (what a compiled model of it serves), `result` its Result once built."""

    def __init__(self, op):
        self.op = op
        self.params, self.feeds, self.key = [], [], []
        self.result = None

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

    def structure(self):
        """What a compiled model of this case serves: every case of the same structure."""
        return self.op, tuple(self.key)


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
    engine rejecting the case, with the kind its message names (errors.py) or none. The
    exception's traceback is let go: its frames hold the infer request, whose compiled model and
    threads would otherwise live until Python's cycle collector runs."""
    e.__traceback__ = None
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


def build(op, attrs, inputs):
    """A case's subgraph (a Builder with its Result). Raises the case's answer when it has no
    subgraph: what the adapter cannot write (Unsupported), and an OpenVINO op that rejects what it
    is given as it is made (OpenVINO checks each op then: `building the model`)."""
    if op not in BUILD:
        raise Unsupported(f"op {op!r} is not mapped onto OpenVINO")
    tensors = inputs_of(inputs, INPUT_COUNT[op])
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    b = Builder(op)
    try:
        b.result = ops.result(BUILD[op](b, attrs, tensors))
    except (OpError, Unsupported):
        raise
    except RuntimeError as e:
        raise engine_error(e, "building the model", op) from None
    return b


def compile_case(b):
    """One infer request of a model of the case's subgraph. The model object is dropped once
    compiled: the plugin compiles its own copy."""
    return CORE.compile_model(ov.Model([b.result], b.params), "CPU", CONFIG).create_infer_request()


def output(request, index):
    """The wire tensor of the model's output `index`, copied out of the plugin's memory."""
    out = request.get_output_tensor(index)
    dtype = WIRE_TYPE.get(out.element_type.get_type_name())
    if dtype is None:
        raise OpError("internal", f"the model returned {out.element_type}")
    shape = list(out.shape)
    size = nbytes(dtype, prod(shape))
    data = np.asarray(out.data).reshape(-1).view(np.uint8)[:size].tobytes() if size else b""
    return encode_bytes(dtype, shape, data)


# ----------------------------------------------------------------------------------------------
# A case alone: its own model, cached by structure

# Compiled single-case models kept, least recently used dropped first. Each holds two threads of
# the CPU plugin and 16 MB of address space (their stacks) until it is dropped, which frees them:
# keeping all, about 2,100 by the end of the suite, took 4,186 threads and 36 GB of address space.
# The suite sends the cases of one structure together: sent alone, its 6,298 cases that compile
# need 2,092 compiles with every model kept, 3,361 with 16 kept, 4,035 with 8; its round trips'
# 1,776 steps 987 kept, 994 with 16.
CACHE_SIZE = 16
CACHE = collections.OrderedDict()


def compiled(b):
    """The infer request of the case's structure (or the exception compiling it gave), from the
    cache or compiled now."""
    key = b.structure()
    request = CACHE.pop(key, None)
    if request is None:
        try:
            request = compile_case(b)
        except Exception as e:
            request = engine_error(e, "compiling the model", b.op)
    CACHE[key] = request
    while len(CACHE) > CACHE_SIZE:
        CACHE.popitem(last=False)
    return request


def run_alone(b):
    """The case's output tensor object from a model of its own; raises its answer otherwise."""
    request = compiled(b)
    if isinstance(request, Exception):
        raise request
    try:
        request.infer([tensor(v) for v in b.feeds])
    except Exception as e:
        raise engine_error(e, "running the model", b.op) from None
    return output(request, 0)


def run(op, attrs, inputs):
    return run_alone(build(op, attrs, inputs))


def hello():
    # Compiling a probe per op and dtype would take seconds: the hello lists every type OpenVINO
    # has, and a case whose type the CPU plugin has no kernel for is answered `unsupported`.
    # The CPU plugin's own view of the machine: its kernels are chosen by these capabilities.
    core = CORE
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
