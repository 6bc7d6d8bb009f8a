"""What a TensorRT-to-engine converter computes from static shapes and attributes before it writes
the engine's ops, shared by the engine adapters: Slice ends and Pad amounts, AsStrided's Gather
indices, Scale's weight shapes, and the reformat layouts (formats: docs/protocol.md "reformat").

Only the converter's own checks live here, the ones without which it cannot write the graph
(lists of one length, an axis to pad, a channel axis to place weights on, a format's rank); every
other rule is left to the engine, so that the suite sees the engine's behaviour.
"""

import numpy as np

from wire import OpError, Unsupported, check_budget, float_list, int_list, list_from, prod

INT64_MIN = -(1 << 63)


class SlicePlan:
    """Slice as Pad (modes other than STRICT_BOUNDS) then a strided Slice.

    `before`/`after`: pads per input axis (all 0 for STRICT_BOUNDS); `starts`, `ends`, `steps`,
    `axes`: the Slice of the padded tensor, ends as ONNX/OpenVINO Slice read them.

    With `pad=False` (an engine that maps a mode onto a Gather of the coordinates instead) no
    pads are planned: `starts` are the case's own."""

    def __init__(self, attrs, x, start_t, size_t, stride_t, axes_t, fill, pad=True):
        rank = len(x.shape)
        self.mode = attrs.get("mode", "strict_bounds")
        start = list_from(attrs, "start", start_t)
        size = list_from(attrs, "size", size_t)
        stride = list_from(attrs, "stride", stride_t)
        axes = list_from(attrs, "axes", axes_t)
        if start is None or size is None:
            raise OpError("invalid_input", "slice needs start and size")
        if stride is None:
            stride = [1] * len(start)
        if axes is None:
            axes = list(range(len(start)))  # the engines' default: the leading axes
        if not len(start) == len(size) == len(stride) == len(axes):
            raise OpError("rank_mismatch", f"start {start}, size {size}, stride {stride}, axes {axes} differ in length")
        if fill is not None and self.mode != "fill":
            # The engines have nowhere to put a fill value outside a constant Pad.
            raise OpError("fill_not_allowed", f"a fill value has no place in mode {self.mode}")
        out_shape = list(x.shape)
        for a, s in zip(axes, size):
            if -rank <= a < rank:
                out_shape[a] = max(s, 0)
        check_budget(out_shape)
        self.before, self.after = [0] * rank, [0] * rank
        if self.mode != "strict_bounds" and pad:
            for a, s0, n, d in zip(axes, start, size, stride):
                if not -rank <= a < rank:
                    raise OpError("invalid_axes", f"axis {a} outside [-{rank}, {rank - 1}]")
                if n <= 0:
                    continue
                lo, hi = min(s0, s0 + (n - 1) * d), max(s0, s0 + (n - 1) * d)
                self.before[a % rank] = max(0, -lo)
                self.after[a % rank] = max(0, hi - (x.shape[a % rank] - 1))
            padded = [d + b + e for d, b, e in zip(x.shape, self.before, self.after)]
            if prod(padded) > 4 * max(prod(out_shape), 1 << 16):
                raise Unsupported(f"the Pad before the Slice would hold {prod(padded)} elements for {prod(out_shape)} outputs")
            start = [s0 + self.before[a % rank] for a, s0 in zip(axes, start)]
        self.padded = any(self.before) or any(self.after)
        ends = []
        for s0, n, d in zip(start, size, stride):
            end = s0 + n * d
            # Slice reads a negative end from the back: a downward slice that runs to the front
            # needs the "before the first element" sentinel instead.
            ends.append(INT64_MIN if d < 0 and end < 0 and n > 0 else end)
        self.starts, self.ends, self.steps, self.axes, self.sizes = start, ends, stride, axes, size


def as_strided_indices(attrs):
    """The flat indices `offset + Σ i_j·stride_j` of the view, of shape `size` (int64)."""
    size = int_list(attrs, "size", required=True)
    stride = int_list(attrs, "stride", required=True)
    offset = int_list(attrs, "offset", required=True)
    if any(s < 0 for s in size):
        raise OpError("invalid_size", f"size {size} has a negative entry")
    if len(stride) != len(size):
        raise OpError("invalid_stride", f"stride has {len(stride)} entries, size has {len(size)}")
    if len(offset) != 1:
        raise OpError("invalid_offset", f"offset must be one entry, got {offset}")
    check_budget(size)
    index = np.full(size, offset[0], dtype=np.int64)
    for axis, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = n
        index = index + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return index


def scale_weights(attrs, shape):
    """[(name, float32 weights shaped to broadcast)] for scale, shift and power, leaving out
    absent and empty ones."""
    mode = attrs.get("mode")
    rank = len(shape)
    ca = attrs.get("channel_axis")
    if ca is None:
        ca = rank - 3
    elif -rank <= ca < 0:
        ca += rank  # a negative axis counts from the end (docs/semantics.md §3.3)
    if mode == "uniform":
        wshape = []
    elif not 0 <= ca < rank:
        # No kind: a rank below 3 leaves no default axis either, and the converter cannot tell.
        raise OpError(None, f"no channel axis {ca} in a rank-{rank} input to place the weights on")
    elif mode == "channel":
        wshape = [shape[ca]] + [1] * (rank - ca - 1)
    else:
        wshape = list(shape[ca:])
    out = []
    for name in ("scale", "shift", "power"):
        w = float_list(attrs, name)
        if w is None or w.size == 0:
            continue
        if w.size != prod(wshape):
            raise OpError("invalid_weights", f"{name} has {w.size} values, mode {mode} needs {prod(wshape)}")
        out.append((name, np.ascontiguousarray(w.reshape(wshape))))
    return out


# name -> (kind, vector length V, channel axis from the end, minimum rank)
FORMATS = {
    "LINEAR": ("linear", 1, 0, 0),
    "CHW2": ("major", 2, 3, 3),
    "HWC8": ("minor", 8, 3, 3),
    "CHW4": ("major", 4, 3, 3),
    "CHW16": ("major", 16, 3, 3),
    "CHW32": ("major", 32, 3, 3),
    "DHWC8": ("minor", 8, 4, 4),
    "CDHW32": ("major", 32, 4, 4),
    "HWC": ("minor", 1, 3, 3),
    "DLA_LINEAR": ("dla_linear", 1, 3, 4),
    "DLA_HWC4": ("dla_hwc4", 1, 3, 4),
    "HWC16": ("minor", 16, 3, 3),
    "DHWC": ("minor", 1, 4, 4),
}
ELEMENT_BYTES = {"int8": 1, "uint8": 1, "fp8": 1, "bool": 1, "float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int64": 8}


def round_up(a, b):
    return -(-a // b) * b


class Layout:
    """A format's memory image of a logical `shape`, as Pad / Reshape / Transpose see it:
    `padded` (the logical shape with padding), `split` (padded, the vector split off C),
    `perm` (split -> memory order), `memory` (the memory image's shape)."""

    def __init__(self, fmt, shape, dtype, dla):
        kind, vector, from_end, min_rank = FORMATS[fmt]
        rank = len(shape)
        if kind.startswith("dla") and rank != 4:
            raise OpError("invalid_rank", f"{fmt} needs rank 4, got {rank}")
        if rank < min_rank:
            raise OpError("invalid_rank", f"{fmt} needs rank >= {min_rank}, got {rank}")
        if kind in ("major", "minor"):
            c = rank - from_end
            padded = list(shape)
            padded[c] = round_up(shape[c], vector)
            if kind == "major":
                split = padded[:c] + [padded[c] // vector, vector] + padded[c + 1:]
                perm = list(range(c + 1)) + list(range(c + 2, rank + 1)) + [c + 1]
            else:
                split = padded
                perm = list(range(c)) + list(range(c + 1, rank)) + [c]
        else:
            if dtype not in ELEMENT_BYTES:
                raise Unsupported(f"{fmt} rows of {dtype} elements")
            e = ELEMENT_BYTES[dtype]
            n, c, h, w = shape
            if kind == "dla_linear":
                padded = [n, c, h, round_up(w, max(64 // e, 1))]
                perm = [0, 1, 2, 3]
            else:
                if c not in (1, 3, 4):
                    raise OpError("invalid_channels", f"DLA_HWC4 needs C in {{1, 3, 4}}, got {c}")
                lanes = 1 if c == 1 else 4
                row = 64 if dla == "orin" else 32
                padded = [n, lanes, h, round_up(w, max(row // lanes // e, 1))]
                perm = [0, 2, 3, 1]
            split = padded
        self.shape, self.padded, self.split, self.perm = list(shape), padded, split, perm
        self.memory = [split[p] for p in perm]
        self.inverse = [perm.index(i) for i in range(len(perm))]
        self.pads = [p - s for p, s in zip(padded, shape)]


def reformat_plan(attrs, x):
    """(logical shape, unpack Layout or None, pack Layout or None) of a reformat case."""
    src, dst = attrs.get("from"), attrs.get("to")
    dla = attrs.get("dla", "orin")
    shape = int_list(attrs, "shape")
    if src == "LINEAR":
        if shape is not None and shape != x.shape:
            raise OpError("invalid_input", f"shape {shape} differs from the LINEAR input's {x.shape}")
        shape = x.shape
    elif shape is None:
        raise OpError("invalid_input", f"reformat from {src} needs the logical shape")
    if any(d < 0 for d in shape):
        raise OpError("invalid_input", f"negative dim in shape {shape}")
    check_budget(shape)
    unpack = None if src == "LINEAR" else Layout(src, shape, x.dtype, dla)
    pack = None if dst == "LINEAR" else Layout(dst, shape, x.dtype, dla)
    if pack is not None:
        check_budget(pack.padded, "buffer")
    return shape, unpack, pack
