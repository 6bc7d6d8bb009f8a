#!/usr/bin/env python3
"""opspec adapter for MNN (Alibaba's inference engine), through its Python expression API
(`MNN.expr`, CPU backend): each case becomes the MNN ops a TensorRT-to-MNN converter would write
(README.md has the table). Reformat uses MNN's own layout conversion (`expr.convert`): only the
formats whose memory image is one of MNN's data formats are declared, and MNN packs them itself;
the adapter never lays out a packed buffer by its own index arithmetic.

What the adapter builds from several MNN ops (a mode MNN has no op for) is listed in the hello's
`composed` object; anything not listed is one MNN op (or MNN's conversion) per stage.

MNN prints its messages with printf on the process's standard output: the protocol is written to
a copy of the original standard output, and file descriptor 1 goes to a scratch file whose text
becomes the message of an error reply (and is copied to stderr, the runner's log).

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import ctypes
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from missing import serve_missing  # noqa: E402

# MNN's own messages (the CPU features it prints when imported, among others): fd 1 goes to a
# scratch file, the protocol to a copy of the real stdout. Done before MNN is imported.
PROTOCOL_OUT = os.fdopen(os.dup(1), "w")
SCRATCH = tempfile.TemporaryFile(mode="w+b")
os.dup2(SCRATCH.fileno(), 1)
sys.stdout = PROTOCOL_OUT
LIBC = ctypes.CDLL(None)

try:
    import numpy as np
    import MNN
    import MNN.expr as F
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing(__file__, missing)

from wire import INPUT_COUNT, OPS, OpError, Unsupported, encode_bytes, composed_of, inputs_of, int_list, main, probe, prod  # noqa: E402
from convert import SlicePlan, as_strided_indices, scale_weights  # noqa: E402
from errors import error_kind  # noqa: E402


def engine_text():
    """What MNN printed since the last call (and clears it), also copied to the log."""
    LIBC.fflush(None)
    SCRATCH.seek(0)
    text = SCRATCH.read().decode("utf-8", "replace")
    SCRATCH.seek(0)
    SCRATCH.truncate()
    if text:
        sys.stderr.write(f"[mnn] {text.strip()}\n")
        sys.stderr.flush()
    return " ".join(text.split())




def startup_text():
    LIBC.fflush(None)
    SCRATCH.seek(0)
    SCRATCH.truncate()


startup_text()  # what MNN printed when imported is not a case's message

# Threads: MNN's default unless OPSPEC_MNN_THREADS is set (a speed setting: README.md).
if os.environ.get("OPSPEC_MNN_THREADS"):
    F.set_thread_number(int(os.environ["OPSPEC_MNN_THREADS"]))
    startup_text()

# ----------------------------------------------------------------------------------------------
# Tensors: wire <-> MNN Var. MNN's expression API has float32, int32, uint8 and int8 tensors
# (int8 only as the result of an op: `expr.const` refuses it, so an int8 input is an int32
# constant and an MNN Cast to int8, exact for every int8 value). Its int64 and double constants
# are stored as 32-bit values, and it has no bool, 16-bit float or fp8 type: those are
# `unsupported`.

MNN_TYPE = {"float32": F.float, "int32": F.int, "uint8": F.uint8, "int8": F.int8}
CONST_ARRAY = {"float32": "<f4", "int32": "<i4", "uint8": np.uint8}
READ_AS = {"float32": "<f4", "int32": "<i4", "uint8": np.uint8, "int8": np.int8}


def supported(dtype, what):
    if dtype not in MNN_TYPE:
        raise Unsupported(f"MNN's expression API has no {dtype} tensor ({what})")


def const(dtype, flat, shape, fmt=None):
    """An MNN constant of `dtype` holding the flat little-endian `flat` bytes, of `shape` in
    data format `fmt` (NCHW by default)."""
    supported(dtype, "input")
    fmt = F.NCHW if fmt is None else fmt
    if dtype == "int8":
        values = np.frombuffer(flat, dtype=np.int8).astype(np.int32)
        return F.cast(F.const(values, list(shape), fmt, F.int), F.int8)
    return F.const(np.frombuffer(flat, dtype=CONST_ARRAY[dtype]).copy(), list(shape), fmt, MNN_TYPE[dtype])


def var_of(wire):
    return const(wire.dtype, wire.data, wire.shape)


def engine_error(e, when, op=None):
    """MNN rejecting the case, with the kind its message names (errors.py) or none."""
    text = engine_text()
    cause = e.__cause__ if e.__cause__ is not None else e
    message = f"MNN {when}: {text or cause}"[:600]
    return OpError(error_kind(message, op), message)


def read(y, dtype, whole=False):
    """The output tensor object of Var `y`. `whole`: the Var's whole buffer (a packed format's
    padding included: `read_as_tuple` returns it, `read` only the logical element count)."""
    try:
        shape = list(y.shape)
        if prod(shape) == 0:
            # Nothing to read (MNN's read of an empty tensor fails): the empty output, whole
            # buffers included (a packed buffer of a shape with a 0 dim has no element either).
            values = np.zeros(0, dtype=READ_AS[dtype])
            if whole:
                shape = [0]
        elif whole:
            values = np.array(y.read_as_tuple(), dtype=READ_AS[dtype])
            shape = [values.size]
        else:
            values = np.asarray(y.read()).astype(READ_AS[dtype], copy=False)
    except Exception as e:
        raise engine_error(e, "computing the output") from None
    text = engine_text()
    if text:
        # MNN computed something but said why it is wrong (for instance "result is undefined").
        raise OpError(None, f"MNN: {text}"[:600])
    return encode_bytes(dtype, shape, np.ascontiguousarray(values).tobytes())


def ints(values):
    return F.const(np.asarray(values, dtype=np.int32).reshape(-1), [len(values)], F.NCHW, F.int)


def build(fn, *args):
    try:
        return fn(*args)
    except (OpError, Unsupported):
        raise
    except Exception as e:
        raise engine_error(e, "building the graph") from None


def stage(name, op, fn, *args):
    """One MNN op of the graph, whose output shape MNN computes at once: an MNN op that cannot
    compute it has rejected its arguments, and the error says which op it was."""
    try:
        y = fn(*args)
        if y.shape is None:
            raise ValueError("no shape")
        return y
    except (OpError, Unsupported):
        raise
    except Exception as e:
        raise engine_error(e, name, op) from None


# ----------------------------------------------------------------------------------------------
# shuffle: Transpose -> Reshape -> Transpose


def run_shuffle(attrs, t):
    x = var_of(t[0])
    p1 = int_list(attrs, "first_transpose")
    if p1 is not None:
        x = stage("Transpose", "shuffle", F.transpose, x, p1)
    dims = t[1].ints("reshape_dims") if t[1] is not None else int_list(attrs, "reshape_dims")
    if dims is not None:
        if not attrs.get("zero_is_placeholder", True) and 0 in dims:
            raise Unsupported("MNN's Reshape reads a 0 as 'copy the input dim': it has no zero-length dim")
        x = stage("Reshape", "shuffle", F.reshape, x, dims)
    p2 = int_list(attrs, "second_transpose")
    if p2 is not None:
        x = stage("Transpose", "shuffle", F.transpose, x, p2)
    return read(x, t[0].dtype)


# ----------------------------------------------------------------------------------------------
# slice: StridedSlice; FILL and REFLECT pad first (MNN Pad CONSTANT / REFLECT), WRAP and CLAMP
# read their coordinates with Gathers (MNN's Pad has no wrap or edge mode).


def gather_axis(x, axis, index):
    """MNN Gather along `axis`: a Transpose bringing the axis first, GatherV2 on axis 0, and the
    inverse Transpose (MNN's Python `gather` takes axis 0)."""
    rank = len(x.shape)
    if axis == 0:
        return F.gather(x, ints(index))
    perm = [axis] + [a for a in range(rank) if a != axis]
    inverse = [perm.index(a) for a in range(rank)]
    return F.transpose(F.gather(F.transpose(x, perm), ints(index)), inverse)


def source(mode, x, d):
    """The input coordinate that WRAP/CLAMP read for coordinate x on an axis of d > 0 elements
    (docs/semantics.md §2.2)."""
    if mode == "wrap":
        return x % d
    return min(max(x, 0), d - 1)


def run_slice(attrs, t):
    mode = attrs.get("mode", "strict_bounds")
    dtype = t[0].dtype
    supported(dtype, "input")
    x = var_of(t[0])
    shape = list(t[0].shape)
    rank = len(shape)
    if mode in ("wrap", "clamp"):
        # The coordinates of each axis, gathered: x = y·stride + start through the mode.
        plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4], pad=False)
        if not plan.axes_distinct_inside():
            raise Unsupported(f"axes {plan.axes}: MNN's Gather takes one axis of the input at a time")
        for a, s0, n, st in zip(plan.axes, plan.starts, plan.sizes, plan.steps):
            a %= rank
            d = shape[a]
            if n < 0:
                raise Unsupported(f"size {n}: no Gather of a negative count")
            index = [source(mode, y * st + s0, d) if d > 0 else y * st + s0 for y in range(n)]
            x = build(gather_axis, x, a, index)
        return read(x, dtype)
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4])
    if mode == "fill":
        x = pad_fill(x, plan, t[4], dtype)
    elif mode == "reflect":
        for kind, before, after in plan.pad_stages({"reflect": "reflect", "edge": "edge"}):
            x = pad_reflect(x, kind, before, after)
    entries, gathers = negative_steps_gathered(*plan.slice_and_gathers(), plan, rank)
    short = attrs.get("axes") is None and t[5] is None and len(plan.starts) < rank
    if short and not gathers and not plan.padded:
        # Fewer entries than dims and no axes: the lists go to StridedSlice as they are (MNN
        # slices the leading axes).
        x = build(F.strided_slice, x, ints(plan.starts), ints(plan.ends), ints(plan.steps), 0, 0)
    elif entries:
        x = strided_slice(x, entries, plan, rank)
    for axis, index in gathers:
        x = build(gather_axis, x, axis, index.tolist())
    return read(x, dtype)


def negative_steps_gathered(entries, gathers, plan, rank):
    """An axis of negative step whose coordinates all lie inside the (padded) axis becomes a
    Gather of those coordinates: MNN's StridedSlice with a negative step can write past its
    output buffer and corrupt the process's heap
    (repro/strided_slice_negative_step_writes_past_output.py). Any other entry stays for
    StridedSlice to judge."""
    if not plan.axes_distinct_inside():
        return entries, gathers
    gathered = {}
    for s0, a, st, n in zip(plan.starts, plan.axes, plan.steps, plan.sizes):
        index = [s0 + y * st for y in range(max(n, 0))]
        if st < 0 and index and all(0 <= i < plan_length(plan, a % rank) for i in index):
            gathered[a % rank] = np.asarray(index, dtype=np.int64)
    kept = [entry for entry in entries if entry[2] % rank not in gathered]
    return kept, gathers + list(gathered.items())


def paddings(before, after):
    return F.const(np.array([v for pair in zip(before, after) for v in pair], dtype=np.int32),
                   [len(before), 2], F.NCHW, F.int)


def pad_reflect(x, kind, before, after):
    if kind == "reflect":
        return build(F.pad, x, paddings(before, after), F.REFLECT)
    # An axis of one element reflects onto itself: a Gather of its element.
    for axis, (b, a) in enumerate(zip(before, after)):
        if b or a:
            x = build(gather_axis, x, axis, [0] * (b + 1 + a))
    return x


def pad_fill(x, plan, fill, dtype):
    """MNN Pad CONSTANT pads with zeros; a fill value whose bits are not all zero is put in by a
    Select on a mask padded the same way."""
    if not plan.padded:
        return x
    if fill is not None:
        if prod(fill.shape) != 1:
            raise Unsupported(f"a fill value of shape {fill.shape}: no one value for the Select")
        supported(fill.dtype, "fill value")
    padded = build(F.pad, x, paddings(plan.before, plan.after), F.CONSTANT)
    if fill is None or not any(fill.data):
        return padded  # a zero of any type converts to the input type's 0
    value = const(fill.dtype, fill.data, fill.shape)
    if fill.dtype != dtype:
        value = build(F.cast, value, MNN_TYPE[dtype])
    ones = F.const(np.ones(prod(plan.shape), dtype=np.int32), list(plan.shape), F.NCHW, F.int)
    mask = build(F.pad, ones, paddings(plan.before, plan.after), F.CONSTANT)
    return build(F.select, mask, padded, value)


def strided_slice(x, entries, plan, rank):
    """MNN StridedSlice over every axis (axes not listed whole). A downward slice that runs to
    the front (the converter's end -(d + 1)) sets the axis's end mask."""
    begin, end, stride = [0] * rank, [0] * rank, [1] * rank
    end_mask = 0
    listed = set()
    for s0, e, a, st in entries:
        if not -rank <= a < rank or a % rank in listed:
            raise Unsupported(f"axes {plan.axes}: MNN's StridedSlice has one entry per input axis, no axes list")
        a %= rank
        listed.add(a)
        begin[a], end[a], stride[a] = s0, e, st
        if st < 0 and e < -plan_length(plan, a):
            end_mask |= 1 << a
    for a in range(rank):
        if a not in listed:
            end_mask |= 1 << a
    return build(F.strided_slice, x, ints(begin), ints(end), ints(stride), 0, end_mask)


def plan_length(plan, axis):
    return plan.shape[axis] + plan.before[axis] + plan.after[axis]


# ----------------------------------------------------------------------------------------------
# as_strided: Reshape to 1-D, Gather of the view's flat indices (MNN has no strided view op)


def run_as_strided(attrs, t):
    x = var_of(t[0])
    index = as_strided_indices(attrs)
    flat = build(F.reshape, x, [-1])
    y = build(F.gather, flat, F.const(index.reshape(-1).astype(np.int32), [index.size], F.NCHW, F.int))
    if index.ndim == 0:
        raise Unsupported("a view of no dims: MNN's Reshape to [] kills the process (repro/reshape_to_rank0_crashes.py)")
    y = build(F.reshape, y, list(index.shape))
    return read(y, t[0].dtype)


# ----------------------------------------------------------------------------------------------
# scale: Cast to float32 -> Mul -> Add -> Pow -> Cast (MNN's binary ops broadcast the weights)

BINARY = {"scale": F.multiply, "shift": F.add, "power": F.pow}


def run_scale(attrs, t):
    x = t[0]
    supported(x.dtype, "input")
    out_dtype = attrs.get("output_dtype") or x.dtype
    supported(out_dtype, "output")
    weights = scale_weights(attrs, x.shape)
    y = var_of(x)
    if x.dtype != "float32":
        y = build(F.cast, y, F.float)
    for name, w in weights:
        wv = F.const(w.reshape(-1).astype("<f4"), list(w.shape), F.NCHW, F.float)
        y = build(BINARY[name], y, wv)
    if out_dtype != "float32":
        y = build(F.cast, y, MNN_TYPE[out_dtype])
    return read(y, out_dtype)


# ----------------------------------------------------------------------------------------------
# reformat: MNN's own conversion between its data formats. A format is declared only where its
# memory image is an MNN data format's at the same logical shape, checked on data:
#   CHW4 = NC4HW4 at rank 4 (MNN packs axis 1 by 4, zero padding; its buffer is
#          [C/4][N][H][W][4], the batch inside each block of channels, so the two agree for
#          N = 1 or C <= 4 only: known-failures.txt);
#   HWC  = NHWC   at rank 4.
# MNN's channel is always axis 1: at rank 3 it packs the H axis, at rank 5 the fourth-to-last
# (NC4DHW4, none of ours), and its NHWC conversion of a tensor of rank other than 4 reorders the
# shape but not the data (README.md): those ranks, and DHWC, are `unsupported`.

NATIVE = {"CHW4": F.NC4HW4, "HWC": F.NHWC}


def layout(fmt, shape):
    if fmt == "LINEAR":
        return F.NCHW
    if fmt not in NATIVE:
        raise Unsupported(f"MNN has no data format with the memory image of {fmt}")
    if len(shape) != 4:
        raise Unsupported(f"MNN's {fmt} layout is its {'NC4HW4' if fmt == 'CHW4' else 'NHWC'} at rank 4 only, got rank {len(shape)}")
    return NATIVE[fmt]


def run_reformat(attrs, t):
    x = t[0]
    src, dst = attrs.get("from"), attrs.get("to")
    shape = int_list(attrs, "shape")
    if src == "LINEAR":
        if shape is not None and shape != x.shape:
            raise Unsupported(f"shape {shape} differs from the LINEAR input's {x.shape}: which one to lay out")
        shape = x.shape
    elif shape is None:
        raise Unsupported(f"reformat from {src} without the logical shape: no MNN tensor to describe the buffer")
    if any(d < 0 for d in shape):
        raise Unsupported(f"negative dim in shape {shape}: no MNN tensor of that shape")
    src_fmt, dst_fmt = layout(src, shape), layout(dst, shape)
    supported(x.dtype, "input")
    if src != "LINEAR" and len(x.shape) != 1:
        raise Unsupported(f"a {src} buffer of shape {x.shape}: the adapter gives MNN the 1-D memory image only")
    # The buffer becomes an MNN tensor of the logical shape in the source's data format (an NHWC
    # tensor is described by its NHWC dims); MNN checks the byte count against that format.
    dims = list(shape)
    if src_fmt == F.NHWC:
        dims = [shape[0], shape[2], shape[3], shape[1]]
    try:
        v = const(x.dtype, x.data, dims, src_fmt)
    except (OpError, Unsupported):
        raise
    except Exception as e:
        raise engine_error(e, "building the buffer tensor", "reformat") from None
    if src != "LINEAR" and dst != "LINEAR":
        # X -> Y is unpack then pack (docs/protocol.md): MNN converts to NCHW, then to Y (its
        # conversion of a tensor to its own format keeps the buffer, padding included).
        v = build(F.convert, v, F.NCHW)
    y = build(F.convert, v, dst_fmt)
    return read(y, x.dtype, whole=dst != "LINEAR")


# ----------------------------------------------------------------------------------------------
# Cases, hello

RUN = {
    "shuffle": run_shuffle,
    "slice": run_slice,
    "as_strided": run_as_strided,
    "scale": run_scale,
    "reformat": run_reformat,
}



def run(op, attrs, inputs):
    if op not in RUN:
        raise Unsupported(f"op {op!r} is not mapped onto MNN")
    tensors = inputs_of(inputs, INPUT_COUNT[op])
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    engine_text()
    return RUN[op](attrs, tensors)


def attempt(op, attrs, tensors):
    engine_text()
    RUN[op](attrs, tensors)


def hello():
    return {
        "name": f"mnn-{MNN.version()}",
        "ops": OPS,
        "dtypes": probe(list(MNN_TYPE) + ["bool", "int4", "int64", "fp8", "float16", "bfloat16"], attempt),
        "attributes": {"reformat": {"format": ["LINEAR", *NATIVE]}},
        "engine": {"name": "mnn", "version": MNN.version()},
        "composed": composed_of(__file__),
    }


if __name__ == "__main__":
    main(hello, run)
