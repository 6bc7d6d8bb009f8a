"""What a TensorRT-to-engine converter computes from static shapes and attributes before it writes
the engine's ops, shared by the engine adapters: Slice ends and Pad amounts, AsStrided's Gather
indices, Scale's weight shapes, and the reformat layouts (formats: docs/protocol.md "reformat").

The converter rejects nothing on TensorRT's behalf: a case it cannot write as the engine's ops
(lists of different lengths, no channel axis to place weights on, a format without a layout at
that rank) is `Unsupported`, with why; every rule is left to the engine, so that the suite sees
the engine's behaviour. The one error it gives itself is `too_large`, the protocol's element
budget (docs/protocol.md).
"""

import numpy as np

from wire import OpError, Unsupported, check_budget, float_list, int_list, list_from, prod

class SlicePlan:
    """Slice as Pad (modes other than STRICT_BOUNDS) then a strided Slice.

    `before`/`after`: pads per input axis (all 0 for STRICT_BOUNDS); `starts`, `ends`, `steps`,
    `axes`, `sizes`: the Slice of the padded tensor, ends as ONNX/OpenVINO Slice read them.

    With `pad=False` (an engine that maps a mode onto a Gather of the coordinates instead) no
    pads are planned: `starts` are the case's own.

    The converter writes each list as the case gives it and leaves every rule to the engine: an
    axis it cannot pad (outside the input) is not padded, and the engine's Slice sees the axis.
    What it cannot write at all (lists of different lengths: Slice's ends are start + size·stride
    entry by entry; a fill value in a mode without a constant Pad) is `Unsupported`."""

    def __init__(self, attrs, x, start_t, size_t, stride_t, axes_t, fill, pad=True):
        rank = len(x.shape)
        self.mode = attrs.get("mode", "strict_bounds")
        start = list_from(attrs, "start", start_t)
        size = list_from(attrs, "size", size_t)
        stride = list_from(attrs, "stride", stride_t)
        axes = list_from(attrs, "axes", axes_t)
        if start is None or size is None:
            raise Unsupported("the converter needs start and size to write the Slice")
        if stride is None:
            stride = [1] * len(start)
        if axes is None:
            axes = list(range(len(start)))  # the engines' default: the leading axes
        if not len(start) == len(size) == len(stride) == len(axes):
            raise Unsupported(f"start {start}, size {size}, stride {stride}, axes {axes} differ in length: no Slice ends start + size·stride to write")
        if fill is not None and self.mode != "fill":
            raise Unsupported(f"a fill value has no place in the engine's ops for mode {self.mode} (only a constant Pad takes one)")
        out_shape = list(x.shape)
        for a, s in zip(axes, size):
            if -rank <= a < rank:
                out_shape[a] = max(s, 0)
        check_budget(out_shape)
        self.before, self.after = [0] * rank, [0] * rank
        if self.mode != "strict_bounds" and pad:
            for a, s0, n, d in zip(axes, start, size, stride):
                if not -rank <= a < rank or n <= 0:
                    continue
                lo, hi = min(s0, s0 + (n - 1) * d), max(s0, s0 + (n - 1) * d)
                self.before[a % rank] = max(0, -lo)
                self.after[a % rank] = max(0, hi - (x.shape[a % rank] - 1))
            padded = [d + b + e for d, b, e in zip(x.shape, self.before, self.after)]
            if prod(padded) > 4 * max(prod(out_shape), 1 << 16):
                raise Unsupported(f"the Pad before the Slice would hold {prod(padded)} elements for {prod(out_shape)} outputs")
            start = [s0 + self.before[a % rank] if -rank <= a < rank else s0 for a, s0 in zip(axes, start)]
        self.padded = any(self.before) or any(self.after)
        self.shape = list(x.shape)
        dims = [d + b + e for d, b, e in zip(x.shape, self.before, self.after)]
        # The padded length of each sliced axis (of the longest axis for one outside the input,
        # which the engine rejects whatever the end).
        lengths = [dims[a % rank] if -rank <= a < rank else max(dims, default=0) for a in axes]
        ends = []
        for s0, n, d, length in zip(start, size, stride, lengths):
            end = s0 + n * d
            # Slice reads a negative end from the back: a downward slice that runs to the front
            # ends at -(length + 1), which is -1 ("before the first element") once the length is
            # added. INT64_MIN would say the same, but OpenVINO's CPU plugin keeps only the low
            # 32 bits of a run-time stop (repro/slice_int64_stop_truncated.py).
            ends.append(-(length + 1) if d < 0 and end < 0 and n > 0 else end)
        self.starts, self.ends, self.steps, self.axes, self.sizes = start, ends, stride, axes, size

    def axes_distinct_inside(self):
        """Whether the sliced axes are axes of the input, none named twice (either way, not
        an axis each engine op can be given one at a time)."""
        rank = len(self.shape)
        return all(-rank <= a < rank for a in self.axes) and len({a % rank for a in self.axes}) == len(self.axes)

    def slice_and_gathers(self):
        """(Slice entries [(start, end, axis, step)], Gathers [(axis, indices)]) for an engine
        whose Slice takes no step 0 and clamps an empty range apart (ONNX, OpenVINO).

        An axis of size 0 is the empty range [0, 0) with step 1: TensorRT reads no coordinate
        there, whatever the start and stride (slice.size.zero). An axis of stride 0 and size n
        reads one coordinate n times: a Gather of n copies of the start on that axis, where the
        engine judges the index as it judges any Gather index. Both only when the axes are
        distinct and inside the input; otherwise every entry goes to the Slice as given, for
        the engine to judge."""
        rank = len(self.shape)
        valid = self.axes_distinct_inside()
        entries, gathers = [], []
        for s0, e, a, d, n in zip(self.starts, self.ends, self.axes, self.steps, self.sizes):
            if valid and n == 0:
                entries.append((0, 0, a, 1))
            elif valid and d == 0 and n > 0:
                gathers.append((a % rank, np.full(n, s0, dtype=np.int64)))
            else:
                entries.append((s0, e, a, d))
        return entries, gathers

    def pad_stages(self, engine_modes):
        """The Pads to write, in order: [(mode, before, after)] with `engine_modes` naming the
        engine's mode for "constant", "edge", "reflect" and "wrap".

        An engine's reflect Pad reflects at most d - 1 elements on each side (ONNX Runtime's and
        OpenVINO's do; TensorRT's REFLECT is periodic without bound): a periodic reflection is
        written as reflect Pads of at most d - 1 each, every one ending where the reflection
        turns (a multiple of d - 1 from the start), so that the next reflects the right values.
        An axis of 1 element reflects onto itself: an edge Pad (in[0] every time)."""
        if not self.padded:
            return []
        if self.mode != "reflect":
            mode = {"clamp": "edge", "fill": "constant", "wrap": "wrap"}[self.mode]
            return [(engine_modes[mode], list(self.before), list(self.after))]
        stages = []
        edge_before = [b if d == 1 else 0 for b, d in zip(self.before, self.shape)]
        edge_after = [a if d == 1 else 0 for a, d in zip(self.after, self.shape)]
        if any(edge_before) or any(edge_after):
            stages.append((engine_modes["edge"], edge_before, edge_after))
        need_before = [b if d != 1 else 0 for b, d in zip(self.before, self.shape)]
        need_after = [a if d != 1 else 0 for a, d in zip(self.after, self.shape)]
        length = list(self.shape)

        def amount(need, length, d):
            # An empty axis has nothing to reflect: one Pad of the whole amount, for the engine to
            # judge. Otherwise what is left if the Pad can reflect it, else the most it can that
            # ends where the reflection turns (a multiple of d - 1, at least d - 1 itself).
            if d < 2 or need <= length - 1:
                return need
            return (length - 1) // (d - 1) * (d - 1)

        while any(need_before) or any(need_after):
            step_b = [amount(n, n_len, d) for n, n_len, d in zip(need_before, length, self.shape)]
            step_a = [amount(n, n_len, d) for n, n_len, d in zip(need_after, length, self.shape)]
            stages.append((engine_modes["reflect"], step_b, step_a))
            need_before = [n - b for n, b in zip(need_before, step_b)]
            need_after = [n - a for n, a in zip(need_after, step_a)]
            length = [n_len + b + a for n_len, b, a in zip(length, step_b, step_a)]
        return stages


def as_strided_indices(attrs):
    """The flat indices `offset + Σ i_j·stride_j` of the view, of shape `size` (int64)."""
    size = int_list(attrs, "size", required=True)
    stride = int_list(attrs, "stride", required=True)
    offset = int_list(attrs, "offset", required=True)
    if any(s < 0 for s in size):
        raise Unsupported(f"size {size} has a negative entry: no Gather indices of a negative count to write")
    if len(stride) != len(size):
        raise Unsupported(f"stride has {len(stride)} entries, size has {len(size)}: no Gather indices to write")
    if len(offset) != 1:
        raise Unsupported(f"offset {offset} is not one entry: no Gather indices to write")
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
        raise Unsupported(f"no channel axis {ca} in a rank-{rank} input to place the weights on")
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
            raise Unsupported(f"{name} has {w.size} values, mode {mode} needs {prod(wshape)}: no weights shape to write")
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
            raise Unsupported(f"{fmt} has a layout at rank 4 only, got rank {rank}")
        if rank < min_rank:
            raise Unsupported(f"{fmt} has a layout at rank >= {min_rank} only, got rank {rank}")
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
                    raise Unsupported(f"DLA_HWC4 has a layout for C in {{1, 3, 4}} only, got {c}")
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
            raise Unsupported(f"shape {shape} differs from the LINEAR input's {x.shape}: which one to lay out")
        shape = x.shape
    elif shape is None:
        raise Unsupported(f"reformat from {src} without the logical shape: no layout to write")
    if any(d < 0 for d in shape):
        raise Unsupported(f"negative dim in shape {shape}: no layout to write")
    check_budget(shape)
    unpack = None if src == "LINEAR" else Layout(src, shape, x.dtype, dla)
    pack = None if dst == "LINEAR" else Layout(dst, shape, x.dtype, dla)
    if pack is not None:
        check_budget(pack.padded, "buffer")
    return shape, unpack, pack

