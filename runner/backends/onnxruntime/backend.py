#!/usr/bin/env python3
"""opspec adapter for ONNX Runtime (CPU): each case becomes a small ONNX graph of the engine's own
ops, written the way a TensorRT-to-ONNX converter would write it (README.md has the table), and
runs in an InferenceSession. The adapter computes only what a converter computes from static
shapes (Slice ends, Pad amounts, Gather indices, layout shapes: ../common/convert.py); the data never passes through
numpy arithmetic, so every difference from TensorRT the suite finds is the engine's.

Sessions are cached by the graph's structure (op sequence, node attributes, ranks, dtypes): the
values the converter computes are fed as inputs (see `Graph`).

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import collections
import ctypes
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from missing import serve_missing  # noqa: E402

try:
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto as TP
    from onnx import helper, numpy_helper
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing(__file__, missing)

from wire import INPUT_COUNT, OPS, OpError, Unsupported, case_scope, composed, composed_of, encode_bytes, inputs_of, int_list, main, nbytes, probe, prod  # noqa: E402
from convert import SlicePlan, as_strided_indices, reformat_plan, scale_weights  # noqa: E402
from errors import error_kind  # noqa: E402

OPSET = 21
ONNX_TYPE = {
    "bool": TP.BOOL,
    "int4": TP.INT4,
    "int8": TP.INT8,
    "uint8": TP.UINT8,
    "int32": TP.INT32,
    "int64": TP.INT64,
    "fp8": TP.FLOAT8E4M3FN,
    "float16": TP.FLOAT16,
    "bfloat16": TP.BFLOAT16,
    "float32": TP.FLOAT,
}
# OrtValue.data_type() -> wire dtype
WIRE_TYPE = {f"tensor({n})": n for n in ONNX_TYPE}
WIRE_TYPE.update({"tensor(float)": "float32", "tensor(float8e4m3fn)": "fp8"})


# ----------------------------------------------------------------------------------------------
# Graph building


class Graph:
    """One ONNX graph under construction, recorded as plain tuples: the graph is made with
    `onnx.helper` only when its structure is new. Data, shape lists, Pad amounts, Gather indices
    and weights are inputs fed at run time (with dims left unknown), so one session serves every
    case of the same structure, ranks and dtypes: what stays in the structure is the op sequence,
    the node attributes (permutations, modes) and the types."""

    def __init__(self, op):
        self.op = op
        self.records, self.feeds = [], []

    def _add(self, record):
        self.records.append(record)
        return f"v{len(self.records)}"

    def input(self, wire, position, rank=None):
        """A data input of the case, fed as it is; `rank` declares the input's rank when the
        converter knows it (a packed buffer is 1-D), so that ONNX Runtime checks the feed
        against it."""
        self.feeds.append(wire)
        return self._add(("input", ONNX_TYPE[wire.dtype], len(wire.shape) if rank is None else rank))

    def ints(self, values):
        """An int64 list (or array) the converter computed, fed at run time."""
        array = np.ascontiguousarray(values, dtype=np.int64)
        self.feeds.append(array)
        return self._add(("input", TP.INT64, array.ndim))

    def floats(self, array):
        self.feeds.append(np.ascontiguousarray(array, dtype=np.float32))
        return self._add(("input", TP.FLOAT, array.ndim))

    def const(self, array):
        """A constant of the graph (its value is part of the structure)."""
        array = np.asarray(array)
        return self._add(("const", array.dtype.str, array.shape, array.tobytes()))

    def node(self, op, ins, name="", **attrs):
        """A node; `name` is what ONNX Runtime's messages call it (errors.py reads it)."""
        return self._add(("node", op, tuple(ins), tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attrs.items())), name))

    def key(self, output, dtype):
        return (tuple(self.records), output, dtype)

    def protos(self, prefix=""):
        """The graph as ONNX protos: (inputs, initializers, nodes, the names of the inputs fed),
        every value and node name preceded by `prefix` (a case's own names in a batch's model;
        none for a case alone)."""
        inputs, inits, nodes, feeds = [], [], [], []
        for i, record in enumerate(self.records):
            name = f"{prefix}v{i + 1}"
            if record[0] == "input":
                inputs.append(helper.make_tensor_value_info(name, record[1], [None] * record[2]))
                feeds.append(name)
            elif record[0] == "const":
                _, dt, shape, data = record
                inits.append(numpy_helper.from_array(np.frombuffer(data, dtype=dt).reshape(shape), name))
            else:
                _, op, ins, attrs, node_name = record
                # A node without a name of the adapter's is unnamed alone; in a batch's model, node
                # names must be unique, so it is named after its output.
                node = helper.make_node(op, [prefix + n for n in ins], [name], name=prefix + node_name if node_name or not prefix else name)
                # Tuples are integer lists (an empty permutation included, whose type make_node
                # cannot infer).
                for key, value in attrs:
                    if isinstance(value, tuple):
                        node.attribute.append(helper.make_attribute(key, list(value), attr_type=helper.AttributeProto.INTS))
                    else:
                        node.attribute.append(helper.make_attribute(key, value))
                nodes.append(node)
        return inputs, inits, nodes, feeds

    def compile(self, output, dtype):
        inputs, inits, nodes, feeds = self.protos()
        try:
            session = new_session(inputs, inits, nodes, [(output, dtype)])
        except Exception as e:
            raise engine_error(e, "building the session", self.op) from None
        return Plan(session, output, feeds, self.op)


def new_session(inputs, inits, nodes, outputs):
    """An InferenceSession of one model of those protos, whose outputs are `outputs` [(name,
    wire dtype)]; ONNX Runtime's exception as it raises it."""
    ys = [helper.make_tensor_value_info(name, ONNX_TYPE[dtype], None) for name, dtype in outputs]
    graph = helper.make_graph(nodes, "opspec", inputs, ys, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=10)
    return ort.InferenceSession(model.SerializeToString(), OPTIONS, providers=["CPUExecutionProvider"])


class Plan:
    __slots__ = ("session", "output", "names", "op")

    def __init__(self, session, output, names, op):
        self.session, self.output, self.names, self.op = session, output, names, op

    def run(self, feeds):
        values = {name: ortvalue(value) for name, value in zip(self.names, feeds)}
        try:
            out = self.session.run_with_ort_values([self.output], values)[0]
        except Exception as e:
            raise engine_error(e, "running the session", self.op) from None
        return tensor_of(out)


def tensor_of(out):
    """An OrtValue the session returned as a tensor object, its bytes as they are."""
    dtype = WIRE_TYPE.get(out.data_type())
    if dtype is None:
        raise OpError("internal", f"the session returned a {out.data_type()}")
    shape = out.shape()
    size = nbytes(dtype, prod(shape))
    data = ctypes.string_at(out.data_ptr(), size) if size else b""
    return encode_bytes(dtype, shape, data)


def ortvalue(wire):
    """The wire bytes as an OrtValue of the wire's ONNX type (no conversion of any kind); an
    array the converter computed as it is."""
    if isinstance(wire, np.ndarray):
        return ort.OrtValue.ortvalue_from_numpy(wire)
    if wire.dtype == "int4":
        # ORT reads int4 packed two per byte, low nibble first, as the wire does; the array only
        # has to carry the logical shape and enough bytes.
        n = prod(wire.shape)
        buf = np.zeros(max(n, 1), dtype=np.uint8)
        buf[: len(wire.data)] = np.frombuffer(wire.data, dtype=np.uint8)
        array = buf[:n].reshape(wire.shape)
    else:
        array = np.frombuffer(wire.data, dtype=RAW_FEED[wire.dtype]).reshape(wire.shape)
    if not hasattr(ort.OrtValue, "ortvalue_from_numpy_with_onnx_type"):
        # ONNX Runtime before 1.20 (scripts/engines/version_matrix.py runs 1.18): only the dtypes numpy
        # has, fed as numpy's own type over the same bytes.
        if wire.dtype not in NUMPY_TYPE:
            raise Unsupported(f"{wire.dtype} inputs need ONNX Runtime 1.20 (OrtValue.ortvalue_from_numpy_with_onnx_type)")
        return ort.OrtValue.ortvalue_from_numpy(array.view(NUMPY_TYPE[wire.dtype]))
    return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(array, ONNX_TYPE[wire.dtype])


NUMPY_TYPE = {"bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int32": "<i4", "int64": "<i8", "float16": "<f2", "float32": "<f4"}


RAW_FEED = {
    "bool": np.bool_,
    "int8": np.int8,
    "uint8": np.uint8,
    "int32": "<i4",
    "int64": "<i8",
    "fp8": np.uint8,
    "float16": "<u2",
    "bfloat16": "<u2",
    "float32": "<u4",
}


def engine_error(e, when, op=None):
    """An exception of ONNX Runtime: a missing kernel or type is `unsupported`, anything else is
    the engine rejecting the case, with the kind its message names (errors.py) or none."""
    text = " ".join(str(e).split())
    if type(e).__name__ == "NotImplemented" or "Could not find an implementation" in text or "Type Error" in text:
        return Unsupported(f"onnxruntime {when}: {text[:300]}")
    return OpError(error_kind(text, op), f"onnxruntime {when}: {text[:600]}")


# Settings of two kinds (README.md, "Settings"). Graph optimizations stay as ONNX Runtime chooses:
# they could change a result. The thread pools cannot (the kernels split work, not arithmetic:
# runner/tests/engines.rs runs a sample both ways and compares every status), so one thread each,
# for speed on a shared machine: the default pools, one thread per core per session, load a small
# machine with every session the adapter keeps. The log is quiet.
OPTIONS = ort.SessionOptions()
OPTIONS.log_severity_level = 4
THREADS = int(os.environ.get("OPSPEC_ORT_THREADS", "1"))  # 0: ONNX Runtime's default pools
OPTIONS.intra_op_num_threads = THREADS
OPTIONS.inter_op_num_threads = THREADS


# ----------------------------------------------------------------------------------------------
# shuffle: Transpose -> Reshape(allowzero) -> Transpose


def build_shuffle(g, attrs, t):
    x = g.input(t[0], 0)
    p1 = int_list(attrs, "first_transpose")
    if p1 is not None:
        x = g.node("Transpose", [x], perm=p1)
    if t[1] is not None:
        # A shape tensor feeds Reshape as it is; ONNX's Reshape takes int64 only, so a converter
        # inserts a Cast for int32.
        dims = g.input(t[1], 1)
        if t[1].dtype == "int32":
            dims = g.node("Cast", [dims], to=TP.INT64)
        reshape = dims
    elif attrs.get("reshape_dims") is not None:
        # Static dims are a constant of the graph, as a converter writes them: ONNX Runtime checks
        # a constant shape when it builds the session, and some rules only then.
        reshape = g.const(np.array(int_list(attrs, "reshape_dims"), dtype=np.int64))
    else:
        reshape = None
    if reshape is not None:
        zero = attrs.get("zero_is_placeholder", True)
        x = g.node("Reshape", [x, reshape], allowzero=0 if zero else 1)
    p2 = int_list(attrs, "second_transpose")
    if p2 is not None:
        x = g.node("Transpose", [x], perm=p2)
    if not any(r[0] == "node" for r in g.records):
        x = g.node("Identity", [x])
    return x


# ----------------------------------------------------------------------------------------------
# slice: Slice; WRAP/CLAMP/REFLECT/FILL pad first (Pad wrap/edge/reflect/constant), then Slice

PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect", "wrap": "wrap"}


GATHER_LIMIT = 1 << 20
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
SLICE_MODES = ("strict_bounds", "wrap", "clamp", "fill", "reflect")


def int64(value):
    """An integer the converter computed, held at int64's ends: an ONNX Slice end past them reads
    what the end itself reads (Slice clamps its ends to the axis)."""
    return min(max(value, INT64_MIN), INT64_MAX)


def coordinates(start, stride, size):
    """TensorRT's coordinates start + i·stride, i < size, as int64 Gather indices; one past
    int64's range is held at its end, outside every axis as the exact one is, so that the Gather
    rejects it as it would the exact one."""
    last = start + (size - 1) * stride
    if INT64_MIN <= last <= INT64_MAX:
        # Every coordinate lies between the first and the last: int64 arithmetic, which wraps
        # only in between, gives each exactly.
        return start + np.arange(size, dtype=np.int64) * np.int64(stride)
    return np.array([int64(start + i * stride) for i in range(size)], dtype=np.int64)


def strict_gathers(plan, entries, gathers):
    """A STRICT_BOUNDS axis whose coordinates leave the input, written as a bounds-checked
    converter writes it: a Gather of TensorRT's coordinates start + i·stride on that axis, which
    ONNX Runtime checks as it checks any Gather index (ONNX Slice would clamp them). As for
    stride-0 axes, only when the axes are distinct and inside the input, and only for an index
    table of at most GATHER_LIMIT entries (8 bytes each: a budget-sized axis stays a Slice).
    Composed: `slice:strict-outside`."""
    rank = len(plan.shape)
    if not plan.axes_distinct_inside():
        return entries, gathers
    outside = {}
    for s0, a, d, n in zip(plan.starts, plan.axes, plan.steps, plan.sizes):
        if d == 0 or not 0 < n <= GATHER_LIMIT:
            continue
        coords = coordinates(s0, d, n)
        if coords.min() < 0 or coords.max() >= plan.shape[a % rank]:
            outside[a % rank] = coords
    if outside:
        composed("slice:strict-outside")
    entries = [e for e in entries if e[2] % rank not in outside]
    return entries, gathers + sorted(outside.items())


def reflect_notes(plan, stages):
    """REFLECT's composed paths: a reflection past d - 1, which ONNX Runtime's reflect Pad does
    not reach, as several reflect Pads (`slice:reflect-periodic`); an axis of one element, which
    reflects onto itself, as an edge Pad (`slice:reflect-one-element`)."""
    if plan.mode != "reflect":
        return
    if sum(1 for mode, _, _ in stages if mode == "reflect") > 1:
        composed("slice:reflect-periodic")
    if any(mode == "edge" for mode, _, _ in stages):
        composed("slice:reflect-one-element")


def build_slice(g, attrs, t):
    mode = attrs.get("mode", "strict_bounds")
    if mode not in SLICE_MODES:
        # The wire names five modes (docs/protocol.md); the suite's loader never sends another.
        raise OpError("invalid_input", f"unknown slice mode {mode!r}: the modes are {', '.join(SLICE_MODES)}")
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4])
    data = g.input(t[0], 0)
    stages = plan.pad_stages(PAD_MODES)
    reflect_notes(plan, stages)
    for mode, before, after in stages:
        ins = [data, g.ints(before + after)]
        if mode == "constant" and t[4] is not None:
            fill = g.input(t[4], 4)
            if t[4].dtype != t[0].dtype:
                fill = g.node("Cast", [fill], to=ONNX_TYPE[t[0].dtype])
            ins.append(fill)
        data = g.node("Pad", ins, mode=mode)
    entries, gathers = plan.slice_and_gathers()
    if gathers:
        # An axis of stride 0 that reads a coordinate: a Gather of size copies of its start.
        composed("slice:stride-0")
    if plan.mode == "strict_bounds":
        entries, gathers = strict_gathers(plan, entries, gathers)
    if entries:
        starts, ends, axes, steps = (list(column) for column in zip(*entries))
        data = g.node("Slice", [data, g.ints(starts), g.ints([int64(e) for e in ends]), g.ints(axes), g.ints(steps)])
    for axis, index in gathers:
        data = g.node("Gather", [data, g.ints(index)], axis=axis)
    if not any(r[0] == "node" for r in g.records):
        data = g.node("Identity", [data])
    return data


# ----------------------------------------------------------------------------------------------
# as_strided: Reshape to 1-D, then Gather of the view's flat indices


def build_as_strided(g, attrs, t):
    composed("as_strided")
    index = as_strided_indices(attrs)
    flat = g.node("Reshape", [g.input(t[0], 0), g.ints([-1])])
    return g.node("Gather", [flat, g.ints(index)], axis=0)


# ----------------------------------------------------------------------------------------------
# scale: Cast to float32 -> Mul -> Add -> Pow -> Cast / QuantizeLinear

SCALE_OP = {"scale": "Mul", "shift": "Add", "power": "Pow"}


def build_scale(g, attrs, t):
    x = t[0]
    weights = scale_weights(attrs, x.shape)
    y = g.input(x, 0)
    if x.dtype != "float32":
        y = g.node("Cast", [y], to=TP.FLOAT)
    for name, w in weights:
        y = g.node(SCALE_OP[name], [y, g.floats(w)])
    out_dtype = attrs.get("output_dtype") or x.dtype
    if out_dtype == "int8":
        # TensorRT's INT8 output of a Scale is a quantization with scale 1.
        return g.node("QuantizeLinear", [y, g.const(np.float32(1.0)), g.const(np.int8(0))])
    if out_dtype != "float32":
        y = g.node("Cast", [y], to=ONNX_TYPE[out_dtype])
    return y


# ----------------------------------------------------------------------------------------------
# reformat: Pad / Reshape / Transpose (pack), Reshape / Transpose / Slice (unpack)


# Every dim of a layout's Reshapes is the converter's own, a 0 included (an empty tensor has an
# empty image): allowzero 1, and no -1 for ONNX Runtime to infer.


def unpack(g, x, layout):
    y = g.node("Reshape", [x, g.ints(layout.memory)], name="buffer", allowzero=1)
    y = g.node("Transpose", [y], perm=layout.inverse)
    if layout.split != layout.padded:
        y = g.node("Reshape", [y, g.ints(layout.padded)], allowzero=1)
    axes = [i for i, p in enumerate(layout.pads) if p]
    if axes:
        y = g.node("Slice", [y, g.ints([0] * len(axes)), g.ints([layout.shape[a] for a in axes]), g.ints(axes)])
    return y


def pack(g, x, layout):
    if any(layout.pads):
        x = g.node("Pad", [x, g.ints([0] * len(layout.pads) + layout.pads)], mode="constant")
    if layout.split != layout.padded:
        x = g.node("Reshape", [x, g.ints(layout.split)], allowzero=1)
    x = g.node("Transpose", [x], perm=layout.perm)
    return g.node("Reshape", [x, g.ints([prod(layout.memory)])], allowzero=1)


def build_reformat(g, attrs, t):
    _, src, dst = reformat_plan(attrs, t[0])
    # Each packed format is a Pad / Reshape / Transpose chain of the adapter's layout.
    for fmt, layout in ((attrs.get("from"), src), (attrs.get("to"), dst)):
        if layout is not None:
            composed(f"reformat:{fmt}")
    # A buffer in a packed format is the format's 1-D memory image.
    y = g.input(t[0], 0, rank=1 if src is not None else None)
    if src is not None:
        y = unpack(g, y, src)
    if dst is not None:
        y = pack(g, y, dst)
    if not any(r[0] == "node" for r in g.records):
        y = g.node("Identity", [y])
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


class Cache:
    """The sessions of the structures met last (or the exception that building one gave), at most
    `size` of them, the one used longest ago dropped first: the suite sends the cases of one
    structure together, so a few hundred hold nearly every reuse, and memory stays bounded."""

    def __init__(self, size):
        self.size, self.plans = size, collections.OrderedDict()

    def get(self, key):
        plan = self.plans.get(key)
        if plan is not None:
            self.plans.move_to_end(key)
        return plan

    def put(self, key, plan):
        self.plans[key] = plan
        if len(self.plans) > self.size:
            self.plans.popitem(last=False)


CACHE = Cache(int(os.environ.get("OPSPEC_ORT_CACHE", "256")))


def graph_of(op, attrs, tensors):
    """The case's graph, the name of its output and the output's dtype."""
    g = Graph(op)
    out_dtype = attrs.get("output_dtype") or tensors[0].dtype if op == "scale" else tensors[0].dtype
    if out_dtype not in ONNX_TYPE:
        raise Unsupported(f"output dtype {out_dtype!r}")
    output = BUILD[op](g, attrs, tensors)
    return g, output, out_dtype


def plan_for(g, output, out_dtype):
    """The session of a case alone, cached by its graph's structure."""
    key = g.key(output, out_dtype)
    plan = CACHE.get(key)
    if plan is None:
        try:
            plan = g.compile(output, out_dtype)
        except (OpError, Unsupported) as e:
            plan = e
        CACHE.put(key, plan)
    if isinstance(plan, Exception):
        raise plan
    return plan


def case_graph(op, attrs, inputs):
    """A request's graph (graph_of), its inputs decoded."""
    if op not in BUILD:
        raise Unsupported(f"op {op!r} is not mapped onto ONNX Runtime")
    tensors = inputs_of(inputs, INPUT_COUNT[op])
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    return graph_of(op, attrs, tensors)


def run(op, attrs, inputs):
    g, output, out_dtype = case_graph(op, attrs, inputs)
    return plan_for(g, output, out_dtype).run(g.feeds)


def attempt(op, attrs, tensors):
    g, output, out_dtype = graph_of(op, attrs, tensors)
    plan_for(g, output, out_dtype).run(g.feeds)


# ----------------------------------------------------------------------------------------------
# Batches: the cases of a batch as independent subgraphs of one model, in one session


class Member:
    """A case of a batch: its place in the batch, its graph and output, and its feeds as
    OrtValues. In the batch's model every name of its graph begins with `c<place>_`."""

    __slots__ = ("place", "case_id", "graph", "output", "dtype", "values")

    def __init__(self, place, case_id, graph, output, dtype):
        self.place, self.case_id, self.graph, self.output, self.dtype = place, case_id, graph, output, dtype
        self.values = None

    @property
    def prefix(self):
        return f"c{self.place}_"

    def alone(self):
        """The case's result as a single `run` gives it (its own session, cached): the answer
        of a case that a batch's failure names, or that is left alone."""
        with case_scope(self.case_id):
            try:
                return plan_for(self.graph, self.output, self.dtype).run(self.graph.feeds)
            except (OpError, Unsupported) as e:
                return e


# The places of the cases an ONNX Runtime message names (by their names' prefix).
NAMED = re.compile(r"(?<![A-Za-z0-9_])c(\d+)_")


def run_together(members):
    """One session of the members' graphs side by side, run once: the members' output tensor
    objects, in order, or ONNX Runtime's exception as it raises it."""
    inputs, inits, nodes, values = [], [], [], {}
    for m in members:
        i, c, n, feeds = m.graph.protos(m.prefix)
        inputs += i
        inits += c
        nodes += n
        values.update(zip(feeds, m.values))
    session = new_session(inputs, inits, nodes, [(m.prefix + m.output, m.dtype) for m in members])
    outs = session.run_with_ort_values([m.prefix + m.output for m in members], values)
    return [tensor_of(out) for out in outs]


def answer_together(members, results):
    """Fills `results` (by place) for `members`: from one session of them all when it builds
    and runs; otherwise each case the engine's message names is answered alone, as a single
    `run` answers it, and the others together again; a failure naming no case splits the batch
    in halves, down to single cases answered alone. So every case gets the reply it gets alone."""
    while len(members) > 1:
        try:
            for m, out in zip(members, run_together(members)):
                results[m.place] = out
            return
        except OpError:
            raise  # the adapter's own (an output of a type it does not know): a bug, not the engine's
        except Exception as e:  # noqa: BLE001 - the engine's, judged below case by case
            places = {int(p) for p in NAMED.findall(" ".join(str(e).split()))}
        named = [m for m in members if m.place in places]
        if not named:
            half = len(members) // 2
            answer_together(members[:half], results)
            answer_together(members[half:], results)
            return
        for m in named:
            results[m.place] = m.alone()
        members = [m for m in members if m.place not in places]
    for m in members:
        results[m.place] = m.alone()


def run_batch(requests):
    """A batch's results (wire.answer_batch): each case's graph built in its own scope (its
    composed notes); a case whose structure has a session already (it was met alone) runs on
    it; the others run together (answer_together)."""
    results = [None] * len(requests)
    members = []
    for place, (case_id, op, attrs, inputs) in enumerate(requests):
        with case_scope(case_id):
            try:
                member = Member(place, case_id, *case_graph(op, attrs, inputs))
            except (OpError, Unsupported) as e:
                results[place] = e
                continue
        if CACHE.get(member.graph.key(member.output, member.dtype)) is not None:
            # A structure with a session of its own already (a case answered alone): no build.
            results[place] = member.alone()
            continue
        try:
            member.values = [ortvalue(f) for f in member.graph.feeds]
        except Unsupported:  # a type this ONNX Runtime cannot feed: as alone (session, then feed)
            results[place] = member.alone()
            continue
        members.append(member)
    answer_together(members, results)
    return results


def hello():
    # The dtypes for which the installed ONNX Runtime has the kernels.
    return {
        "name": f"onnxruntime-{ort.__version__}",
        "engine": {"name": "onnxruntime", "version": ort.__version__},
        "composed": composed_of(__file__),
        "ops": OPS,
        "dtypes": probe(ONNX_TYPE, attempt),
        "batch": BATCH,
    }


# The most cases a batch request holds (hello's `batch`), chosen by bench_batch.py's curve
# (README.md, "Batches").
BATCH = int(os.environ.get("OPSPEC_ORT_BATCH", "32"))


if __name__ == "__main__":
    main(hello, run, run_batch=run_batch)
