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

from wire import INPUT_COUNT, OPS, OpError, Unsupported, composed, composed_of, encode_bytes, inputs_of, int_list, main, probe, prod  # noqa: E402
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


# MNN reads every index, begin, end, stride and dim as int32: a value outside it never reaches MNN
# (numpy refuses to convert it, and MNN's own int32 arithmetic would wrap it).
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def fits32(value):
    return INT32_MIN <= value <= INT32_MAX


def ints(values):
    """An MNN int32 constant of `values`, every one inside int32 (the callers make sure)."""
    return F.const(np.asarray(values, dtype=np.int32).reshape(-1), [len(values)], F.NCHW, F.int)


def indices(index):
    """An MNN int32 constant of Gather indices. An index outside int32 is outside every MNN axis,
    and so is the nearest int32 value: MNN's Gather judges it as it judges any index outside."""
    return ints(np.clip(np.asarray(index, dtype=np.int64).reshape(-1), INT32_MIN, INT32_MAX))


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
    shape = list(t[0].shape)
    p1 = int_list(attrs, "first_transpose")
    if p1 is not None:
        permutation_fits(p1)
        x = stage("Transpose", "shuffle", F.transpose, x, p1)
        shape = [shape[p] for p in p1]
    dims = t[1].ints("reshape_dims") if t[1] is not None else int_list(attrs, "reshape_dims")
    if dims is not None:
        zero = attrs.get("zero_is_placeholder", True)
        if not zero and 0 in dims:
            raise Unsupported("MNN's Reshape reads a 0 as 'copy the input dim': it has no zero-length dim")
        if not reshape_fits(dims, shape, zero):
            raise reshape_rules(dims, shape, zero) or Unsupported(
                f"reshape dims {dims} make a tensor with a dim or element count outside int32, which MNN's Reshape cannot describe")
        x = stage("Reshape", "shuffle", F.reshape, x, dims)
    p2 = int_list(attrs, "second_transpose")
    if p2 is not None:
        permutation_fits(p2)
        x = stage("Transpose", "shuffle", F.transpose, x, p2)
    return read(x, t[0].dtype)


def permutation_fits(perm):
    """A permutation entry outside int32 is no axis of any tensor (MNN would read it wrapped:
    2^32 as axis 0)."""
    if not all(fits32(p) for p in perm):
        raise OpError("invalid_permutation", f"permutation {perm} has an entry outside int32: no axis of a rank-{len(perm)} tensor")


def reshape_fits(dims, shape, zero):
    """Whether MNN computes the reshape in int32 without wrapping: every dim inside int32, and the
    product of the dims it multiplies (0 placeholders as the input dims they copy, -1 left out)
    too. Otherwise MNN reads 2^40 as 0 (a placeholder: [2^40, 2^40] on [2, 3] gave [2, 3]) or
    reports a wrapped product ("6 -> -2" for [2^31 - 1, 2]), whose sign errors.py would read as a
    dim below -1."""
    if not all(fits32(d) for d in dims):
        return False
    product = 1
    for position, d in enumerate(dims):
        if d == 0 and zero:
            d = shape[position] if position < len(shape) else 1
        if d != -1:
            product *= abs(d)
    return product <= INT32_MAX


def reshape_rules(dims, shape, zero):
    """The error docs/semantics.md §1.3 gives a reshape MNN cannot be given (reshape_fits), in the
    reference's order (src/ops/shuffle.rs): a dim below -1 or two -1s, a 0 placeholder past the
    input's rank (invalid_reshape), then the volume: -1 beside dims multiplying to 0
    (indeterminate_wildcard), a -1 with no integer solution or dims that do not keep the element
    count (volume_mismatch). None when the rules allow the reshape."""
    if any(d < -1 for d in dims) or dims.count(-1) > 1:
        return OpError("invalid_reshape", f"reshape dims {dims}: a dim below -1 or more than one -1")
    known = 1
    for position, d in enumerate(dims):
        if d == 0 and zero:
            if position >= len(shape):
                return OpError("invalid_reshape", f"reshape dim 0 at position {position} copies no dim of the input {shape}")
            d = shape[position]
        if d != -1:
            known *= d
    volume = prod(shape)
    if -1 in dims:
        if known == 0:
            return OpError("indeterminate_wildcard", f"-1 in reshape dims {dims} beside dims multiplying to 0")
        if volume % known:
            return OpError("volume_mismatch", f"-1 in reshape dims {dims}: {volume} elements are not a multiple of {known}")
    elif known != volume:
        return OpError("volume_mismatch", f"reshape dims {dims} hold {known} elements, the input {shape} has {volume}")
    return None


# ----------------------------------------------------------------------------------------------
# slice: StridedSlice; FILL and REFLECT pad first (MNN Pad CONSTANT / REFLECT), WRAP and CLAMP
# read their coordinates with Gathers (MNN's Pad has no wrap or edge mode). Each composing branch
# notes its key of the manifest's [composed] table (`composed`), which the reply lists.

SLICE_MODES = ("strict_bounds", "wrap", "clamp", "fill", "reflect")


def gather_axis(x, axis, index):
    """MNN Gather along `axis`: a Transpose bringing the axis first, GatherV2 on axis 0, and the
    inverse Transpose (MNN's Python `gather` takes axis 0)."""
    rank = len(x.shape)
    if axis == 0:
        return F.gather(x, indices(index))
    perm = [axis] + [a for a in range(rank) if a != axis]
    inverse = [perm.index(a) for a in range(rank)]
    return F.transpose(F.gather(F.transpose(x, perm), indices(index)), inverse)


def ceil_div(a, b):
    return -(-a // b)


def coordinates(s0, st, n, low, high):
    """min(max(s0 + y·st, low), high) for y = 0 .. n-1 (low <= high), int64, exact for any 64-bit
    start and stride, and never a Python list of n ints (n may be the element budget). x is
    linear in y, so the ys whose x lies in [low, high] are one run, found by integer division;
    the ys before it read one bound, those after it the other."""
    if st == 0 or n == 0:
        return np.full(n, min(max(s0, low), high), dtype=np.int64)
    if st > 0:
        first, last, before, after = ceil_div(low - s0, st), (high - s0) // st, low, high
    else:
        first, last, before, after = ceil_div(s0 - high, -st), (s0 - low) // -st, high, low
    first = min(max(first, 0), n)
    last = max(min(last, n - 1), first - 1)
    out = np.empty(n, dtype=np.int64)
    out[:first] = before
    out[last + 1:] = after
    out[first:last + 1] = (s0 + first * st) + np.arange(last + 1 - first, dtype=np.int64) * st
    return out


def source_coordinates(mode, s0, st, n, d):
    """The input coordinates WRAP or CLAMP read on an axis of d elements for x = y·stride + start
    (docs/semantics.md §2.2); on an axis of 0 elements the coordinates themselves (every one
    outside: MNN's Gather judges them)."""
    if d == 0:
        return coordinates(s0, st, n, INT32_MIN, INT32_MAX)
    if mode == "clamp":
        return coordinates(s0, st, n, 0, d - 1)
    y = np.arange(n, dtype=np.int64)  # wrap: (y·(st mod d) + start mod d) mod d, never past int64
    return (y * (st % d) % d + s0 % d) % d


def sizes_not_negative(plan):
    """A negative size is TensorRT's error (slice.size.negative): the converter has no end
    start + size·stride to write for it (MNN's StridedSlice would read the end from the back)."""
    negative = [n for n in plan.sizes if n < 0]
    if negative:
        raise OpError("invalid_size", f"size {plan.sizes} has a negative entry {negative[0]}")


def run_slice(attrs, t):
    mode = attrs.get("mode", "strict_bounds")
    if mode not in SLICE_MODES:
        # The modes docs/protocol.md names (the loader rejects any other, as every adapter does).
        raise OpError("invalid_input", f"unknown slice mode {mode!r}: one of {', '.join(SLICE_MODES)}")
    dtype = t[0].dtype
    supported(dtype, "input")
    x = var_of(t[0])
    if mode in ("wrap", "clamp"):
        return read(gathered_slice(x, mode, attrs, t), dtype)
    rank = len(t[0].shape)
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4])
    sizes_not_negative(plan)
    if mode == "fill":
        x = pad_fill(x, plan, t[4], dtype)
    elif mode == "reflect":
        x = pad_reflect(x, plan)
    entries, gathers = plan.slice_and_gathers()
    if gathers:
        composed("slice:stride-0")
    entries, downward = negative_steps_gathered(entries, plan, rank)
    if downward:
        composed("slice:negative-step")
    gathers += downward
    short = attrs.get("axes") is None and t[5] is None and len(plan.starts) < rank
    if short and not gathers and not plan.padded:
        # Fewer entries than dims and no axes: the lists go to StridedSlice as they are (MNN
        # slices the leading axes).
        columns = [int32_entry(s0, e, st, n, a) for s0, e, st, n, a in zip(plan.starts, plan.ends, plan.steps, plan.sizes, plan.axes)]
        begin, end, stride = ([c[i] for c in columns] for i in range(3))
        x = build(F.strided_slice, x, ints(begin), ints(end), ints(stride), 0, 0)
    elif entries:
        x = strided_slice(x, entries, plan, rank)
    for axis, index in gathers:
        x = build(gather_axis, x, axis, index)
    return read(x, dtype)


def gathered_slice(x, mode, attrs, t):
    """WRAP and CLAMP: one MNN Gather per sliced axis of the coordinates the mode reads."""
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4], pad=False)
    sizes_not_negative(plan)
    if not plan.axes_distinct_inside():
        raise Unsupported(f"axes {plan.axes}: MNN's Gather takes one axis of the input at a time")
    shape = list(t[0].shape)
    composed(f"slice:{mode.upper()}")
    for a, s0, n, st in zip(plan.axes, plan.starts, plan.sizes, plan.steps):
        a %= len(shape)
        x = build(gather_axis, x, a, source_coordinates(mode, s0, st, n, shape[a]))
    return x


def negative_steps_gathered(entries, plan, rank):
    """(entries left for StridedSlice, Gathers): an axis of negative step whose coordinates all
    lie inside the (padded) axis becomes a Gather of those coordinates: MNN's StridedSlice with a
    negative step can write past its output buffer and corrupt the process's heap
    (repro/strided_slice_negative_step_writes_past_output.py). Any other entry stays for
    StridedSlice to judge. The coordinates fall from start to start + (n-1)·step, so checking
    the two ends is checking them all."""
    if not plan.axes_distinct_inside():
        return entries, []
    gathered = {}
    for s0, a, st, n in zip(plan.starts, plan.axes, plan.steps, plan.sizes):
        if st < 0 and n > 0 and s0 < plan_length(plan, a % rank) and s0 + (n - 1) * st >= 0:
            gathered[a % rank] = s0 + np.arange(n, dtype=np.int64) * st  # inside [0, s0]
    kept = [entry for entry in entries if entry[2] % rank not in gathered]
    return kept, list(gathered.items())


def int32_entry(s0, e, st, n, axis):
    """(begin, end, stride) of one StridedSlice entry, all inside int32 (MNN's type for them). An
    axis of size 1 reads x = start alone, whatever the stride: when its end or stride leaves
    int32 (a stride of 2^63 - 1) it is the entry [start, start + 1) of stride 1, which reads the
    same coordinate. Any other entry outside int32 is one MNN's StridedSlice cannot be given."""
    if fits32(s0) and fits32(e) and fits32(st):
        return s0, e, st
    if n == 1 and fits32(s0) and fits32(s0 + 1):
        return s0, s0 + 1, 1
    raise Unsupported(f"axis {axis}: begin {s0}, end {e}, stride {st}: MNN's StridedSlice takes int32 values only")


def paddings(before, after):
    return F.const(np.array([v for pair in zip(before, after) for v in pair], dtype=np.int32),
                   [len(before), 2], F.NCHW, F.int)


def pad_reflect(x, plan):
    """REFLECT's Pads (common/convert.py pad_stages). One Pad REFLECT is MNN's own reflection;
    several (MNN's result is undefined past d-1 elements a side, so a longer reflection is
    staged) or an axis of one element (a Gather of its element) are composed: slice:REFLECT."""
    stages = plan.pad_stages({"reflect": "reflect", "edge": "edge"})
    if len(stages) > 1 or any(kind == "edge" for kind, _, _ in stages):
        composed("slice:REFLECT")
    for kind, before, after in stages:
        if kind == "reflect":
            x = build(F.pad, x, paddings(before, after), F.REFLECT)
            continue
        # An axis of one element reflects onto itself: a Gather of its element.
        for axis, (b, a) in enumerate(zip(before, after)):
            if b or a:
                x = build(gather_axis, x, axis, [0] * (b + 1 + a))
    return x


def pad_fill(x, plan, fill, dtype):
    """MNN Pad CONSTANT pads with zeros (MNN's own fill); a fill value whose bits are not all zero
    is put in by a Select on a mask padded the same way: slice:FILL."""
    if not plan.padded:
        return x
    if fill is not None:
        if prod(fill.shape) != 1:
            raise Unsupported(f"a fill value of shape {fill.shape}: no one value for the Select")
        supported(fill.dtype, "fill value")
    padded = build(F.pad, x, paddings(plan.before, plan.after), F.CONSTANT)
    if fill is None or not any(fill.data):
        return padded  # a zero of any type converts to the input type's 0
    composed("slice:FILL")
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
    sizes = {a % rank: n for a, n in zip(plan.axes, plan.sizes) if -rank <= a < rank}
    for s0, e, a, st in entries:
        if not -rank <= a < rank or a % rank in listed:
            raise Unsupported(f"axes {plan.axes}: MNN's StridedSlice has one entry per input axis, no axes list")
        a %= rank
        listed.add(a)
        begin[a], end[a], stride[a] = s0, e, st = int32_entry(s0, e, st, sizes[a], a)
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


def view_values(attrs):
    """ATB's checks of the values of size, stride and offset (docs/semantics.md §5.2, ParamCheck)
    when their counts let the converter write indices: the Gather sees only the flat indices
    computed from them, and MNN's Gather answers an index outside the input with 0, so an offset
    of -1 would be an `ok` of zeros. A size entry <= 0 is invalid_size, a stride entry < 0
    invalid_stride, an offset < 0 invalid_offset."""
    size, stride, offset = (int_list(attrs, name) for name in ("size", "stride", "offset"))
    if size is None or stride is None or offset is None or len(stride) != len(size) or len(offset) != 1 or len(size) > 8:
        return  # as_strided_indices says why it writes no indices
    if any(n <= 0 for n in size):
        raise OpError("invalid_size", f"size {size} has an entry <= 0")
    if any(st < 0 for st in stride):
        raise OpError("invalid_stride", f"stride {stride} has a negative entry")
    if offset[0] < 0:
        raise OpError("invalid_offset", f"offset {offset[0]} is negative")
    if offset[0] + sum((n - 1) * st for n, st in zip(size, stride)) > np.iinfo(np.int64).max:
        raise Unsupported(f"the view reaches past 2^63 - 1 elements: no 64-bit Gather index to write (offset {offset[0]}, size {size}, stride {stride})")


def run_as_strided(attrs, t):
    x = var_of(t[0])
    view_values(attrs)
    index = as_strided_indices(attrs)
    if index.ndim == 0:
        raise Unsupported("a view of no dims: MNN's Reshape to [] kills the process (repro/reshape_to_rank0_crashes.py)")
    composed("as_strided")
    flat = build(F.reshape, x, [-1])
    y = build(F.gather, flat, indices(index))
    y = build(F.reshape, y, list(index.shape))
    return read(y, t[0].dtype)


# ----------------------------------------------------------------------------------------------
# scale: Cast to float32 -> Mul -> Add -> Pow -> Cast (MNN's binary ops broadcast the weights)

BINARY = {"scale": F.multiply, "shift": F.add, "power": F.pow}


SCALE_MODES = ("uniform", "channel", "elementwise")


def run_scale(attrs, t):
    x = t[0]
    if attrs.get("mode") not in SCALE_MODES:
        # The modes docs/protocol.md names (scale_weights would read any other as elementwise).
        raise OpError("invalid_input", f"unknown scale mode {attrs.get('mode')!r}: one of {', '.join(SCALE_MODES)}")
    supported(x.dtype, "input")
    out_dtype = attrs.get("output_dtype") or x.dtype
    supported(out_dtype, "output")
    weights = scale_weights(attrs, x.shape)
    composed("scale")
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


# No `batch` in the hello: MNN's expression API computes each case when it is read, with no build
# to share, so a batch saves nothing inside the adapter (2,960 cases cost 0.55 s of CPU singly or
# in batches alike), and the whole run measured slower batched (3.5 s of CPU against 2.9 s:
# README.md, "Batches"). A batch request is still answered, case by case.


if __name__ == "__main__":
    main(hello, run)
