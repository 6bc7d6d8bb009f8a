#!/usr/bin/env python3
"""opspec adapter for XLA through JAX on CPU: each case runs as `jax.lax` / `jax.numpy` ops, the
StableHLO ops a TensorRT-to-XLA converter would emit (README.md has the table). The adapter
computes only what a converter computes from static shapes (Slice bounds, Pad amounts, Gather
indices, layout shapes: ../common/convert.py); XLA's shapes are static, so a reshape's 0 and -1
are resolved by the converter too.

A `batch` request's cases run as one XLA program returning each case's output (each case its own
inputs and outputs), compiled once for the batch; a case the converter or JAX's shape checks
reject is answered alone and left out of the program, and a program XLA rejects as a whole is
split (halves, then single cases). A single `run` is a program of one case, kept in a small cache.

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import os
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

from missing import serve_missing  # noqa: E402

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Compiling dominates a run (the cases are tiny): LLVM's optimizations of the CPU code cost about
# a quarter of each compilation and change no result (the HLO passes, fusion included, still run).
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0").strip()
try:
    import numpy as np
    import ml_dtypes
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing(__file__, missing)

from wire import INPUT_COUNT, OPS, OpError, Unsupported, bisect, case_scope, composed, composed_of, encode_bytes, encode_raw, inputs_of, int_list, list_from, main, pack_int4, probe  # noqa: E402
from convert import SlicePlan, as_strided_indices, reformat_plan, scale_weights  # noqa: E402
from errors import error_kind  # noqa: E402

# int64 stays int64 (JAX would otherwise run it as int32).
jax.config.update("jax_enable_x64", True)
if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
    # JAX's persistent cache keeps only compilations of a second or more by default; every
    # program here is smaller, and a second run should find them all.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

JNP_TYPE = {
    "bool": np.dtype(np.bool_),
    "int4": np.dtype(ml_dtypes.int4),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "fp8": np.dtype(ml_dtypes.float8_e4m3fn),
    "float16": np.dtype("<f2"),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float32": np.dtype("<f4"),
}
WIRE_TYPE = {v: k for k, v in JNP_TYPE.items()}


def array(wire):
    """The wire's bits as a host array of its type (no conversion), a program's argument."""
    raw = wire.raw()
    if wire.dtype == "int4":
        return raw.astype(ml_dtypes.int4)
    if wire.dtype == "bool":
        return raw.view(np.bool_)
    return raw.view(JNP_TYPE[wire.dtype])


def encode(y):
    host = np.asarray(y)
    dtype = WIRE_TYPE.get(host.dtype)
    if dtype is None:
        raise OpError("internal", f"XLA returned {host.dtype}")
    if dtype == "int4":
        return encode_bytes(dtype, host.shape, pack_int4(host.astype(np.int8)))
    if dtype == "bool":
        return encode_raw(dtype, host.view(np.uint8))
    return encode_bytes(dtype, host.shape, np.ascontiguousarray(host).tobytes())


# ----------------------------------------------------------------------------------------------
# The ops
#
# Each op is planned in two halves: `plan_<op>(attrs, t)` does what a converter does from the
# static shapes and attributes and returns (static, extras, build). `static` is everything the XLA
# program depends on besides the data's shapes and dtypes (the cache key); `extras` are the
# arrays a converter computes (Scale weights, Gather indices), passed to the program as arguments
# so that one compilation serves every case that differs only in them; `build(A, E)` writes the
# program from `static` alone, A the data inputs by position and E the extras. A plan notes each
# composed path it chooses (`composed(key)`, a key of engine.toml's [composed]): the case's reply
# lists them.


def plan_shuffle(attrs, t):
    p1 = int_list(attrs, "first_transpose")
    dims = t[1].ints("reshape_dims") if t[1] is not None else int_list(attrs, "reshape_dims")
    p2 = int_list(attrs, "second_transpose")
    if dims is not None and attrs.get("zero_is_placeholder", True):
        # XLA's shapes are static: the converter copies a placeholder's dim itself, from the
        # shape after the first transpose.
        shape = t[0].shape if p1 is None or len(p1) != len(t[0].shape) else [t[0].shape[p] for p in p1]
        if any(d == 0 and i >= len(shape) for i, d in enumerate(dims)):
            raise OpError("invalid_reshape", f"a 0 placeholder past the input's rank {len(shape)}")
        if 0 in dims:
            composed("shuffle:zero-placeholder")
        dims = [shape[i] if d == 0 else d for i, d in enumerate(dims)]
    static = (tuple(p1) if p1 is not None else None, tuple(dims) if dims is not None else None, tuple(p2) if p2 is not None else None)

    def build(A, E):
        x = A[0]
        if p1 is not None:
            x = lax.transpose(x, p1)
        if dims is not None:
            x = jnp.reshape(x, dims)
        if p2 is not None:
            x = lax.transpose(x, p2)
        return x

    return static, [], build


def slice_notes(start, size, step):
    """Notes the composed path `strided_slice` takes for one axis: a zero step broadcasts one
    element, a negative one reverses the axis first, and a size of 0 is the empty slice [0, 0)
    whatever the start and step (noted where that is not the axis's own)."""
    if size == 0:
        if (start, step) != (0, 1):
            composed("slice:size-0")
    elif step == 0:
        composed("slice:stride-0")
    elif step < 0:
        composed("slice:negative-step")


def strided_slice(x, axis, start, size, step):
    """lax.slice of `size` elements from `start` every `step` on one axis, limit
    `start + (size - 1)·step + 1` (`start + size·step` for a negative size); a negative step
    reverses the axis first (lax.rev), a zero step broadcasts one element, and a size of 0 is the
    empty slice [0, 0), whatever the start (it reads nothing). lax.slice takes no negative index,
    none past the end and no limit below the start: XLA rejects those."""
    if size == 0:
        start, step = 0, 1
    elif step == 0:
        one = strided_slice(x, axis, start, 1, 1)
        shape = list(x.shape)
        shape[axis] = size
        return jnp.broadcast_to(one, shape)
    elif step < 0:
        x = lax.rev(x, (axis,))
        start, step = x.shape[axis] - 1 - start, -step
    limit = start + (size - 1) * step + 1 if size > 0 else start + size * step
    starts, limits, steps = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], steps[axis] = start, limit, step
    return lax.slice(x, starts, limits, steps)


# Slice modes that read through a Gather of the converter's coordinates, and jnp.take's mode
# for each: XLA's gather clamps its indices itself (CLIP); WRAP is JAX's remainder before it.
TAKE_MODE = {"clamp": "clip", "wrap": "wrap"}


def plan_slice(attrs, t):
    mode = attrs.get("mode", "strict_bounds")
    take = TAKE_MODE.get(mode)
    plan = SlicePlan(attrs, t[0], t[1], t[2], t[3], t[5], t[4], pad=take is None)
    rank = len(t[0].shape)
    if list_from(attrs, "axes", t[5]) is None and len(plan.axes) != rank:
        # Without axes, TensorRT's start, size and stride have an entry per dim, as lax.slice's
        # lists do: lists of another length go to lax.slice as they are, for XLA to judge (the
        # per-axis writing below would slice the leading axes instead).
        starts, steps = list(plan.starts), list(plan.steps)
        limits = [s0 + n * d for s0, n, d in zip(plan.starts, plan.sizes, plan.steps)]
        return ("lists", tuple(starts), tuple(limits), tuple(steps)), [], lambda A, E: lax.slice(A[0], starts, limits, steps)
    # XLA has no axes list: lax.slice, pad and gather take one entry per dim, so the converter
    # places each entry on its dim. An axis outside the input, or one named twice, has no single
    # place: the case cannot be written (the engine never sees it).
    for a in plan.axes:
        if not -rank <= a < rank:
            raise Unsupported(f"no axis {a} in a rank-{rank} input to place the slice on")
    axes = [a % rank for a in plan.axes]
    if len(set(axes)) != len(axes):
        raise Unsupported(f"axes {plan.axes} name one axis twice: XLA's slice and gather take one entry per dim")
    if take is not None:
        # The coordinates start + i*stride of each axis, a Gather each: the converter's own
        # arrays, so it needs a size of at least 0 and coordinates that fit Gather's int64.
        extras = []
        for axis, s0, n, d in zip(axes, plan.starts, plan.sizes, plan.steps):
            if n < 0:
                raise Unsupported(f"size {n}: no Gather indices of a negative count to write")
            length = t[0].shape[axis]
            if n and mode == "wrap" and length and not all(-(1 << 63) <= c < (1 << 63) for c in (s0, s0 + (n - 1) * d)):
                # WRAP reads coordinate x at x mod d, so start and stride taken mod d give the
                # same reads; the converter reduces them only when x does not fit Gather's int64.
                s0, d = s0 % length, d % length
            if n and not all(-(1 << 63) <= c < (1 << 63) for c in (s0, s0 + (n - 1) * d)):
                raise Unsupported(f"coordinates {s0} + i*{d} beyond int64, which Gather indices cannot hold")
            extras.append(np.arange(n, dtype=np.int64) * d + s0)
        composed(f"slice:{mode.upper()}")
        static = (mode, tuple(axes))

        def build(A, E):
            x = A[0]
            for axis, index in zip(axes, E):
                x = jnp.take(x, index, axis=axis, mode=take)
            return x

        return static, extras, build
    pads = list(zip(plan.before, plan.after)) if plan.padded else None
    steps = list(zip(axes, plan.starts, plan.sizes, plan.steps))
    if pads is not None:
        # FILL and REFLECT: XLA's slice reads inside its input only, so the converter pads first.
        composed(f"slice:{mode.upper()}")
    for _, start, n, step in steps:
        slice_notes(start, n, step)
    static = (mode, tuple(pads) if pads else None, tuple(steps))

    def build(A, E):
        x = A[0]
        if pads is not None:
            if mode == "fill":
                # XLA's Pad takes its padding value as a scalar operand; TensorRT takes a fill of
                # shape [] or [1], so a converter reshapes a [1] to a scalar. Any other shape goes
                # to the Pad as it is, for XLA to judge.
                fill = A.get(4)
                if fill is not None and fill.shape == (1,):
                    fill = fill.reshape(())
                value = lax.convert_element_type(fill, x.dtype) if fill is not None else jnp.zeros((), x.dtype)
                x = lax.pad(x, value, [(b, e, 0) for b, e in pads])
            else:
                x = jnp.pad(x, pads, mode="reflect")
        for axis, start, n, step in steps:
            x = strided_slice(x, axis, start, n, step)
        return x

    return static, [], build


def plan_as_strided(attrs, t):
    index = as_strided_indices(attrs)
    composed("as_strided")

    def build(A, E):
        flat = jnp.reshape(A[0], (-1,))
        # jnp.take's default mode: an index past the end gives the fill value (NaN, or the type's
        # smallest integer), a negative one counts from the end.
        return jnp.take(flat, E[0])

    return (), [index], build


SCALE_OP = {"scale": lax.mul, "shift": lax.add, "power": lax.pow}


def plan_scale(attrs, t):
    weights = scale_weights(attrs, t[0].shape)
    names = tuple(name for name, _ in weights)
    out = attrs.get("output_dtype") or t[0].dtype
    if out not in JNP_TYPE:
        raise Unsupported(f"output dtype {out!r}")
    if out == "int8":
        composed("scale:int8-output")

    def build(A, E):
        y = lax.convert_element_type(A[0], np.float32)
        for name, w in zip(names, E):
            y = SCALE_OP[name](y, jnp.broadcast_to(w, y.shape))
        if out == "int8":
            # The quantization of TensorRT's INT8 output, as XLA writes it: round half to even,
            # clamp, convert.
            y = lax.clamp(np.float32(-128), lax.round(y, lax.RoundingMethod.TO_NEAREST_EVEN), np.float32(127))
        return lax.convert_element_type(y, JNP_TYPE[out])

    return (names, out), [w for _, w in weights], build


def plan_reformat(attrs, t):
    _, src, dst = reformat_plan(attrs, t[0])
    for layout, name in ((src, "from"), (dst, "to")):
        if layout is not None:
            composed(f"reformat:{attrs[name]}")
    unpack = (tuple(src.memory), tuple(src.inverse), tuple(src.padded), tuple(src.shape)) if src is not None else None
    pack = (tuple(dst.pads), tuple(dst.split), tuple(dst.perm)) if dst is not None else None

    def build(A, E):
        y = A[0]
        if unpack is not None:
            memory, inverse, padded, shape = unpack
            y = jnp.reshape(y, memory)
            y = lax.transpose(y, inverse)
            y = jnp.reshape(y, padded)
            y = lax.slice(y, [0] * len(shape), shape)
        if pack is not None:
            pads, split, perm = pack
            y = lax.pad(y, jnp.zeros((), y.dtype), [(0, p, 0) for p in pads])
            y = jnp.reshape(y, split)
            y = lax.transpose(y, perm)
            y = jnp.reshape(y, (-1,))
        return y

    return (unpack, pack), [], build


# ----------------------------------------------------------------------------------------------
# Cases, programs and hello

PLAN = {
    "shuffle": plan_shuffle,
    "slice": plan_slice,
    "as_strided": plan_as_strided,
    "scale": plan_scale,
    "reformat": plan_reformat,
}
# Data inputs passed to the program (the others are shape tensors, static in XLA).
DATA_INPUTS = {"shuffle": (0,), "slice": (0, 4), "as_strided": (0,), "scale": (0,), "reformat": (0,)}

# What JAX's shape and type checks raise while a case is traced (and jnp.reshape's -1, a modulo
# by an empty axis): XLA's rejection of that case, before anything is compiled.
CHECK_ERRORS = (TypeError, ValueError, IndexError, ZeroDivisionError)

# The most cases a `batch` request may hold (the hello's `batch`): on bench_batch.py's curve (the
# README's table) 64 cases get nearly all that 128 do, and a batch's timeout (the runner's
# per-case timeout times its cases) stays within minutes.
BATCH = 64

# XLA's CPU fusion emitters (MLIR-based, its default) take about three quarters of the compile time
# of these small programs; its earlier emitters write the same element moves, bit for bit, in
# every type but bfloat16 (whose NaN payloads they quiet: they go through float32). A program
# whose cases only move elements of those types (`moves_only`) is compiled with the earlier
# emitters; one with arithmetic (Scale, a converted fill) or bfloat16 data keeps XLA's default
# emitters. test_batch.py compares the two on its sample; XLA_FLAGS naming the option overrides
# this.
if "xla_cpu_use_fusion_emitters" in os.environ.get("XLA_FLAGS", ""):
    MOVES_OPTIONS = None
else:
    MOVES_OPTIONS = {"xla_cpu_use_fusion_emitters": False}

# Compiled single-case programs (a `run` request), most recently used last: the oldest go. A
# batch's program is never kept (no other batch has the same cases). Programs are compiled ahead
# of time (`trace`, `lower`, `compile`) and dropped after: called through `jax.jit`, each stayed
# in JAX's own compilation cache (`pxla._cached_compilation`, up to 2,048 executables) whatever
# this cache dropped, which is how a run once grew to 3 GB.
CACHE = OrderedDict()
CACHE_SIZE = 64


class Case:
    """A case planned for XLA: `build(A, E)` writes its program (A the data inputs by position,
    E the converter's arrays), `args` the program's arguments (the data inputs at `present`,
    then the converter's arrays), `key` what the compiled program depends on (the op, the static
    plan, the arguments' shapes and dtypes) and `moves` whether it only moves elements."""

    __slots__ = ("op", "build", "present", "args", "key", "moves")

    def __init__(self, op, build, present, args, key, moves):
        self.op, self.build, self.present, self.args, self.key, self.moves = op, build, present, args, key, moves


def moves_only(op, tensors):
    """Whether a case's program only moves elements that XLA's earlier emitters copy bit for bit
    (each output element an input element, a fill value or a constant of the op; index
    arithmetic in integers; no bfloat16): every case but Scale's, a FILL slice's whose fill value
    is converted to the input's type, and those with bfloat16 data."""
    if op == "scale" or any(t is not None and t.dtype == "bfloat16" for t in tensors):
        return False
    return not (op == "slice" and tensors[4] is not None and tensors[4].dtype != tensors[0].dtype)


def plan_case(op, attrs, inputs):
    """The request's case planned (`Case`), or OpError / Unsupported when the converter cannot
    write it; its composed paths are noted."""
    if op not in PLAN:
        raise Unsupported(f"op {op!r} is not mapped onto XLA")
    return plan_tensors(op, attrs, inputs_of(inputs, INPUT_COUNT[op]))


def plan_tensors(op, attrs, tensors):
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    static, extras, build = PLAN[op](attrs, tensors)
    present = [i for i in DATA_INPUTS[op] if tensors[i] is not None]
    key = (op, static, tuple((i, tensors[i].dtype, tuple(tensors[i].shape)) for i in present), tuple((e.dtype.str, e.shape) for e in extras))
    return Case(op, build, present, [array(tensors[i]) for i in present] + extras, key, moves_only(op, tensors))


def answer(e, op):
    """The answer of a case of `op` on which XLA raised `e` (tracing, compiling or running its
    program alone): the error kind its message names for JAX's shape and type checks,
    `unsupported` for what XLA does not implement, else `e` itself (an adapter bug: `internal`)."""
    if isinstance(e, CHECK_ERRORS):
        text = f"xla: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
        return OpError(error_kind(text, op), text)
    text = " ".join(str(e).split())
    if "UNIMPLEMENTED" in text or "not supported" in text.lower():
        return Unsupported(f"xla: {text[:300]}")
    return e


class ProgramFailed(Exception):
    """XLA raised compiling or running a program, outside any one case's trace: nothing names
    the case, so a program of several is split (`bisect`); `error` is what XLA raised."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def compile_cases(cases):
    """The XLA program of `cases`, compiled: (executable, rejected). The executable takes each
    case's arguments and returns the outputs of the cases not in `rejected`, which maps the
    index of each case JAX's checks rejected while it was traced to what they raised (so a case
    is rejected with the same message alone and in a batch)."""
    rejected = {}

    def program(args):
        outs = []
        for i, (case, a) in enumerate(zip(cases, args)):
            try:
                outs.append(case.build(dict(zip(case.present, a)), a[len(case.present):]))
            except CHECK_ERRORS as e:
                rejected[i] = e
        return outs

    lowered = jax.jit(program).trace([case.args for case in cases]).lower()
    options = MOVES_OPTIONS if all(case.moves for case in cases) else None
    return lowered.compile(options), rejected


def cached_program(cases):
    """compile_cases, a single case's program kept in CACHE by its key."""
    if len(cases) != 1:
        return compile_cases(cases)
    key = (cases[0].key, cases[0].moves)
    hit = CACHE.get(key)
    if hit is not None:
        CACHE.move_to_end(key)
        return hit, {}
    executable, rejected = compile_cases(cases)
    if not rejected:
        if len(CACHE) >= CACHE_SIZE:
            CACHE.popitem(last=False)
        CACHE[key] = executable
    return executable, rejected


def run_cases(cases):
    """One result per case, in order, from one XLA program of `cases`: its output tensor object,
    or the exception that is its answer. Raises ProgramFailed when XLA rejects the program."""
    results = [None] * len(cases)
    try:
        executable, rejected = cached_program(cases)
        outs = jax.block_until_ready(executable([case.args for case in cases]))
    except Exception as e:  # noqa: BLE001 - split by bisect, judged case by case
        raise ProgramFailed(e) from e
    built = [i for i in range(len(cases)) if i not in rejected]
    for i, e in rejected.items():
        results[i] = answer(e, cases[i].op)
    for i, y in zip(built, outs):
        try:
            results[i] = encode(y)
        except OpError as e:
            results[i] = e
    return results


def run_program(cases):
    """run_cases over `cases`, a program XLA rejects as a whole split in halves, then single
    cases, whose own failure is their answer."""
    results = bisect(run_cases, cases, ProgramFailed)
    return [answer(r.error, case.op) if isinstance(r, ProgramFailed) else r for r, case in zip(results, cases)]


def run_planned(cases):
    """Results of planned cases: one program for the cases that only move elements, one for the
    others (compiled with XLA's default emitters), each in the order given."""
    results = [None] * len(cases)
    for moves in (True, False):
        where = [i for i, case in enumerate(cases) if case.moves == moves]
        if where:
            for i, result in zip(where, run_program([cases[i] for i in where])):
                results[i] = result
    return results


def run(op, attrs, inputs):
    """Runs a case as a program of its own, compiled once per op, static plan (attributes, and
    the values of shape tensors, which XLA needs statically), data shapes and dtypes (kept in
    CACHE); the data and the converter's arrays are its arguments."""
    return outcome(run_planned([plan_case(op, attrs, inputs)])[0])


def outcome(result):
    if isinstance(result, BaseException):
        raise result
    return result


def run_batch(requests):
    """A batch's cases, each planned in its own case scope (a case the converter rejects is
    answered alone), the rest run as one program (`run_planned`)."""
    results = [None] * len(requests)
    planned, where = [], []
    for i, (case_id, op, attrs, inputs) in enumerate(requests):
        with case_scope(case_id):
            try:
                planned.append(plan_case(op, attrs, inputs))
                where.append(i)
            except (OpError, Unsupported) as e:
                results[i] = e
    for i, result in zip(where, run_planned(planned)):
        results[i] = result
    return results


def probe_dtypes():
    """wire.probe's answer (the dtypes XLA runs each op in), its cases run as one batch."""
    planned = {}

    def plan(op, attrs, tensors):
        with case_scope(("probe", op, tensors[0].dtype)):
            planned[(op, tensors[0].dtype)] = plan_tensors(op, attrs, tensors)

    probe(JNP_TYPE, plan)
    results = dict(zip(planned, run_planned(list(planned.values()))))

    def ran(op, attrs, tensors):
        key = (op, tensors[0].dtype)
        if key not in results:
            raise Unsupported("not planned")
        outcome(results[key])

    return probe(JNP_TYPE, ran)


def hello():
    import jaxlib

    return {
        "name": f"xla-jax-{jax.__version__}",
        "engine": {"name": "xla-jax", "version": jaxlib.__version__},
        "composed": composed_of(__file__),
        "ops": OPS,
        "dtypes": probe_dtypes(),
        "batch": BATCH,
    }


if __name__ == "__main__":
    main(hello, run, run_batch=run_batch)
