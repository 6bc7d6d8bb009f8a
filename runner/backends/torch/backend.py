#!/usr/bin/python3
"""opspec adapter for PyTorch on CPU: each case runs as the torch calls a PyTorch user writes for
it (README.md has the table). AsStrided is `torch.as_strided` itself, the golden of Huawei's own
checks of ATB's AsStridedOperation (msit opcheck); the other ops are torch's tensor methods
(permute, reshape, slicing, flip, expand, torch.nn.functional.pad, broadcasting arithmetic,
torch.pow, torch.quantize_per_tensor, the channels_last memory formats). What the adapter computes
itself (Pad amounts, slice bounds, weight shapes) is what a converter computes from static shapes
and attributes. Where the adapter, not a torch call, decides part of a rule (a 0 placeholder, a
stride of 0 or below, staged pads, ...), the branch notes its key of the manifest's `[composed]`
(`composed(key)`), and the case's reply lists it (README.md, "Composed paths").

Runs on the system Python with Debian's python3-torch (README.md).

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))

from missing import serve_missing  # noqa: E402

try:
    import numpy  # noqa: F401 (wire.py needs it)
    import torch
    import torch.nn.functional as F
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing(__file__, missing)

from wire import INPUT_COUNT, OPS, OpError, Unsupported, check_budget, composed, composed_of, encode_bytes, inputs_of, int_list, list_from, main, probe, prod  # noqa: E402
from convert import SlicePlan, scale_weights  # noqa: E402
from errors import error_kind, unsupported  # noqa: E402

# A speed setting: the cases are tiny, and one thread leaves the machine's other core free. No
# kernel used here computes differently with another thread count (each output element is one
# input element, or one element's own arithmetic).
torch.set_num_threads(1)

TORCH_TYPE = {
    "bool": torch.bool,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "int32": torch.int32,
    "int64": torch.int64,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
}
WIRE_TYPE = {v: k for k, v in TORCH_TYPE.items()}
# A signed integer type of each element size, through which a tensor's bits reach numpy.
BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def tensor(wire):
    """The wire's bits as a contiguous CPU tensor of its type (no conversion)."""
    dtype = TORCH_TYPE.get(wire.dtype)
    if dtype is None:
        raise Unsupported(f"torch {torch.__version__} has no {wire.dtype} type")
    if not wire.data:
        return torch.empty(wire.shape, dtype=dtype)
    return torch.frombuffer(bytearray(wire.data), dtype=dtype).reshape(wire.shape)


def encode(y):
    dtype = WIRE_TYPE.get(y.dtype)
    if dtype is None:
        raise OpError("internal", f"torch returned a {y.dtype} tensor")
    y = y.contiguous()
    bits = y.view(BITS[y.element_size()]) if y.dim() else y.reshape(1).view(BITS[y.element_size()])
    return encode_bytes(dtype, y.shape, bits.numpy().tobytes())


# ----------------------------------------------------------------------------------------------
# shuffle: permute -> reshape -> permute


def run_shuffle(attrs, t):
    x = tensor(t[0])
    p1 = int_list(attrs, "first_transpose")
    dims = t[1].ints("reshape_dims") if t[1] is not None else int_list(attrs, "reshape_dims")
    p2 = int_list(attrs, "second_transpose")
    if p1 is not None:
        x = x.permute(p1)
    if dims is not None:
        if attrs.get("zero_is_placeholder", True) and 0 in dims:
            # torch.reshape has no placeholder: a 0 is a dim of length 0. The adapter copies the
            # dim at the same position of the (first-transposed) input, as TensorRT's 0 does.
            if any(d == 0 and i >= x.dim() for i, d in enumerate(dims)):
                raise Unsupported(f"reshape_dims {dims}: a 0 placeholder past the input's rank {x.dim()} has no dim to copy")
            dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
            composed("shuffle:zero-placeholder")
        x = x.reshape(dims)
    if p2 is not None:
        x = x.permute(p2)
    return x


# ----------------------------------------------------------------------------------------------
# slice: torch.nn.functional.pad (WRAP circular, CLAMP replicate, REFLECT reflect, FILL constant),
# then Python slicing per axis


def pad_axis(x, axis, before, after, mode):
    """F.pad in a non-constant mode on one axis: F.pad pads the last dims of an (N, C, W)-shaped
    tensor in those modes, so the axis is moved last and the others merged into C.

    A tensor with no elements whose padded axis has some (another axis is 0: C = 0) pads to the
    empty tensor of the padded shape: there is no element to replicate or reflect, and F.pad's
    replicate and reflect kernels refuse a C of 0, where TensorRT reads no coordinate of an empty
    output (docs/semantics.md §2.7). Composed: `slice:empty-pad`. An empty padded axis still goes
    to F.pad, which judges it (empty_dimension)."""
    if not before and not after:
        return x
    if x.numel() == 0 and x.shape[axis] > 0 and mode in ("replicate", "reflect"):
        composed("slice:empty-pad")
        shape = list(x.shape)
        shape[axis] += before + after
        return x.new_empty(shape)
    moved = x.movedim(axis, -1)
    outer = list(moved.shape[:-1])
    padded = F.pad(moved.reshape(1, prod(outer), moved.shape[-1]), (before, after), mode=mode)
    return padded.reshape(outer + [padded.shape[-1]]).movedim(-1, axis)


def constant_pad(x, before, after, value):
    """F.pad in constant mode (FILL) by `before` and `after` elements on each axis.

    A padded shape with no element (an axis that stays 0) is the empty tensor of that shape,
    filled with the value so that torch still converts it (and refuses one out of the dtype's
    range, as F.pad does): torch 1.13's constant pad refuses an output axis of 0 ("resulted in a
    negative output size"), where TensorRT reads no coordinate of an empty output
    (docs/semantics.md §2.7). Composed: `slice:empty-pad`."""
    shape = [d + b + e for d, b, e in zip(x.shape, before, after)]
    if prod(shape) == 0:
        composed("slice:empty-pad")
        return x.new_empty(shape).fill_(value)
    pads = []
    for b, e in reversed(list(zip(before, after))):
        pads += [b, e]
    return F.pad(x, pads, mode="constant", value=value)


def wrap_stages(before, after, d):
    """Circular pads [(before, after)] that wrap an axis of `d` by `before` and `after`: F.pad's
    circular mode wraps at most once (a pad of at most the axis's extent), and a tensor wrapped
    onto itself stays periodic in `d` only while its extent is a multiple of `d`. So while a side
    needs more than the current extent, that side is padded by the whole extent (the extent
    doubles and stays a multiple of d) and the other side waits; the last stage pads what is left."""
    if d == 0:
        return [(before, after)]  # nothing to wrap: one pad, for torch to judge
    stages, length = [], d
    while before > length or after > length:
        step_b = length if before > length else 0
        step_a = length if after > length else 0
        stages.append((step_b, step_a))
        before, after, length = before - step_b, after - step_a, length + step_b + step_a
    if before or after:
        stages.append((before, after))
    if len(stages) > 1:
        composed("slice:wrap-periodic")
    return stages


def strided(x, axis, start, size, step):
    """`size` elements from `start` every `step` on one axis: `narrow` to the span of input
    coordinates the slice covers, then a Python slice of that step; a negative step reads the
    span flipped (torch's slicing takes no negative step), a zero step expands one element, and a
    size of 0 is the empty span at 0, whatever the start (TensorRT reads nothing there). `narrow`
    checks the span against the axis (and reads a negative start from the back): torch judges
    the bounds.

    An axis that reads one coordinate (size 1: x = start) needs no stride: `narrow(axis, start,
    1)` alone. (A Python slice of a step near 2^63 overflows torch 1.13's stride, which then
    refuses it as negative.) Composed: a size of 0 read from 0 whatever the start and stride
    (`slice:size-0`: torch's narrow would judge a start that TensorRT does not read; a start of 0
    with a positive stride is what torch is asked anyway), a stride of 0 (`slice:stride-0`), a
    negative stride (`slice:negative-step`)."""
    if size == 0:
        if start != 0 or step <= 0:
            composed("slice:size-0")
        return x.narrow(axis, 0, 0)
    if size == 1:
        return x.narrow(axis, start, 1)
    if step == 0:
        composed("slice:stride-0")
        one = x.narrow(axis, start, 1)
        shape = list(one.shape)
        shape[axis] = size
        return one.expand(shape)
    length = (size - 1) * abs(step) + 1 if size > 0 else size
    if step > 0:
        span = x.narrow(axis, start, length)
    else:
        composed("slice:negative-step")
        span = torch.flip(x.narrow(axis, start + (size - 1) * step, length), [axis])
    return span[(slice(None),) * axis + (slice(None, None, abs(step)),)]


SLICE_MODES = ("strict_bounds", "wrap", "clamp", "fill", "reflect")


def reflect_notes(mode, stages):
    """REFLECT's composed paths: a reflection past d - 1, which F.pad's reflect mode does not
    reach, as several reflect pads (`slice:reflect-periodic`); an axis of one element, which
    reflects onto itself, as a replicate pad (`slice:reflect-one-element`)."""
    if mode != "reflect":
        return
    if sum(1 for stage, _, _ in stages if stage == "reflect") > 1:
        composed("slice:reflect-periodic")
    if any(stage == "replicate" for stage, _, _ in stages):
        composed("slice:reflect-one-element")


def run_slice(attrs, t):
    mode = attrs.get("mode", "strict_bounds")
    if mode not in SLICE_MODES:
        # The wire names five modes (docs/protocol.md); the suite's loader never sends another.
        raise OpError("invalid_input", f"unknown slice mode {mode!r}: the modes are {', '.join(SLICE_MODES)}")
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4])
    x = tensor(t[0])
    rank = x.dim()
    if list_from(attrs, "axes", t[5]) is None and len(plan.axes) != rank:
        # Without axes, TensorRT's lists have an entry per dim: lists of another length go to
        # Python slicing as they are, one slice per leading axis, for torch to judge.
        return x[tuple(slice(s0, s0 + n * d, d) for s0, n, d in zip(plan.starts, plan.sizes, plan.steps))]
    for a in plan.axes:
        if not -rank <= a < rank:
            raise Unsupported(f"no axis {a} in a rank-{rank} input to place the slice on")
    axes = [a % rank for a in plan.axes]
    if len(set(axes)) != len(axes):
        raise Unsupported(f"axes {plan.axes} name one axis twice: torch slices each axis once")
    if plan.padded:
        if mode == "fill":
            value = tensor(t[4]).item() if t[4] is not None else 0
            x = constant_pad(x, plan.before, plan.after, value)
        elif mode == "wrap":
            for axis, (b, e) in enumerate(zip(plan.before, plan.after)):
                for step_b, step_a in wrap_stages(b, e, x.shape[axis]):
                    x = pad_axis(x, axis, step_b, step_a, "circular")
        else:
            stages = plan.pad_stages({"edge": "replicate", "reflect": "reflect", "constant": "constant", "wrap": "circular"})
            reflect_notes(mode, stages)
            for stage, before, after in stages:
                for axis, (b, e) in enumerate(zip(before, after)):
                    x = pad_axis(x, axis, b, e, stage)
    for axis, start, n, step in zip(axes, plan.starts, plan.sizes, plan.steps):
        x = strided(x, axis, start, n, step)
    return x


# ----------------------------------------------------------------------------------------------
# as_strided: torch.as_strided


def run_as_strided(attrs, t):
    size = int_list(attrs, "size", required=True)
    stride = int_list(attrs, "stride", required=True)
    offset = int_list(attrs, "offset", required=True)
    if len(offset) != 1:
        raise Unsupported(f"offset {offset}: torch.as_strided takes one storage offset, ATB's list has {len(offset)} entries")
    if all(n >= 0 for n in size):
        check_budget(size)
    # The input is contiguous and row-major: its storage is flat(input), as in the golden
    # torch.as_strided(x, size, stride, offset[0]) of Huawei's checks.
    return torch.as_strided(tensor(t[0]), size, stride, offset[0])


# ----------------------------------------------------------------------------------------------
# scale: to(float32) * scale + shift, torch.pow, then to(dtype) / torch.quantize_per_tensor


def run_scale(attrs, t):
    weights = scale_weights(attrs, t[0].shape)
    y = tensor(t[0]).to(torch.float32)
    for name, w in weights:
        w = torch.from_numpy(w)
        if name == "scale":
            y = y * w
        elif name == "shift":
            y = y + w
        else:
            y = torch.pow(y, w)
    out = attrs.get("output_dtype") or t[0].dtype
    if out == "int8":
        # TensorRT's INT8 output of a Scale is a quantization with scale 1.
        return torch.quantize_per_tensor(y, 1.0, 0, torch.qint8).int_repr()
    if out not in TORCH_TYPE:
        raise Unsupported(f"torch {torch.__version__} has no {out} type")
    return y.to(TORCH_TYPE[out])


# ----------------------------------------------------------------------------------------------
# reformat: torch's channels_last memory formats, HWC (rank 4: NHWC) and DHWC (rank 5: NDHWC)

MEMORY_FORMAT = {"HWC": (torch.channels_last, 4), "DHWC": (torch.channels_last_3d, 5)}


def torch_shape(shape, rank, fmt):
    """The shape torch lays out for a logical `shape` in a format of `rank`: the shape itself at
    that rank, with one leading axis added one below it, with the leading axes merged above it
    (the formats' leading axes stay outermost, in order); below, the shape as it is (torch judges).
    Composed (`reformat:<fmt>`): an axis added or axes merged."""
    if len(shape) == rank - 1:
        composed(f"reformat:{fmt}")
        return [1] + list(shape)
    if len(shape) > rank:
        composed(f"reformat:{fmt}")
        cut = len(shape) - rank + 1
        return [prod(shape[:cut])] + list(shape[cut:])
    return list(shape)


def storage(y):
    """The tensor's storage in memory order (a dense tensor's numel elements)."""
    return torch.as_strided(y, (y.numel(),), (1,), y.storage_offset())


def pack(x, fmt):
    memory_format, rank = MEMORY_FORMAT[fmt]
    y = x.reshape(torch_shape(x.shape, rank, fmt)).contiguous(memory_format=memory_format)
    return storage(y).clone()


def unpack(buffer, fmt, shape):
    memory_format, rank = MEMORY_FORMAT[fmt]
    layout = torch.empty(torch_shape(shape, rank, fmt), dtype=buffer.dtype, memory_format=memory_format)
    image = storage(layout)
    image.copy_(buffer.view(image.shape))
    return layout.contiguous().reshape(shape)


def run_reformat(attrs, t):
    src, dst = attrs.get("from"), attrs.get("to")
    for fmt in (src, dst):
        if fmt != "LINEAR" and fmt not in MEMORY_FORMAT:
            raise Unsupported(f"torch has no memory format for {fmt}")
    shape = int_list(attrs, "shape")
    x = tensor(t[0])
    if src == "LINEAR":
        if shape is not None and shape != list(x.shape):
            raise Unsupported(f"shape {shape} differs from the LINEAR input's {list(x.shape)}: which one to lay out")
        shape = list(x.shape)
    elif shape is None:
        raise Unsupported(f"reformat from {src} without the logical shape: no layout to read")
    if any(d < 0 for d in shape):
        raise Unsupported(f"negative dim in shape {shape}: no layout to read")
    check_budget(shape)
    y = x if src == "LINEAR" else unpack(x, src, shape)
    return y if dst == "LINEAR" else pack(y, dst)


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
        raise Unsupported(f"op {op!r} is not mapped onto torch")
    return run_tensors(op, attrs, inputs_of(inputs, INPUT_COUNT[op]))


def run_tensors(op, attrs, tensors):
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    try:
        return encode(RUN[op](attrs, tensors))
    except (OpError, Unsupported):
        raise
    except (RuntimeError, IndexError, ValueError, OverflowError) as e:  # torch's checks
        text = f"torch: {type(e).__name__}: {' '.join(str(e).split())[:400]}"
        if unsupported(text):
            raise Unsupported(text) from None
        raise OpError(error_kind(text, op), text) from None


def hello():
    return {
        "name": f"torch-{torch.__version__}",
        "engine": {"name": "torch", "version": torch.__version__},
        "ops": OPS,
        # The dtypes in which the installed torch runs each op's simplest case.
        "dtypes": probe(TORCH_TYPE, run_tensors),
        # torch lays out two of TensorRT's formats (its memory formats), no other.
        "attributes": {"reformat": {"format": ["LINEAR", *MEMORY_FORMAT]}},
        "composed": composed_of(__file__),
    }


if __name__ == "__main__":
    main(hello, run)
