#!/usr/bin/env python3
"""opspec adapter for OpenVINO (CPU plugin): each case becomes an OpenVINO model of the engine's
own ops (opset 13), written the way a TensorRT-to-OpenVINO converter would write it (README.md
has the table). The adapter computes only what a converter computes from static shapes (Slice
ends, Pad amounts, Gather indices, layout shapes: ../common/convert.py).

Compiling a model on the CPU plugin costs about 15 ms of CPU whatever it holds (and about 1 ms
more per case it holds), so the models take every shape-dependent value (permutations, reshape
dims, Slice and Pad parameters, Gather indices, weights) as a run-time input with dynamic dims.
A case sent alone runs in a compiled model of its own, kept in a small cache by structure (one
compiled model serves every case of the same structure, rank and dtypes); the cases of a batch run
as one model of independent subgraphs, one per structure among them, compiled once
(`run_batch`), each case the subgraph it is alone.

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

from missing import serve_missing  # noqa: E402

try:
    import numpy as np
    import openvino as ov

    try:
        import openvino.opset13 as ops
    except ImportError:  # OpenVINO before 2025 (scripts/engines/version_matrix.py runs 2024.6) has it here
        import openvino.runtime.opset13 as ops
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing(__file__, missing)

from wire import INPUT_COUNT, ITEMSIZE, OPS, OpError, Unsupported, bisect, case_scope, composed, composed_of, encode_bytes, inputs_of, int_list, main, nbytes, prod  # noqa: E402
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
# The CPU plugin's default configuration but for two settings.
# - INFERENCE_PRECISION_HINT f32: on a CPU with bfloat16 arithmetic (AVX512_BF16, AMX) the plugin
#   runs float32 computations at bfloat16 precision by default, which flushes subnormal results and
#   rewrites NaNs of bfloat16 Scale cases (repro/config_bf16_inference_precision.py); TensorRT's
#   Scale computes in float32, so the adapter asks for f32.
# - CPU_RUNTIME_CACHE_CAPACITY 0: the plugin's cache of kernels for run-time shapes, shared by the
#   nodes of a compiled model, gives one Multiply the kernel of another of a different rank in the
#   same model, which then computes wrong values (repro/runtime_cache_mixes_eltwise_kernels.py): a
#   case's values would depend on the cases batched with it. Without the cache each node makes its
#   own kernel, as in a model of its own.
# No thread or stream setting: with INFERENCE_NUM_THREADS 1 the plugin skips run-time shape checks
# and returns what was in memory (repro/config_one_thread_skips_shape_checks.py).
CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "CPU_RUNTIME_CACHE_CAPACITY": "0"}


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


# Node names in OpenVINO's messages: the adapter's case prefix (`c40/`, the case's place in its
# batch) and the numbers OpenVINO gives nodes it names itself (`Convert_209198`, a count over the
# process's life). Neither says anything of the case, and both would make a message depend on the
# batch it was in or on what the process ran before.
CASE_PREFIX = re.compile(r"\bc\d+/")
NODE_NUMBER = re.compile(r"\b([A-Z][A-Za-z]*)_\d+\b")


def stable_names(text):
    """`text` with the case prefixes and OpenVINO's node numbers written `c/` and `_#`."""
    return NODE_NUMBER.sub(r"\1_#", CASE_PREFIX.sub("c/", text))


def engine_error(e, when, op):
    """An exception of OpenVINO: a type without a kernel is `unsupported`, anything else is the
    engine rejecting the case, with the kind its message names (errors.py) or none. The
    exception's traceback is let go: its frames hold the infer request, whose compiled model and
    threads would otherwise live until Python's cycle collector runs."""
    e.__traceback__ = None
    text = stable_names(" ".join(str(e).split()))
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
    """Slice as OpenVINO's Slice; a mode that reads outside the input pads it first (composed:
    `slice:CLAMP`, `slice:FILL`, `slice:REFLECT`, Pads of amounts the adapter computes), and an
    axis of stride 0 is a Gather of coordinates the adapter computes (`slice:stride-0`)."""
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4])
    x = b.data(t[0])
    stages = plan.pad_stages(PAD_MODES)
    for mode, before, after in stages:
        if mode is None:
            raise Unsupported("OpenVINO's Pad has no wrap mode")
    if stages:
        composed(f"slice:{plan.mode.upper()}")
    for mode, before, after in stages:
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
        # An axis that reads one coordinate going up reads [start, start + 1): a converter
        # writes it so, whatever the stride (2^63 - 1 would put the end past int64).
        for k, (start, end, step) in enumerate(zip(starts, ends, steps)):
            if step > 1 and start >= 0 and end - start <= step:
                ends[k], steps[k] = start + 1, 1
        b.step("slice", len(axes))
        x = ops.slice(x, b.ints(starts), b.ints(ends), b.ints(steps), b.ints(axes)).output(0)
    if gathers:
        composed("slice:stride-0")
    for axis, index in gathers:
        b.step("gather", axis)
        x = ops.gather(x, b.ints(index), ops.constant(np.int64(axis))).output(0)
    return x


def build_as_strided(b, attrs, t):
    """A Gather of the flat indices the adapter computes (composed: `as_strided`)."""
    index = as_strided_indices(attrs)
    composed("as_strided")
    flat = ops.reshape(b.data(t[0]), ops.constant(np.array([-1], dtype=np.int64)), special_zero=False)
    return ops.gather(flat, b.ints(index, static=False), ops.constant(np.int64(0))).output(0)


SCALE_OP = {"scale": ops.multiply, "shift": ops.add, "power": ops.power}


def build_scale(b, attrs, t):
    """OpenVINO has no Scale op: Convert, Multiply, Add, Power and Convert (Round and Clamp before
    an int8 output) of weights the adapter shapes (composed: `scale`, when any op is written; a
    float32 case without weights is its input)."""
    weights = scale_weights(attrs, t[0].shape)
    out_dtype = attrs.get("output_dtype") or t[0].dtype
    if weights or t[0].dtype != "float32" or out_dtype != "float32":
        composed("scale")
    y = b.data(t[0])
    if t[0].dtype != "float32":
        y = ops.convert(y, ov.Type.f32).output(0)
    for name, w in weights:
        b.step(name, w.ndim)
        y = SCALE_OP[name](y, b.floats(w)).output(0)
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
    """A format's memory image unpacked and packed by chains of Reshape, Transpose, Slice and Pad
    the adapter chooses (composed: `reformat:FORMAT` for each format other than LINEAR)."""
    _, src, dst = reformat_plan(attrs, t[0])
    for layout, name in ((src, "from"), (dst, "to")):
        if layout is not None:
            composed(f"reformat:{attrs[name]}")
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


# A node of case i is named `c<i>/<Type>_<n>` (n counts its nodes from the Result up), and
# OpenVINO's messages name the nodes they are about (the CPU plugin keeps a name in the nodes it
# fuses, `c3/Transpose_2.0`): the case a compile or run failure belongs to.
CASE_NAME = re.compile(r"(?<![\w.])c(\d+)/")


def name_nodes(b, index):
    """Names every node of the case's subgraph after the case's `index` in its model (0 alone)."""
    seen, stack = set(), [b.result]
    while stack:
        node = stack.pop()
        if node.get_instance_id() in seen:
            continue
        seen.add(node.get_instance_id())
        node.set_friendly_name(f"c{index}/{node.get_type_name()}_{len(seen)}")
        stack.extend(i.get_source_output().get_node() for i in node.inputs())
    for n, p in enumerate(b.params):
        p.set_friendly_name(f"c{index}/Parameter_in{n}")


def compile_cases(cases):
    """One infer request of a model of the cases' subgraphs (their Results, then Parameters, in
    order). The model object is dropped once compiled: the plugin compiles its own copy."""
    model = ov.Model([b.result for b in cases], [p for b in cases for p in b.params])
    return CORE.compile_model(model, "CPU", CONFIG).create_infer_request()


def output(request, index):
    """The wire tensor of the model's output `index`, copied out of the plugin's memory."""
    out = request.get_output_tensor(index)
    dtype = WIRE_TYPE.get(out.element_type.get_type_name())
    if dtype is None:
        raise OpError("internal", f"the model returned {out.element_type}")
    shape = list(out.shape)
    count = prod(shape)
    size = nbytes(dtype, count)
    data = np.asarray(out.data).reshape(-1).view(np.uint8)[:size].tobytes() if size else b""
    if dtype == "int4" and count % 2:
        # The high half of the last byte holds no element: zero, not what the plugin left there.
        data = data[:-1] + bytes([data[-1] & 0x0F])
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
            request = compile_cases([b])
        except Exception as e:
            request = engine_error(e, "compiling the model", b.op)
    CACHE[key] = request
    while len(CACHE) > CACHE_SIZE:
        CACHE.popitem(last=False)
    return request


def run_alone(b):
    """The case's output tensor object from a model of its own; raises its answer otherwise."""
    name_nodes(b, 0)
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


# ----------------------------------------------------------------------------------------------
# A batch: one model of the cases' independent subgraphs, compiled and run once

# The most cases a batch request may hold (the hello's `batch`), set by measurement (bench_batch.py,
# README.md): over the suite's requests the adapter takes least CPU with batches of 48 to 96 (1.7
# to 1.8 ms a request, 8 ms alone, 3.4 ms in batches of 8, 1.9 ms of 32 or 128).
BATCH = 64


class Unnamed(Exception):
    """A failure of a model of several cases whose message names none of them."""


def answer_alone(b):
    """`run_alone` as a result: the output, or the exception that is the case's answer."""
    try:
        return run_alone(b)
    except (OpError, Unsupported) as e:
        return e.with_traceback(None)  # an answer, not a bug: no frames (engine_error)
    except Exception as e:  # noqa: BLE001 - an adapter bug, reported with its traceback
        return e


def run_together(cases):
    """The results of `cases` (Builders named after their index), in order, from one model that
    holds a subgraph per structure among them (its first case's), compiled once and run until
    every case has run: each run feeds every subgraph the next case of its structure, or the last
    one that ran again (its output already taken), as a model of a case alone serves every case
    of its structure.

    A failure that names a case (its nodes, `c<i>/`, or its input by index) is the answer of the
    case fed there (when compiling, of every case of that structure), and the runs go on without
    it; a subgraph none of whose cases has run, with none left, is left out of a new model of the
    cases left. A failure that names none raises Unnamed before any case is answered, so that
    `bisect` splits the cases, and sends the cases of that run to `bisect` after. A case left
    alone runs as it would be sent alone."""
    if len(cases) < 2:
        return [answer_alone(b) for b in cases]
    groups = {}
    for b in cases:
        groups.setdefault(b.structure(), []).append(b)
    heads = [group[0] for group in groups.values()]
    pending = [collections.deque(group) for group in groups.values()]
    last, results = [None] * len(heads), {}

    def after(rest):
        """Adds the results of `rest` (a part of `cases`), run without this model."""
        rest = sorted(rest, key=lambda b: b.index)
        results.update((b.index, r) for b, r in zip(rest, bisect(run_together, rest, Unnamed)))

    try:
        request = compile_cases(heads)
    except Exception as e:
        failure = e.with_traceback(None)
        n, _ = named_case(failure, heads)
        if n is None:
            raise Unnamed(f"compiling the model: {failure}") from None
        results.update((b.index, engine_error(failure, "compiling the model", b.op)) for b in pending[n])
        after([b for queue in pending[:n] + pending[n + 1:] for b in queue])
        return [results[b.index] for b in cases]
    while any(pending):
        if any(not queue and ran is None for queue, ran in zip(pending, last)):
            request = None  # its threads end here, not after the rest runs
            after([b for queue in pending for b in queue])
            break
        fed = [queue[0] if queue else ran for queue, ran in zip(pending, last)]
        try:
            request.infer([tensor(v) for b in fed for v in b.feeds])
        except Exception as e:
            failure = e.with_traceback(None)
            n, alone = named_case(failure, heads)
            if n is not None and pending[n] and fed[n] is pending[n][0]:
                b = pending[n].popleft()
                results[b.index] = answer_alone(b) if alone else engine_error(failure, "running the model", b.op)
            elif not results:
                raise Unnamed(f"running the model: {failure}") from None
            else:
                after([queue.popleft() for queue in pending if queue])
            continue
        for n, queue in enumerate(pending):
            if queue:
                last[n] = queue.popleft()
                results[last[n].index] = output(request, n)
    return [results[b.index] for b in cases]


INPUT_INDEX = re.compile(r"Can't set the input tensor with index: (\d+)")


def named_case(e, heads):
    """(position in `heads`, False) of the subgraph whose nodes the engine's message names (one
    subgraph only), (position, True) of the one whose input it refuses by the input's index (its
    answer is then the one it gets alone, where the index is its own), or (None, False)."""
    text = str(e)
    named = {int(i) for i in CASE_NAME.findall(text)}
    if len(named) == 1:
        (index,) = named
        for n, b in enumerate(heads):
            if b.index == index:
                return n, False
    m = INPUT_INDEX.search(text)
    if m is not None and not named:
        position = int(m.group(1))
        for n, b in enumerate(heads):
            if position < len(b.params):
                return n, True
            position -= len(b.params)
    return None, False


def run_batch(requests):
    """The batch's results (wire.py): each case built as its own subgraph (an error while it is
    made is its own answer, and it is left out), then `run_together`, split by `bisect` where a
    failure names no case."""
    results, built = [None] * len(requests), []
    for index, (mid, op, attrs, inputs) in enumerate(requests):
        with case_scope(mid):
            try:
                b = build(op, attrs, inputs)
            except Exception as e:  # noqa: BLE001 - the case's answer
                results[index] = e
                continue
        b.index = index
        name_nodes(b, index)
        built.append(b)
    if built:
        for b, result in zip(built, bisect(run_together, built, Unnamed)):
            results[b.index] = result
    return results


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
        # oneDNN's ISA cap changes kernels, and with them results (repro/pad_fp8_negative_zero.py):
        # the run records it among its facts, and its replays set it.
        "env": ["ONEDNN_MAX_CPU_ISA"],
        "composed": composed_of(__file__),
        "batch": BATCH,
        "ops": OPS,
        "dtypes": {op: list(ITEMSIZE) for op in OPS},
    }


if __name__ == "__main__":
    main(hello, run, run_batch=run_batch)
