#!/usr/bin/env python3
"""opspec backend in Python/numpy: an independent implementation of shuffle, slice,
as_strided, scale and reformat, written from the rules of docs/semantics.md
(not from the Rust interpreter), speaking the JSON Lines protocol of docs/protocol.md.

Layout ops move raw bits (integer views of the element bytes), so NaN payloads and -0.0
survive. int4 is unpacked to int8 for computation and repacked on output.

Its op, mode, format, dtype and error-kind lists are its own on purpose, not read from
schema/vocabulary.json as the engine adapters' common code reads them: an oracle written apart
from the Rust definitions catches a slip in them (a mode or format added, renamed or dropped in
Rust makes the oracle's cases fail rather than follow along).
"""

import base64
import json
import math
import os
import sys
import traceback

import numpy as np

import ml_dtypes

PROTOCOL = 1
NAME = "numpy"
OPS = ["shuffle", "slice", "as_strided", "scale", "reformat"]

try:
    MAX_ELEMENTS = int(os.environ.get("OPSPEC_MAX_ELEMENTS", str(1 << 28)))
except ValueError:
    MAX_ELEMENTS = 1 << 28

# dtype name -> numpy dtype holding the raw bits of one element (int4: unpacked int8).
RAW = {
    "bool": np.dtype(np.uint8),
    "int4": np.dtype(np.int8),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "fp8": np.dtype(np.uint8),
    "float16": np.dtype("<u2"),
    "bfloat16": np.dtype("<u2"),
    "float32": np.dtype("<u4"),
}
# Numeric view for the arithmetic op (scale).
NUMERIC = {
    "int8": np.dtype(np.int8),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype("<f4"),
}
F32 = np.dtype("<f4")
I64 = np.dtype("<i8")
ONE_F32 = np.float32(1.0)
ZERO_F32 = np.float32(0.0)

b64decode = base64.b64decode
b64encode = base64.b64encode
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode
_loads = json.loads


class OpError(Exception):
    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


class Unsupported(Exception):
    pass


def prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def check_budget(shape, what="output"):
    n = prod(shape)
    if n > MAX_ELEMENTS:
        raise OpError("too_large", f"{what} shape {list(shape)} has {n} elements, budget is {MAX_ELEMENTS}")
    return n


# ----------------------------------------------------------------------------------------------
# Tensors on the wire


class T:
    """A decoded tensor: dtype name and a numpy array of raw bits (int4: int8 values)."""

    __slots__ = ("dtype", "a")

    def __init__(self, dtype, a):
        self.dtype = dtype
        self.a = a


def decode(obj, where):
    if not isinstance(obj, dict):
        raise OpError("internal", f"{where}: tensor is not an object")
    dtype = obj.get("dtype")
    shape = obj.get("shape")
    data = obj.get("data")
    raw = RAW.get(dtype)
    if raw is None:
        raise Unsupported(f"{where}: dtype {dtype!r} is not known to this backend")
    if not isinstance(shape, list) or any(type(d) is not int or d < 0 for d in shape):
        raise OpError("internal", f"{where}: bad shape {shape!r}")
    if not isinstance(data, str):
        raise OpError("internal", f"{where}: data is not a base64 string")
    buf = b64decode(data)
    n = prod(shape)
    if dtype == "int4":
        if len(buf) != (n + 1) // 2:
            raise OpError("internal", f"{where}: int4 tensor of {n} elements needs {(n + 1) // 2} bytes, got {len(buf)}")
        b = np.frombuffer(buf, dtype=np.uint8)
        out = np.empty(2 * len(b), dtype=np.int8)
        out[0::2] = b & 0x0F
        out[1::2] = b >> 4
        out = ((out ^ 8) - 8).astype(np.int8)  # sign-extend the nibble
        a = out[:n].reshape(shape)
    else:
        if len(buf) != n * raw.itemsize:
            raise OpError("internal", f"{where}: {dtype} tensor of {n} elements needs {n * raw.itemsize} bytes, got {len(buf)}")
        a = np.frombuffer(buf, dtype=raw).reshape(shape)
    return T(dtype, a)


def encode(dtype, a):
    shape = list(a.shape)
    if dtype == "int4":
        v = (a.reshape(-1).astype(np.uint8) & 0x0F)
        if v.size % 2:
            v = np.concatenate([v, np.zeros(1, np.uint8)])
        b = (v[0::2] | (v[1::2] << 4)).astype(np.uint8)
        data = b.tobytes()
    else:
        raw = RAW[dtype]
        if a.dtype != raw:
            a = a.astype(raw)
        data = a.tobytes()
    return {"dtype": dtype, "shape": shape, "data": b64encode(data).decode("ascii")}


def int_list(attrs, name, required=False):
    v = attrs.get(name)
    if v is None:
        if required:
            raise OpError("invalid_input", f"attribute {name!r} is required")
        return None
    if not isinstance(v, list) or any(type(x) is not int for x in v):
        raise OpError("invalid_input", f"attribute {name!r} must be a list of integers, got {v!r}")
    return v


def shape_tensor(t, name):
    """A shape-tensor input: 1-D int32/int64 -> list of Python ints."""
    if t.dtype not in ("int32", "int64") or t.a.ndim != 1:
        raise OpError("invalid_input", f"input {name!r} must be a 1-D int32/int64 tensor, got {t.dtype} {list(t.a.shape)}")
    return [int(x) for x in t.a.tolist()]


def get_input(inputs, i, name):
    if i >= len(inputs) or inputs[i] is None:
        return None
    return decode(inputs[i], f"input {i} ({name})")


def list_from(attrs, inputs, name, idx):
    """A list given either as attribute `name` or as shape-tensor input `idx`."""
    a = int_list(attrs, name)
    t = get_input(inputs, idx, name) if idx is not None else None
    if t is not None:
        if a is not None:
            raise OpError("invalid_input", f"{name!r} given both as attribute and as input {idx}")
        return shape_tensor(t, name)
    return a


# ----------------------------------------------------------------------------------------------
# shuffle


# TensorRT's Dims64::MAX_DIMS (NvInferRuntimeBase.h): no tensor of shuffle, slice, scale or
# reformat has more dims (docs/semantics.md §6.1).
TRT_MAX_RANK = 8


def check_max_rank(shape, what):
    if len(shape) > TRT_MAX_RANK:
        raise OpError("invalid_rank", f"{what} {list(shape)} has {len(shape)} dims, TensorRT allows {TRT_MAX_RANK}")


def check_perm(perm, rank, which):
    if perm is None:
        return None
    if sorted(perm) != list(range(rank)):
        raise OpError("invalid_permutation", f"{which} {perm} is not a permutation of 0..{rank - 1}")
    return perm


def op_shuffle(attrs, inputs):
    x = get_input(inputs, 0, "input")
    if x is None:
        raise OpError("invalid_input", "input 0 is required")
    a = x.a
    check_max_rank(a.shape, "the input")
    p1 = check_perm(int_list(attrs, "first_transpose"), a.ndim, "first_transpose")
    if p1 is not None:
        a = a.transpose(p1)
    dims = list_from(attrs, inputs, "reshape_dims", 1)
    zip_ = attrs.get("zero_is_placeholder", True)
    if not isinstance(zip_, bool):
        raise OpError("invalid_input", f"zero_is_placeholder must be a bool, got {zip_!r}")
    if dims is not None:
        check_max_rank(dims, "the reshape dims")
        src = a.shape
        vol = prod(src)
        if any(d < -1 for d in dims):
            raise OpError("invalid_reshape", f"reshape dim < -1 in {dims}")
        if dims.count(-1) > 1:
            raise OpError("invalid_reshape", f"more than one -1 in {dims}")
        res = []
        for i, d in enumerate(dims):
            if d == 0 and zip_:
                if i >= len(src):
                    raise OpError("invalid_reshape", f"0 placeholder at position {i} but the input has rank {len(src)}")
                res.append(src[i])
            else:
                res.append(d)
        if -1 in res:
            j = res.index(-1)
            other = prod(d for k, d in enumerate(res) if k != j)
            if other == 0:
                raise OpError("indeterminate_wildcard", f"-1 with the other reshape dims multiplying to 0 ({res})")
            # When `other` does not divide the volume, the volume check below rejects the result.
            res[j] = vol // other
        if prod(res) != vol:
            raise OpError("volume_mismatch", f"reshape {res} has {prod(res)} elements, input {list(src)} has {vol}")
        a = a.reshape(res)
    p2 = check_perm(int_list(attrs, "second_transpose"), a.ndim, "second_transpose")
    if p2 is not None:
        a = a.transpose(p2)
    return encode(x.dtype, a)


# ----------------------------------------------------------------------------------------------
# slice

# NvInfer.h ISliceLayer setInput(4): the fill value converts implicitly among these types.
FILL_CONVERTIBLE = ("float32", "float16", "int8", "fp8")


def convert_fill(fill, dtype):
    """The fill value in `dtype`: rounded to nearest even for floats; for int8 an integral
    value in range (TensorRT documents no rounding for it, so anything else is rejected)."""
    if fill.dtype not in FILL_CONVERTIBLE or dtype not in FILL_CONVERTIBLE:
        raise OpError("invalid_fill", f"a {fill.dtype} fill value cannot be converted to {dtype}")
    raw = fill.a.reshape(-1)  # one element (shape [] or [1])
    if fill.dtype == "fp8":
        value = float(raw.view(ml_dtypes.float8_e4m3fn)[0])
    else:
        value = float(raw.view(NUMERIC[fill.dtype])[0])
    if dtype == "int8":
        if not (math.isfinite(value) and value == int(value) and -128 <= value <= 127):
            raise OpError("invalid_fill", f"fill value {value} has no int8 value")
        return np.array([int(value)], dtype=np.int8).reshape(fill.a.shape)
    if math.isnan(value):
        bits = {"float32": 0x7FC00000, "float16": 0x7E00, "fp8": 0x7F}[dtype]
        return np.array([bits], dtype=RAW[dtype]).reshape(fill.a.shape)
    if dtype == "fp8":
        # E4M3FN has no infinity: beyond 464 (the tie to the absent 480) nothing represents it.
        if not abs(value) <= 464.0:
            raise OpError("invalid_fill", f"fill value {value} is outside the range of fp8")
        out = np.array([value], dtype=np.float32).astype(ml_dtypes.float8_e4m3fn)
    else:
        out = np.array([value], dtype=np.float32).astype(NUMERIC[dtype])
        if math.isinf(float(out[0])) and not math.isinf(value):
            raise OpError("invalid_fill", f"fill value {value} is outside the range of {dtype}")
    return out.view(RAW[dtype]).reshape(fill.a.shape)


SLICE_MODES = ("strict_bounds", "wrap", "clamp", "fill", "reflect")


def axis_coords(start, size, stride):
    """x = y*stride + start for y in [0, size): exact Python integers, whatever their magnitude
    (one per output position along the axis, so the list stays short)."""
    return [y * stride + start for y in range(size)]


def op_slice(attrs, inputs):
    x = get_input(inputs, 0, "input")
    if x is None:
        raise OpError("invalid_input", "input 0 is required")
    a = x.a
    rank = a.ndim
    check_max_rank(a.shape, "the input")
    mode = attrs.get("mode", "strict_bounds")
    if mode not in SLICE_MODES:
        raise OpError("invalid_input", f"unknown slice mode {mode!r}")
    start = list_from(attrs, inputs, "start", 1)
    size = list_from(attrs, inputs, "size", 2)
    stride = list_from(attrs, inputs, "stride", 3)
    axes = list_from(attrs, inputs, "axes", 5)
    fill = get_input(inputs, 4, "fill")
    if start is None:
        raise OpError("invalid_input", "slice needs 'start' (attribute or input 1)")
    if size is None:
        raise OpError("invalid_input", "slice needs 'size' (attribute or input 2)")
    if x.dtype == "uint8":
        raise OpError("unsupported_dtype", "slice does not list uint8 among its types")
    if mode in ("clamp", "fill", "reflect") and x.dtype in ("int64", "bfloat16"):
        raise OpError("unsupported_dtype", f"slice mode {mode} does not accept {x.dtype}")
    if fill is not None:
        if mode != "fill":
            raise OpError("fill_not_allowed", f"the fill input is only allowed in fill mode, mode is {mode}")
        if list(fill.a.shape) not in ([], [1]):
            raise OpError("invalid_fill", f"fill must have shape [] or [1], got {list(fill.a.shape)}")
        if fill.dtype != x.dtype:
            fill = T(x.dtype, convert_fill(fill, x.dtype))
    if axes is not None:
        norm = []
        for ax in axes:
            if not -rank <= ax < rank:
                raise OpError("invalid_axes", f"axis {ax} outside [-{rank}, {rank - 1}]")
            norm.append(ax + rank if ax < 0 else ax)
        if len(set(norm)) != len(norm):
            raise OpError("invalid_axes", f"repeated axis in {axes}")
        n = len(norm)
        what = f"len(axes)={n}"
    else:
        norm = list(range(rank))
        n = rank
        what = f"the input rank {rank}"
    for name, v in (("start", start), ("size", size), ("stride", stride)):
        if v is not None and len(v) != n:
            raise OpError("rank_mismatch", f"{name} has {len(v)} entries, expected {what}")
    if stride is None:
        stride = [1] * n
    for s in size:
        if s < 0:
            raise OpError("invalid_size", f"negative size {s} in {size}")
    # full per-axis parameters
    st = [0] * rank
    sz = list(a.shape)
    sd = [1] * rank
    for k, ax in enumerate(norm):
        st[ax], sz[ax], sd[ax] = start[k], size[k], stride[k]
    check_budget(sz)
    dims = a.shape

    # per-axis validation
    for ax in range(rank):
        d, s = dims[ax], sz[ax]
        if s == 0:
            continue
        if d == 0 and mode in ("wrap", "clamp", "reflect"):
            raise OpError("empty_dimension", f"mode {mode} on axis {ax} of size 0 with output size {s}")
        if mode == "strict_bounds":
            first, last = st[ax], st[ax] + (s - 1) * sd[ax]
            lo, hi = min(first, last), max(first, last)
            if lo < 0 or hi >= d:
                bad = lo if lo < 0 else hi
                raise OpError("out_of_bounds", f"x={bad} outside [0, {d}) on axis {ax}")

    fill_bits = None
    if mode == "fill":
        fill_bits = fill.a.reshape(-1)[0] if fill is not None else a.dtype.type(0)
    out_shape = tuple(sz)
    if prod(out_shape) == 0:
        return encode(x.dtype, np.zeros(out_shape, dtype=a.dtype))
    if mode == "fill" and any(dims[ax] == 0 for ax in range(rank)):
        return encode(x.dtype, np.full(out_shape, fill_bits, dtype=a.dtype))

    idx = []
    masks = []
    for ax in range(rank):
        d = dims[ax]
        xs = axis_coords(st[ax], sz[ax], sd[ax])
        if mode == "strict_bounds":
            z = xs
        elif mode == "wrap":
            z = [x % d for x in xs]  # Python's % is the mathematical modulo for positive d
        elif mode == "clamp":
            z = [min(max(x, 0), d - 1) for x in xs]
        elif mode == "fill":
            valid = [0 <= x < d for x in xs]
            z = [x if ok else 0 for x, ok in zip(xs, valid)]
            if not all(valid):
                masks.append((ax, np.array(valid, dtype=bool)))
        else:  # reflect
            p = max(2 * d - 2, 1)  # period 2d-2; d = 1 reads in[0] everywhere (period 1)
            z = [p - c if c >= d else c for c in (abs(x) % p for x in xs)]
        idx.append(np.array(z, dtype=I64))
    out = a[np.ix_(*idx)] if rank else a.copy()
    if masks:
        out = np.array(out, copy=True)
        ok = np.ones(out_shape, dtype=bool)
        for ax, valid in masks:
            shp = [1] * rank
            shp[ax] = len(valid)
            ok &= valid.reshape(shp)
        out[~ok] = fill_bits
    return encode(x.dtype, out)


# ----------------------------------------------------------------------------------------------
# as_strided


def op_as_strided(attrs, inputs):
    x = get_input(inputs, 0, "input")
    if x is None:
        raise OpError("invalid_input", "input 0 is required")
    # ATB checks each tensor (rank 1..8, not empty) before its dtype and the attributes.
    if not 1 <= x.a.ndim <= 8:
        raise OpError("invalid_rank", f"the input has rank {x.a.ndim}, ATB tensors have 1 to 8 dims")
    if x.a.size == 0:
        raise OpError("empty_dimension", f"the input of shape {list(x.a.shape)} has no element")
    if x.dtype not in ("float16", "int64"):
        raise OpError("unsupported_dtype", f"as_strided accepts float16 and int64, not {x.dtype}")
    size = int_list(attrs, "size", required=True)
    stride = int_list(attrs, "stride", required=True)
    offset = int_list(attrs, "offset", required=True)
    if len(size) > 8:
        raise OpError("invalid_size", f"size must have at most 8 entries, got {len(size)}")
    if any(s <= 0 for s in size):
        raise OpError("invalid_size", f"size entries must be > 0, got {size}")
    if len(stride) != len(size):
        raise OpError("invalid_stride", f"stride has {len(stride)} entries, size has {len(size)}")
    if any(s < 0 for s in stride):
        raise OpError("invalid_stride", f"stride entries must be >= 0, got {stride}")
    if len(offset) != 1 or offset[0] < 0:
        raise OpError("invalid_offset", f"offset must be exactly one entry >= 0, got {offset}")
    flat = x.a.reshape(-1)
    numel = flat.size
    reach = offset[0] + sum((s - 1) * t for s, t in zip(size, stride))
    if reach >= numel:
        raise OpError("out_of_bounds", f"view reaches element {reach}, input has {numel}")
    if not size:
        # Passes ParamCheck; the rank-0 output fails ATB's tensor check at Setup.
        raise OpError("invalid_rank", "size [] gives a rank-0 output, ATB tensors have 1 to 8 dims")
    check_budget(size)
    base = flat[offset[0]:]
    isz = flat.itemsize
    view = np.lib.stride_tricks.as_strided(base, shape=tuple(size), strides=tuple(t * isz for t in stride), writeable=False)
    return encode(x.dtype, np.array(view, copy=True))


# ----------------------------------------------------------------------------------------------
# scale

SCALE_DTYPES = ("int8", "float16", "bfloat16", "float32")


def coeffs(attrs, name):
    v = attrs.get(name)
    if v is None:
        return None
    if isinstance(v, dict):
        t = decode(v, f"attribute {name}")
        if t.dtype == "float32":
            return t.a.reshape(-1).view(F32)
        if t.dtype in NUMERIC:
            return t.a.reshape(-1).view(NUMERIC[t.dtype]).astype(F32)
        raise OpError("invalid_input", f"attribute {name} must be a float tensor, got {t.dtype}")
    if isinstance(v, list) and all(type(e) in (int, float) for e in v):
        return np.array(v, dtype=np.float64).astype(F32)
    raise OpError("invalid_input", f"attribute {name} must be a float32 tensor object, got {v!r}")


def op_scale(attrs, inputs):
    x = get_input(inputs, 0, "input")
    if x is None:
        raise OpError("invalid_input", "input 0 is required")
    mode = attrs.get("mode")
    if mode is None:
        raise OpError("invalid_input", "scale needs attribute 'mode'")
    if mode not in ("uniform", "channel", "elementwise"):
        raise OpError("invalid_input", f"unknown scale mode {mode!r}")
    check_max_rank(x.a.shape, "the input")
    if x.dtype not in SCALE_DTYPES:
        raise OpError("unsupported_dtype", f"scale does not accept {x.dtype}")
    out_dtype = attrs.get("output_dtype", x.dtype)
    if out_dtype is None:
        out_dtype = x.dtype
    if out_dtype not in SCALE_DTYPES:
        raise OpError("unsupported_dtype", f"scale cannot output {out_dtype}")
    shape = x.a.shape
    rank = len(shape)
    if rank < 4:
        raise OpError("invalid_rank", f"scale needs rank >= 4, got {rank}")
    ca = attrs.get("channel_axis")
    if ca is None:
        ca = rank - 3
    elif type(ca) is not int:
        raise OpError("invalid_input", f"channel_axis must be an integer, got {ca!r}")
    if not -rank <= ca < rank:
        raise OpError("invalid_channel_axis", f"channel_axis {ca} outside [-{rank}, {rank})")
    ca %= rank  # a negative axis counts from the end
    spatial = rank - ca - 1
    if spatial not in (2, 3):
        raise OpError("invalid_rank", f"{spatial} dims after channel axis {ca}; only 2 or 3 are supported")
    if mode == "uniform":
        count, cshape = 1, ()
    elif mode == "channel":
        count, cshape = shape[ca], (shape[ca],) + (1,) * spatial
    else:
        cshape = tuple(shape[ca:])
        count = prod(cshape)
    cs = {}
    for name in ("scale", "shift", "power"):
        c = coeffs(attrs, name)
        if c is None or c.size == 0:
            cs[name] = None
        elif c.size != count:
            raise OpError("invalid_weights", f"{name} has {c.size} values, mode {mode} needs {count} (or 0)")
        else:
            cs[name] = c.reshape(cshape)
    v = x.a.view(NUMERIC[x.dtype]).astype(F32)
    with np.errstate(all="ignore"):
        # Literal formula with the defaults (scale 1, shift 0): a float32 multiply then a float32
        # add, two roundings. Adding the default +0.0 turns an input -0.0 into +0.0, as IEEE says.
        sc = cs["scale"] if cs["scale"] is not None else ONE_F32
        sh = cs["shift"] if cs["shift"] is not None else ZERO_F32
        v = np.add(np.multiply(v, sc, dtype=F32), sh, dtype=F32)
        p = cs["power"]
        if p is not None:
            # pow evaluated in binary64 and rounded once to float32: the correctly rounded powf
            # result except for rare double-rounding ties; IEEE special cases (negative base with
            # non-integer power -> NaN) as in C pow; pow(x, 1) = x exactly.
            # The exponent is materialised at full shape: given a scalar (or stride-0) exponent
            # numpy takes fast paths (0.5 -> sqrt) that break IEEE pow special cases, e.g.
            # pow(-inf, 0.5) = +inf and pow(-0, 0.5) = +0.
            pe = np.array(np.broadcast_to(p, v.shape), dtype=np.float64)
            v = np.power(v.astype(np.float64), pe).astype(F32)
        if out_dtype == "float32":
            out = v.view(RAW["float32"])
        elif out_dtype == "float16":
            out = v.astype(np.float16).view(RAW["float16"])
        elif out_dtype == "bfloat16":
            out = v.astype(ml_dtypes.bfloat16).view(RAW["bfloat16"])
        else:  # int8: round half to even, clamp, NaN -> 0
            r = np.rint(v)
            r = np.where(np.isnan(r), 0, np.clip(r, -128, 127))
            out = r.astype(np.int8)
    return encode(out_dtype, out)


# ----------------------------------------------------------------------------------------------
# reformat

# name -> (kind, V, vector dim from the end (3 or 4), dtypes or None for all, min rank); None
# where the kind does not use the field (LINEAR, and the DLA formats, which are exactly 4-D).
FORMATS = {
    "LINEAR": ("linear", None, None, None, 0),
    "CHW2": ("major", 2, 3, ("float16", "bfloat16"), 3),
    "HWC8": ("minor", 8, 3, ("float16", "bfloat16"), 3),
    "CHW4": ("major", 4, 3, ("int8", "float16"), 3),
    "CHW16": ("major", 16, 3, ("float16",), 3),
    "CHW32": ("major", 32, 3, ("int8", "float32", "float16"), 3),
    "DHWC8": ("minor", 8, 4, ("float16", "bfloat16"), 4),
    "CDHW32": ("major", 32, 4, ("float16", "int8"), 4),
    "HWC": ("minor", 1, 3, ("float32", "uint8"), 3),
    "DLA_LINEAR": ("dla_linear", None, None, ("float16", "int8"), None),
    "DLA_HWC4": ("dla_hwc4", None, None, ("float16", "int8"), None),
    "HWC16": ("minor", 16, 3, ("float16", "int8", "fp8"), 3),
    "DHWC": ("minor", 1, 4, ("float32",), 4),
}
ELEM_SIZE = {"float16": 2, "int8": 1}


def round_up(a, b):
    return -(-a // b) * b


def layout(fmt, shape, dtype, dla):
    """Memory image description for `shape` in `fmt`: (padded logical shape, permutation from the
    padded logical array to memory order, buffer length)."""
    kind, V, vd, _, _ = FORMATS[fmt]
    r = len(shape)
    if kind in ("major", "minor"):
        c = r - vd
        lead, C, sp = list(shape[:c]), shape[c], list(shape[c + 1:])
        Cp = round_up(C, V)
        if kind == "major":
            # padded logical: lead + [Cp/V, V] + sp  ->  memory: lead + [Cp/V] + sp + [V]
            pshape = lead + [Cp // V, V] + sp
            nl = len(lead)
            perm = list(range(nl + 1)) + [nl + 2 + i for i in range(len(sp))] + [nl + 1]
        else:
            pshape = lead + [Cp] + sp
            nl = len(lead)
            perm = list(range(nl)) + [nl + 1 + i for i in range(len(sp))] + [nl]
        return pshape, perm, (C, Cp, c, kind, V)
    es = ELEM_SIZE[dtype]
    N, C, H, W = shape
    if kind == "dla_linear":
        Wp = round_up(W, 64 // es)
        return [N, C, H, Wp], [0, 1, 2, 3], ("dla_linear", Wp)
    # dla_hwc4: [N][H][roundUp(W, K/C'/es)][C']
    Cq = 4 if C == 3 else C
    K = 64 if dla == "orin" else 32
    Wp = round_up(W, K // Cq // es)
    return [N, Cq, H, Wp], [0, 2, 3, 1], ("dla_hwc4", Cq, Wp)


def padded_to_logical_view(p, fmt, shape):
    """From a padded logical array (in `pshape` form) back to the logical tensor (a view)."""
    kind = FORMATS[fmt][0]
    r = len(shape)
    if kind in ("major", "minor"):
        c = r - FORMATS[fmt][2]
        if kind == "major":
            lead = p.shape[:c]
            p = p.reshape(lead + (p.shape[c] * p.shape[c + 1],) + p.shape[c + 2:])
        sl = [slice(None)] * r
        sl[c] = slice(0, shape[c])
        return p[tuple(sl)]
    N, C, H, W = shape
    return p[:, :C, :, :W]


def pack(a, fmt, dtype, dla):
    shape = list(a.shape)
    pshape, perm, info = layout(fmt, shape, dtype, dla)
    check_budget(pshape, "buffer")
    p = np.zeros(pshape, dtype=a.dtype)
    padded_to_logical_view(p, fmt, shape)[...] = a
    return np.ascontiguousarray(p.transpose(perm)).reshape(-1)


def unpack(buf, fmt, shape, dtype, dla):
    pshape, perm, info = layout(fmt, shape, dtype, dla)
    mshape = [pshape[i] for i in perm]
    if buf.ndim != 1 or buf.size != prod(mshape):
        raise OpError("invalid_buffer", f"{fmt} buffer for shape {shape} must be 1-D of {prod(mshape)} elements, got shape {list(buf.shape)}")
    p = buf.reshape(mshape).transpose(np.argsort(perm))
    return padded_to_logical_view(p, fmt, shape)


def check_dtype(fmt, dtype):
    dtypes = FORMATS[fmt][3]
    if dtypes is not None and dtype not in dtypes:
        raise OpError("unsupported_dtype", f"format {fmt} does not accept {dtype}")


def check_format(fmt, shape):
    kind, _, _, _, min_rank = FORMATS[fmt]
    r = len(shape)
    if kind in ("dla_linear", "dla_hwc4"):
        if r != 4:
            raise OpError("invalid_rank", f"format {fmt} needs a 4-D tensor, got rank {r}")
    elif r < min_rank:
        raise OpError("invalid_rank", f"format {fmt} needs rank >= {min_rank}, got {r}")
    if kind == "dla_hwc4" and shape[1] not in (1, 3, 4):
        raise OpError("invalid_channels", f"DLA_HWC4 needs C in {{1, 3, 4}}, got {shape[1]}")


def op_reformat(attrs, inputs):
    x = get_input(inputs, 0, "input")
    if x is None:
        raise OpError("invalid_input", "input 0 is required")
    src = attrs.get("from")
    dst = attrs.get("to")
    for name, f in (("from", src), ("to", dst)):
        if f is None:
            raise OpError("invalid_input", f"reformat needs attribute {name!r}")
        if f not in FORMATS:
            raise OpError("invalid_input", f"unknown format {f!r}")
    dla = attrs.get("dla", "orin")
    if dla not in ("orin", "xavier"):
        raise OpError("invalid_input", f"dla must be 'orin' or 'xavier', got {dla!r}")
    shape = int_list(attrs, "shape")
    if src == "LINEAR":
        if shape is not None and list(shape) != list(x.a.shape):
            raise OpError("invalid_input", f"shape {shape} differs from the LINEAR input's shape {list(x.a.shape)}")
        shape = list(x.a.shape)
    elif shape is None:
        raise OpError("invalid_input", f"reformat from {src} needs attribute 'shape'")
    if any(d < 0 for d in shape):
        raise OpError("invalid_input", f"negative dim in shape {shape}")
    dtype = x.dtype
    check_dtype(src, dtype)
    check_dtype(dst, dtype)
    check_max_rank(shape, "the logical shape")
    check_format(src, shape)
    check_format(dst, shape)
    check_budget(shape)
    if src == "LINEAR":
        logical = x.a
    else:
        logical = unpack(x.a, src, shape, dtype, dla)
    if dst == "LINEAR":
        out = logical
    else:
        out = pack(logical, dst, dtype, dla)
    return encode(dtype, out)


# ----------------------------------------------------------------------------------------------
# main loop

HANDLERS = {
    "shuffle": op_shuffle,
    "slice": op_slice,
    "as_strided": op_as_strided,
    "scale": op_scale,
    "reformat": op_reformat,
}


def summarize_exc(e):
    tb = traceback.extract_tb(e.__traceback__)
    where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(tb[-3:]))
    return f"{type(e).__name__}: {e} at {where}"


def handle(msg):
    mid = msg.get("id") if isinstance(msg, dict) else None
    try:
        if not isinstance(msg, dict):
            raise OpError("internal", "request is not a JSON object")
        t = msg.get("type")
        if t == "hello":
            return {"type": "hello", "protocol": PROTOCOL, "name": NAME, "engine": {"name": "numpy", "version": np.__version__}, "ops": OPS}
        if t != "run":
            raise OpError("internal", f"unknown message type {t!r}")
        op = msg.get("op")
        h = HANDLERS.get(op)
        if h is None:
            return {"type": "unsupported", "id": mid, "reason": f"op {op!r} is not implemented"}
        attrs = msg.get("attrs") or {}
        inputs = msg.get("inputs") or []
        if not isinstance(attrs, dict) or not isinstance(inputs, list):
            raise OpError("internal", "attrs must be an object and inputs a list")
        out = h(attrs, inputs)
        return {"type": "ok", "id": mid, "outputs": [out]}
    except OpError as e:
        return {"type": "error", "id": mid, "kind": e.kind, "message": e.message}
    except Unsupported as e:
        return {"type": "unsupported", "id": mid, "reason": str(e)}
    except Exception as e:  # a bug in this backend: make it visible
        traceback.print_exc(file=sys.stderr)
        return {"type": "error", "id": mid, "kind": "internal", "message": summarize_exc(e)}


def main():
    out = sys.stdout
    write = out.write
    flush = out.flush
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            msg = _loads(line)
        except ValueError as e:
            reply = {"type": "error", "id": None, "kind": "internal", "message": f"bad JSON: {e}"}
        else:
            reply = handle(msg)
        write(_dumps(reply))
        write("\n")
        flush()


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, BrokenPipeError):
        pass
