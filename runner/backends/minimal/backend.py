"""A complete opspec backend for shuffle and slice in plain Python (no third-party package).

Run the suite against it from the repository root:
    target/release/runner --backend "python3 runner/backends/minimal/backend.py"
Protocol and rules: docs/protocol.md; the formulas: docs/semantics.md sections 1 and 2.
"""
import base64
import itertools
import json
import math
import os
import struct
import sys

MAX_ELEMENTS = int(os.environ.get("OPSPEC_MAX_ELEMENTS", 2**28))
BYTES = {"bool": 1, "int8": 1, "uint8": 1, "fp8": 1, "float16": 2, "bfloat16": 2,
         "float32": 4, "int32": 4, "int64": 8}  # int4: two elements per byte
SLICE_DTYPES = ["bool", "int4", "int8", "int32", "int64", "fp8", "float16", "float32", "bfloat16"]
HELLO = {"type": "hello", "protocol": 1, "name": "minimal-python", "ops": ["shuffle", "slice"]}


class Rejected(Exception):
    """The case breaks a rule: an `error` reply with this kind."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def volume(shape):
    """The element count; too_large past the budget or 64 bits (docs/protocol.md)."""
    n = 1
    for d in shape:
        n *= d
        if n >= 2**64:
            raise Rejected("too_large", f"the element count of {shape} overflows")
    if n > MAX_ELEMENTS:
        raise Rejected("too_large", f"{shape} has {n} elements, over the budget {MAX_ELEMENTS}")
    return n


def decode(t):
    """A wire tensor as (dtype, shape, list of each element's bits as an unsigned integer)."""
    raw = base64.b64decode(t["data"])
    if t["dtype"] == "int4":
        bits = [nibble for byte in raw for nibble in (byte & 15, byte >> 4)]
        return "int4", t["shape"], bits[:math.prod(t["shape"])]
    k = BYTES[t["dtype"]]
    return t["dtype"], t["shape"], [int.from_bytes(raw[i:i + k], "little")
                                    for i in range(0, len(raw), k)]


def encode(dtype, shape, bits):
    if dtype == "int4":
        bits = bits + [0] * (len(bits) % 2)
        raw = bytes(bits[i] | bits[i + 1] << 4 for i in range(0, len(bits), 2))
    else:
        raw = b"".join(b.to_bytes(BYTES[dtype], "little") for b in bits)
    return {"dtype": dtype, "shape": shape, "data": base64.b64encode(raw).decode()}


def gather(bits, offsets, fill=None):
    """out[y] = bits[sum of offsets[axis][y_axis]], row-major; an offset None gives `fill`."""
    if math.prod(len(o) for o in offsets) == 0:
        return []
    if not offsets:  # rank 0: the one element
        return list(bits)
    return [fill if None in combo else bits[sum(combo)] for combo in itertools.product(*offsets)]


def strides(shape):
    out, step = [], 1
    for d in reversed(shape):
        out.insert(0, step)
        step *= d
    return out


def int_list(attrs, inputs, name, position):
    """A list given as attribute or as a 1-D int32/int64 input (docs/protocol.md, Attributes)."""
    tensor = inputs[position] if position < len(inputs) else None
    if tensor is None:
        return attrs.get(name)
    dtype, shape, bits = decode(tensor)
    if dtype not in ("int32", "int64") or len(shape) != 1:
        raise Rejected("invalid_input", f"{name} must be a 1-D int32/int64 tensor")
    width = 32 if dtype == "int32" else 64
    return [b - (1 << width) if b >> (width - 1) else b for b in bits]


def check_rank(shape, what):
    if len(shape) > 8:
        raise Rejected("invalid_rank", f"{what} has {len(shape)} dims, at most 8")


def permutation(perm, rank, name):
    if perm is None:
        return list(range(rank))
    if sorted(perm) != list(range(rank)):
        raise Rejected("invalid_permutation", f"{name} {perm} is not a permutation of 0..{rank}")
    return perm


def transpose(shape, bits, perm):
    if not bits:  # no element: dims may be huge, so build nothing sized by them
        return [shape[axis] for axis in perm], []
    step = strides(shape)
    offsets = [[i * step[axis] for i in range(shape[axis])] for axis in perm]
    return [shape[axis] for axis in perm], gather(bits, offsets)


def shuffle(attrs, inputs):
    """docs/semantics.md section 1: transpose, reshape (0 copies, -1 is solved), transpose."""
    dtype, shape, bits = decode(inputs[0])
    check_rank(shape, "the input")
    shape, bits = transpose(shape, bits, permutation(attrs.get("first_transpose"), len(shape),
                                                     "first_transpose"))
    dims = int_list(attrs, inputs, "reshape_dims", 1)
    if dims is not None:
        check_rank(dims, "the reshape dims")
        if any(d < -1 for d in dims) or dims.count(-1) > 1:
            raise Rejected("invalid_reshape", f"reshape dims {dims}")
        placeholder = attrs.get("zero_is_placeholder", True)
        if placeholder and any(d == 0 and i >= len(shape) for i, d in enumerate(dims)):
            raise Rejected("invalid_reshape", f"a 0 in {dims} past the input's rank {len(shape)}")
        dims = [shape[i] if d == 0 and placeholder else d for i, d in enumerate(dims)]
        n = volume(shape)
        known = math.prod(d for d in dims if d != -1)
        if -1 in dims:
            if known == 0:
                raise Rejected("indeterminate_wildcard", f"-1 in {dims} beside a 0")
            if n % known:
                raise Rejected("volume_mismatch", f"-1 in {dims} does not divide {n}")
            dims[dims.index(-1)] = n // known
        elif known != n:
            raise Rejected("volume_mismatch", f"{dims} does not hold {n} elements")
        shape = dims  # a reshape keeps the row-major order of the elements
    shape, bits = transpose(shape, bits, permutation(attrs.get("second_transpose"), len(shape),
                                                     "second_transpose"))
    return encode(dtype, shape, bits)


def source(mode, x, d):
    """The input coordinate read for coordinate x on an axis of d elements; None = the fill
    value (docs/semantics.md section 2.2)."""
    if mode == "wrap":
        return x % d  # Python's % is the non-negative modulo
    if mode == "clamp":
        return min(max(x, 0), d - 1)
    if mode == "reflect":
        if d == 1:
            return 0
        c = abs(x) % (2 * d - 2)
        return 2 * d - 2 - c if c >= d else c
    if 0 <= x < d:
        return x
    if mode == "fill":
        return None
    raise Rejected("out_of_bounds", f"coordinate {x} outside [0, {d})")


FLOATS = {"float32": (8, 23, True), "float16": (5, 10, True), "fp8": (4, 3, False)}


def float_value(dtype, b):
    """The value of a float32, float16 or fp8 (E4M3FN) bit pattern."""
    exponent_bits, mantissa_bits, has_infinity = FLOATS[dtype]
    sign = -1.0 if b >> (exponent_bits + mantissa_bits) else 1.0
    e, m = b >> mantissa_bits & (1 << exponent_bits) - 1, b & (1 << mantissa_bits) - 1
    bias, top = (1 << exponent_bits - 1) - 1, (1 << exponent_bits) - 1
    if e == top and (has_infinity or m == (1 << mantissa_bits) - 1):
        return sign * math.inf if has_infinity and m == 0 else math.nan
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - mantissa_bits)
    return sign * (m | 1 << mantissa_bits) * 2.0 ** (e - bias - mantissa_bits)


def fill_bits(fill, dtype):
    """The fill value in the input's dtype (docs/protocol.md, "The fill value")."""
    fill_dtype, shape, bits = decode(fill)
    if shape not in ([], [1]):
        raise Rejected("invalid_fill", f"the fill value has shape {shape}")
    bits = bits[0]
    if fill_dtype == dtype:
        return bits  # unchanged: NaN payloads and -0.0 included
    convertible = ("float32", "float16", "int8", "fp8")
    if fill_dtype not in convertible or dtype not in convertible:
        raise Rejected("invalid_fill", f"a {fill_dtype} fill cannot become {dtype}")
    value = bits - 256 * (bits >> 7) if fill_dtype == "int8" else float_value(fill_dtype, bits)
    if dtype == "int8":
        if not (math.isfinite(value) and value == int(value) and -128 <= value <= 127):
            raise Rejected("invalid_fill", f"fill {value} is not an integer in [-128, 127]")
        return int(value) & 255
    if math.isnan(value):
        return {"float32": 0x7FC00000, "float16": 0x7E00, "fp8": 0x7F}[dtype]
    if dtype == "float32":  # exact: every int8, float16 and fp8 value is a float32 value
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if dtype == "float16":  # struct rounds to nearest even and refuses what rounds past 65504
        try:
            return struct.unpack("<H", struct.pack("<e", value))[0]
        except OverflowError:
            raise Rejected("invalid_fill", f"fill {value} is outside the range of float16")
    if not abs(value) <= 464:  # fp8 has no infinity; 464, the tie of 448 and 480, gives 448
        raise Rejected("invalid_fill", f"fill {value} is outside the range of fp8")
    # The nearest of the 127 non-negative finite codes, ties to the even one.
    nearest = min(range(0x7F), key=lambda c: (abs(float_value("fp8", c) - abs(value)), c & 1))
    return nearest | (0x80 if math.copysign(1, value) < 0 else 0)


def slice_(attrs, inputs):
    """docs/semantics.md section 2: x = y * stride + start, then the mode's rule."""
    dtype, shape, bits = decode(inputs[0])
    rank = len(shape)
    check_rank(shape, "the input")
    mode = attrs.get("mode", "strict_bounds")
    if dtype not in SLICE_DTYPES:
        raise Rejected("unsupported_dtype", f"slice does not list {dtype}")
    if mode in ("clamp", "fill", "reflect") and dtype in ("int64", "bfloat16"):
        raise Rejected("unsupported_dtype", f"{mode} does not take {dtype}")
    fill = 0
    if inputs[4] is not None:
        if mode != "fill":
            raise Rejected("fill_not_allowed", f"a fill value in {mode} mode")
        fill = fill_bits(inputs[4], dtype)
    start, size = int_list(attrs, inputs, "start", 1), int_list(attrs, inputs, "size", 2)
    stride, axes = int_list(attrs, inputs, "stride", 3), int_list(attrs, inputs, "axes", 5)
    if start is None or size is None:
        raise Rejected("invalid_input", "start and size are required")
    if axes is None:
        axes = list(range(rank))
    elif any(not -rank <= a < rank for a in axes):
        raise Rejected("invalid_axes", f"axes {axes} outside [-{rank}, {rank - 1}]")
    axes = [a % rank for a in axes] if rank else axes
    if len(set(axes)) != len(axes):
        raise Rejected("invalid_axes", f"axes {axes} repeat an axis")
    stride = [1] * len(axes) if stride is None else stride
    if not len(start) == len(size) == len(stride) == len(axes):
        raise Rejected("rank_mismatch", f"start, size, stride, axes: {start} {size} {stride} {axes}")
    if any(s < 0 for s in size):
        raise Rejected("invalid_size", f"size {size} has a negative entry")
    per_axis = [(0, d, 1) for d in shape]  # axes not listed are copied whole
    for a, s0, n, st in zip(axes, start, size, stride):
        per_axis[a] = (s0, n, st)
    out_shape = [n for _, n, _ in per_axis]
    empty = volume(out_shape) == 0
    # Each axis is checked on its own: one of size 0 reads nothing, and hides no error of another.
    for axis, (s0, n, st) in enumerate(per_axis):
        if n > 0 and shape[axis] == 0 and mode in ("wrap", "clamp", "reflect"):
            raise Rejected("empty_dimension", f"{mode} on axis {axis} of extent 0")
        if n > 0 and mode == "strict_bounds":  # x is monotonic in y: check both ends
            source(mode, s0, shape[axis]), source(mode, s0 + (n - 1) * st, shape[axis])
    if empty:  # the dims may be huge: build nothing sized by them
        return encode(dtype, out_shape, [])
    step = strides(shape)
    offsets = []
    for axis, (s0, n, st) in enumerate(per_axis):
        z = [source(mode, y * st + s0, shape[axis]) for y in range(n)]
        offsets.append([None if c is None else c * step[axis] for c in z])
    return encode(dtype, out_shape, gather(bits, offsets, fill))


OPS = {"shuffle": shuffle, "slice": slice_}


def reply(request):
    if request["type"] == "hello":
        return HELLO
    try:
        outputs = [OPS[request["op"]](request["attrs"], request["inputs"])]
        return {"type": "ok", "id": request["id"], "outputs": outputs}
    except Rejected as e:
        return {"type": "error", "id": request["id"], "kind": e.kind, "message": str(e)}


def main():
    for line in sys.stdin:  # one request a line; one reply a line, flushed
        print(json.dumps(reply(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
