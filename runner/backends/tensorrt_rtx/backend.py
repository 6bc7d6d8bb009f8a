#!/usr/bin/env python3
"""opspec adapter for NVIDIA TensorRT for RTX, build-only: each case becomes a network of one
TensorRT layer, written the way a TensorRT user writes it (README.md has the table), and is built
with `build_serialized_network`. No GPU is needed for that, and none is used: the adapter answers
with what the builder says, the built network's output dtype and shape (`built`, docs/protocol.md)
or the builder's rejection. Values need an engine that runs, so this adapter declares
`build_only` in its hello.

The build (`build`) is apart from the answer (`run`): running the built plan on a GPU would be one
step between them (deserialise the plan, bind the input bytes, read the output), and `run` would
then answer `ok` with the data.

The adapter never decides for the builder: every attribute goes to the layer as given, and a case
is rejected only when TensorRT refuses it (an API call that raises or logs an error, or a build
that returns no plan). The error kind is given only where the builder's message names the rule
unambiguously (KIND_PATTERNS, each checked against a real message by test_errors.py).

Protocol: docs/protocol.md, over runner/backends/common/wire.py.
"""

import ctypes
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))

from missing import serve_missing  # noqa: E402

try:
    import numpy as np
    import tensorrt_rtx as trt
except ImportError as missing:  # reported to the runner, never run as a pass
    serve_missing(__file__, missing)

from wire import (INPUT_COUNT, OpError, Unsupported, bisect, case_scope, check_budget, composed, composed_of, float_list,  # noqa: E402
                  inputs_of, int_list, main, probe, prod)
from convert import FORMATS, Layout  # noqa: E402

# Wire dtype <-> TensorRT DataType.
TRT_TYPE = {
    "bool": trt.bool,
    "int4": trt.int4,
    "int8": trt.int8,
    "uint8": trt.uint8,
    "int32": trt.int32,
    "int64": trt.int64,
    "fp8": trt.fp8,
    "float16": trt.float16,
    "bfloat16": trt.bfloat16,
    "float32": trt.float32,
}
WIRE_TYPE = {v: k for k, v in TRT_TYPE.items()}
# numpy arrays holding a wire tensor's bits, for the element types numpy has.
NUMPY_TYPE = {"bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int32": "<i4", "int64": "<i8",
              "float16": "<f2", "float32": "<f4"}

SAMPLE_MODE = {
    "strict_bounds": trt.SampleMode.STRICT_BOUNDS,
    "wrap": trt.SampleMode.WRAP,
    "clamp": trt.SampleMode.CLAMP,
    "fill": trt.SampleMode.FILL,
    "reflect": trt.SampleMode.REFLECT,
}
SCALE_MODE = {"uniform": trt.ScaleMode.UNIFORM, "channel": trt.ScaleMode.CHANNEL, "elementwise": trt.ScaleMode.ELEMENTWISE}
TENSOR_FORMAT = {name: getattr(trt.TensorFormat, name) for name in FORMATS}

# Builder messages that name one rule of docs/protocol.md unambiguously -> error kind. A message
# matching none gives a rejection without a kind. Each pattern is checked on a real message of the
# pinned builder by test_errors.py.
KIND_PATTERNS = [
    ("invalid_rank", [r"Max expected length is 8", r"must have num dims <= Dims::MAX_DIMS"]),
    ("invalid_permutation", [r"`(first|second)_transpose` is not valid"]),
    ("invalid_reshape", [r"reshape dimension with more than one -1 wildcard", r"reshape dimension is less than -1",
                         r"has zero placeholder that refers to invalid axis"]),
    ("volume_mismatch", [r"reshape changes volume", r"reshape wildcard -1 has no integer solution",
                         r"reshape of empty tensor to non-empty tensor"]),
    ("indeterminate_wildcard", [r"reshape wildcard -1 has infinite number of solutions or no solution"]),
    ("invalid_weights", [r"weights has count \d+ but \d+ was expected", r"count \d+ conflicts with \d+ count"]),
    ("invalid_channel_axis", [r"\[Scale\]: For \w+ mode, channel axis -?\d+ must be in range"]),
    ("out_of_bounds", [r"out of bounds slice", r"ISliceLayer has out of bounds access on axis"]),
    ("empty_dimension", [r"invalid non-zero slice on an empty dimension"]),
    ("fill_not_allowed", [r"Fill input should only be provided when SampleMode is kFILL"]),
    ("invalid_fill", [r"should have a fill value that is of rank 0", r"`input4` type must be the same as or implicitly convertible"]),
    ("invalid_size", [r"slice size cannot have negative dimension"]),
    ("rank_mismatch", [r"mismatch in number of dimensions for (start|size|stride)", r"must have the same length as axes input"]),
    ("invalid_input", [r"ISliceLayer input[1235] must be a 1D shape tensor"]),
    ("unsupported_dtype", [r"unsupported by tensor's allowed TensorFormats", r"\]: (first )?input has type \w+ but must have type",
                           r"Tensor (input|fill) has datatype \w+ but is not consumed by"]),
]
KIND_PATTERNS = [(kind, [re.compile(p) for p in patterns]) for kind, patterns in KIND_PATTERNS]
# A builder failure that is an internal error rather than a usage error, and names no rule, is a
# crash caught here: kind `internal`, which fails any case (docs/protocol.md "Error kinds").
INTERNAL = re.compile(r"Error Code [12]: Internal Error|Error Code 1: Myelin")


class Rejected(Exception):
    """TensorRT refused the network: an API call raised or logged an error, or the build failed.
    `errors`: the messages, first logged first."""

    def __init__(self, errors):
        super().__init__(" | ".join(errors))
        self.errors = errors


NO_GPU = "cudaError 35: CUDA driver version is insufficient"
QUIET = (trt.ILogger.Severity.VERBOSE, trt.ILogger.Severity.INFO)


class Capture(trt.ILogger):
    """Keeps what TensorRT logs at WARNING and above, per build."""

    def __init__(self):
        trt.ILogger.__init__(self)
        self.lines = []

    def log(self, severity, msg):
        if severity in QUIET:
            # Most of what a build logs (about a hundred lines each): nothing a verdict reads.
            return
        if NO_GPU in str(msg):
            # The builder probes for a device after some failures; no GPU is expected here.
            return
        if severity in (trt.ILogger.Severity.INTERNAL_ERROR, trt.ILogger.Severity.ERROR):
            self.lines.append(("E", " ".join(str(msg).split())))
        elif severity == trt.ILogger.Severity.WARNING:
            self.lines.append(("W", " ".join(str(msg).split())))

    def errors(self):
        return [m for s, m in self.lines if s == "E"]


def keep_freed_memory():
    """Lets the C library keep the memory a build frees for the next build. Many builds (int8
    and fp8 networks, Scales, some bfloat16 ones) allocate and zero a 64 MiB buffer; past glibc's
    mmap threshold (32 MiB at most by default) each one is a fresh mapping, and zeroing it costs
    16,384 page faults, 30 to 80 ms of system time a build: two thirds of a whole run's CPU. With
    the threshold and the trim threshold at 1 GiB the buffer is reused and the peak resident size
    stays where it was (bench_batch.py measures it). A C library other than glibc is left as it
    is. Nothing the builder decides depends on it."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    mallopt(M_MMAP_THRESHOLD, 1 << 30)
    mallopt(M_TRIM_THRESHOLD, 1 << 30)


keep_freed_memory()
LOGGER = Capture()
BUILDER = trt.Builder(LOGGER)


def call(fn, *args):
    """One call into TensorRT's API; what it raises or logs as an error is its rejection."""
    before = len(LOGGER.errors())
    try:
        value = fn(*args)
    except (TypeError, ValueError, IndexError, OverflowError, RuntimeError) as e:
        raise Rejected(LOGGER.errors() + [f"{getattr(fn, '__name__', fn)}: {type(e).__name__}: {' '.join(str(e).split())}"]) from None
    if len(LOGGER.errors()) > before:
        raise Rejected(LOGGER.errors())
    return value


def dims(values):
    """trt.Dims of a list; TensorRT's Dims holds at most 8 entries and refuses more."""
    return call(trt.Dims, values)


def setattr_checked(layer, name, value):
    call(setattr, layer, name, value)


def weights(dtype, data, shape):
    """A numpy array (or trt.Weights for dtypes numpy lacks) of a wire tensor's bits; the array
    must outlive the network, so the caller keeps it."""
    if prod(shape) == 0:
        # An empty constant has no values and, as addConstant checks, no pointer.
        return trt.Weights(TRT_TYPE[dtype])
    if dtype in NUMPY_TYPE:
        return np.frombuffer(data, dtype=NUMPY_TYPE[dtype]).reshape(shape).copy()
    raw = np.frombuffer(data, dtype=np.uint8).copy()
    return raw, trt.Weights(TRT_TYPE[dtype], raw.ctypes.data, prod(shape))


def typed_weights(values, dtype, keep):
    """float32 coefficients as Weights of `dtype` (rounded to nearest even for float16 and
    bfloat16); the array is kept alive in `keep`."""
    values = np.ascontiguousarray(values, dtype=np.float32)
    if dtype == "float32":
        keep.append(values)
        return values
    if dtype == "float16":
        array = values.astype(np.float16)
        keep.append(array)
        return array
    bits = values.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(values)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    keep.append(rounded)
    return trt.Weights(trt.bfloat16, rounded.ctypes.data, rounded.size)


class Network:
    """One network under construction, and the arrays its constants point to. `prefix` starts the
    names of the network inputs a case adds: empty for a case built alone (`input`, `fill`, as
    before batching), `case<k>.` for case k of a batch, so that a message naming one says whose
    it is."""

    def __init__(self):
        self.net = BUILDER.create_network(0)
        self.keep = []
        self.prefix = ""

    def input(self, wire, name, shape=None, fmt=None):
        """A data input of the case: a network input of its dtype and shape."""
        if wire.dtype not in TRT_TYPE:
            raise Unsupported(f"dtype {wire.dtype}")
        x = call(self.net.add_input, self.prefix + name, TRT_TYPE[wire.dtype], dims(shape if shape is not None else wire.shape))
        if x is None:
            raise Rejected(LOGGER.errors() or ["add_input returned no tensor"])
        if fmt is not None:
            x.allowed_formats = 1 << int(TENSOR_FORMAT[fmt])
        return x

    def constant(self, wire):
        """A shape tensor the case gives as a value (reshape dims, start, size, stride, axes): a
        constant layer, which the builder folds into the shapes."""
        if wire.dtype not in TRT_TYPE:
            raise Unsupported(f"dtype {wire.dtype}")
        w = weights(wire.dtype, wire.data, wire.shape)
        self.keep.append(w)
        w = w[1] if isinstance(w, tuple) else w
        layer = call(self.net.add_constant, dims(wire.shape), w)
        if layer is None:
            raise Rejected(LOGGER.errors() or ["add_constant returned no layer"])
        return layer.get_output(0)

    def scalar(self, value):
        """A float32 scalar constant (a Quantize or Dequantize scale)."""
        array = np.array(value, dtype=np.float32)
        self.keep.append(array)
        return checked(call(self.net.add_constant, dims([]), array), "add_constant").get_output(0)


def checked(layer, what):
    if layer is None:
        raise Rejected(LOGGER.errors() or [f"{what} returned no layer"])
    return layer


# ----------------------------------------------------------------------------------------------
# The layers, one per op


def shuffle(n, attrs, t):
    layer = checked(call(n.net.add_shuffle, n.input(t[0], "input")), "add_shuffle")
    for name in ("first_transpose", "second_transpose"):
        perm = int_list(attrs, name)
        if perm is not None:
            setattr_checked(layer, name, call(trt.Permutation, perm))
    if "zero_is_placeholder" in attrs:
        setattr_checked(layer, "zero_is_placeholder", bool(attrs["zero_is_placeholder"]))
    if t[1] is not None:
        call(layer.set_input, 1, n.constant(t[1]))
    elif attrs.get("reshape_dims") is not None:
        setattr_checked(layer, "reshape_dims", dims(int_list(attrs, "reshape_dims")))
    return layer


SLICE_INPUTS = {"start": 1, "size": 2, "stride": 3, "axes": 5}


def slice_(n, attrs, t):
    x = n.input(t[0], "input")
    # add_slice takes start, shape and stride; a value the case gives as a tensor goes through
    # set_input instead, and the attribute stays at add_slice's placeholder (ignored by TensorRT
    # once the input is set).
    static = {name: int_list(attrs, name) for name in ("start", "size", "stride")}
    rank = len(t[0].shape)
    given = next((len(v) for v in static.values() if v is not None), rank)
    placeholder = [0] * given

    def value(name):
        # add_slice has no call without start and size: a value given neither as an attribute
        # nor as an input is written as empty Dims, for the builder to judge.
        if static[name] is not None:
            return static[name]
        return placeholder if t[SLICE_INPUTS[name]] is not None else []

    start, size = value("start"), value("size")
    stride = static["stride"] if static["stride"] is not None else [1] * len(start)
    layer = checked(call(n.net.add_slice, x, dims(start), dims(size), dims(stride)), "add_slice")
    if "mode" in attrs:
        setattr_checked(layer, "mode", SAMPLE_MODE[attrs["mode"]])
    axes = int_list(attrs, "axes")
    if axes is not None:
        setattr_checked(layer, "axes", dims(axes))
    for name, position in SLICE_INPUTS.items():
        if t[position] is not None:
            call(layer.set_input, position, n.constant(t[position]))
    if t[4] is not None:
        # The fill value is a value of the case, like the data: a network input of its own
        # (an int8 or fp8 constant is a quantized value TensorRT takes only before a Dequantize).
        call(layer.set_input, 4, n.input(t[4], "fill"))
    return layer


def scale(n, attrs, t):
    x = t[0]
    # In a strongly typed network the weights have the input's type (a float32 coefficient list
    # on a float16 input ends in an internal assertion of the builder: repro/).
    wtype = x.dtype if x.dtype in ("float16", "bfloat16") else "float32"
    xi = n.input(x, "input")
    if x.dtype == "int8":
        # An int8 input is a quantized value of scale 1: in a strongly typed network a user writes
        # Dequantize(1.0) to float32, the float Scale, and Quantize(1.0) back to an int8 output
        # (an int8 Scale itself ends in an internal assertion: repro/scale_int8_internal_assertion.py).
        composed("scale:int8")
        xi = checked(call(n.net.add_dequantize, xi, n.scalar(1.0), trt.float32), "add_dequantize").get_output(0)
    coeffs = {}
    for name in ("shift", "scale", "power"):
        w = float_list(attrs, name)
        if w is None or w.size == 0:
            coeffs[name] = trt.Weights(TRT_TYPE[wtype])
        else:
            coeffs[name] = typed_weights(w, wtype, n.keep)
    mode = SCALE_MODE[attrs["mode"]]
    if attrs.get("channel_axis") is None:
        layer = call(n.net.add_scale, xi, mode, coeffs["shift"], coeffs["scale"], coeffs["power"])
    else:
        layer = call(n.net.add_scale_nd, xi, mode, coeffs["shift"], coeffs["scale"], coeffs["power"], int(attrs["channel_axis"]))
    layer = checked(layer, "add_scale")
    if x.dtype == "int8" and (attrs.get("output_dtype") or "int8") == "int8":
        layer = checked(call(n.net.add_quantize, layer.get_output(0), n.scalar(1.0), trt.int8), "add_quantize")
    return layer


def reformat(n, attrs, t):
    """A network input in the `from` format and an output in the `to` format, an identity layer
    between: the builder inserts the reformat."""
    src, dst = attrs["from"], attrs["to"]
    # A LINEAR input is the logical tensor: the network input has its dims (the suite's `shape`
    # attribute beside it is the suite's own convention, which the builder never sees).
    shape = int_list(attrs, "shape")
    if src == "LINEAR" or shape is None:
        # Without a logical shape the network input has the buffer's own dims, for the builder
        # to judge against the format.
        shape = t[0].shape
    x = n.input(t[0], "input", shape=shape, fmt=src)
    layer = checked(call(n.net.add_identity, x), "add_identity")
    layer.get_output(0).allowed_formats = 1 << int(TENSOR_FORMAT[dst])
    return layer


LAYERS = {"shuffle": shuffle, "slice": slice_, "scale": scale, "reformat": reformat}


# ----------------------------------------------------------------------------------------------
# Build, then answer


class Built:
    """What the builder says of a network it built: the output's dtype and dims, and the format
    the network output was declared in (reformat)."""

    __slots__ = ("dtype", "dims", "format")

    def __init__(self, dtype, dims, fmt):
        self.dtype, self.dims, self.format = dtype, dims, fmt


def add_case(n, op, attrs, tensors):
    """The case's layers in network `n`, its output marked as a network output; returns it."""
    layer = LAYERS[op](n, attrs, tensors)
    out = layer.get_output(0)
    call(n.net.mark_output, out)
    if op == "reformat":
        out.allowed_formats = 1 << int(TENSOR_FORMAT[attrs["to"]])
    return out


def plan_of(n):
    """`build_serialized_network` of network `n`: the plan, or None (the reasons are in LOGGER)."""
    return BUILDER.build_serialized_network(n.net, BUILDER.create_builder_config())


def built_of(op, attrs, out):
    """The Built of a case whose network built, read from its output tensor `out`."""
    dims = list(out.shape)
    if any(d < 0 for d in dims):
        raise OpError("internal", f"the built network's output has unresolved dims {dims}")
    wanted = attrs.get("output_dtype") if op == "scale" else None
    if wanted is not None and WIRE_TYPE.get(out.dtype) != wanted:
        # A strongly typed network (the only kind TensorRT-RTX and TensorRT 11 build) types a
        # layer's output from its inputs: no API asks Scale for another output type.
        raise Unsupported(f"the builder types this Scale's output {WIRE_TYPE.get(out.dtype)} from its input; a {wanted} output "
                          "needs weak typing (TensorRT 10 and earlier), which TensorRT-RTX does not have")
    return Built(WIRE_TYPE.get(out.dtype, str(out.dtype)), dims, attrs.get("to") if op == "reformat" else None)


def build(op, attrs, tensors):
    """Builds the case's network, the case alone; returns a Built, or raises Rejected (with the
    builder's message), OpError or Unsupported."""
    LOGGER.lines.clear()
    n = Network()
    out = add_case(n, op, attrs, tensors)
    plan = plan_of(n)
    errors = LOGGER.errors()
    if plan is None or errors:
        raise Rejected(errors or ["build_serialized_network returned no plan and logged nothing"])
    return built_of(op, attrs, out)


def kind_of(errors):
    """The kind the first error message that names a rule gives (the builder often logs the
    rule, then what failed because of it)."""
    for message in errors:
        for kind, patterns in KIND_PATTERNS:
            if any(p.search(message) for p in patterns):
                return kind
        if INTERNAL.search(message):
            return "internal"
    return None


def answer(op, attrs, built):
    """The `built` answer's output: dtype and shape as the wire carries them. A tensor in a
    format other than LINEAR travels as the 1-D memory image of its logical dims
    (docs/protocol.md "reformat"); the built network's dims are the logical ones."""
    check_budget(built.dims)
    out = {"dtype": built.dtype, "shape": built.dims}
    if built.format is not None and built.format != "LINEAR":
        out["format"] = f"{built.format} (the network output's allowed_formats; logical dims {built.dims})"
        try:
            out["shape"] = [check_budget(Layout(built.format, built.dims, built.dtype, attrs.get("dla", "orin")).memory, "buffer")]
        except OpError:
            # The builder took a rank the protocol's table gives no memory image for: the
            # logical dims stand, and the format text says so.
            out["format"] += "; no memory image of this rank in docs/protocol.md"
    return out


def tensors_of(op, inputs):
    """The request's input tensors, decoded; or what answers the case before any build."""
    if op not in LAYERS:
        raise Unsupported(f"op {op!r} has no TensorRT layer")
    tensors = inputs_of(inputs, INPUT_COUNT[op])
    if tensors[0] is None:
        raise OpError("invalid_input", "input 0 is required")
    return tensors


def run_tensors(op, attrs, tensors):
    """A case's answer, its network built alone."""
    try:
        built = build(op, attrs, tensors)
    except Rejected as e:
        raise OpError(kind_of(e.errors), f"tensorrt_rtx {trt.__version__}: {' | '.join(e.errors)}"[:2000]) from None
    return answer(op, attrs, built)


def run(op, attrs, inputs):
    return run_tensors(op, attrs, tensors_of(op, inputs))


# ----------------------------------------------------------------------------------------------
# Batches: one network of independent layer chains, one build
#
# Case k of a batch adds its layers to the batch's network with every network input and layer
# named `case<k>.…`. The builder's verdict on the batch is taken only where it is the case's own:
# - a case whose layers TensorRT refuses while they are added (an API call that raises or logs
#   an error, an output whose shape it cannot infer or leaves unknown) is answered alone;
# - a build that fails is answered by its error messages: each case they name is answered alone,
#   and the others are built again without it;
# - a failed build whose errors name no case (an internal error of the Myelin compiler, which
#   compiles the batch's chains as one region) is split by wire.bisect, halves then singles;
# - a build that succeeds without an error answers every case in it from its output tensor.
# A reformat from or to CHW16, DLA_LINEAR or DLA_HWC4 is answered alone from the start: the
# pinned builder ends every such build in an internal assertion that names no layer
# (repro/formats_internal_assertion.py), and the suite sends them in runs, where bisecting a batch
# of them costs about twice the builds of answering each alone. Which cases go alone depends on
# their attributes only, never on what they expect.
# "Answered alone" is exactly the single `run` (the case's own network, its own message): a
# rejection's message and kind never depend on the batch, and a case is answered from the batch's
# build only when that build succeeded.

CASE_NAME = re.compile(r"\bcase(\d+)\.")
LONE_FORMATS = {"CHW16", "DLA_LINEAR", "DLA_HWC4"}
# A Myelin region's name spans the layers it holds, `ForeignNode[case3.0...case0.0]`: it names a
# range, not a case.
REGION = re.compile(r"ForeignNode\[[^\]]*\]")


class Case:
    """One case of a batch: its index in the batch (the `case<k>.` of its names), its id, op,
    attributes and decoded input tensors."""

    __slots__ = ("k", "id", "op", "attrs", "tensors")

    def __init__(self, k, case_id, op, attrs, tensors):
        self.k, self.id, self.op, self.attrs, self.tensors = k, case_id, op, attrs, tensors


class NamesNoCase(Exception):
    """A batch's build failed, and none of its messages names a case of the batch."""


def named(messages):
    """The indices of the cases `messages` name (a layer or tensor `case<k>.…`)."""
    return {int(k) for message in messages for k in CASE_NAME.findall(REGION.sub("", message))}


def add_named(n, case):
    """Adds the case's layers to the batch network `n`, each layer and network input named
    `case<k>.…`; returns its output tensor, or None when TensorRT refused something while they
    were added. The output's shape is asked for here, so that a shape the builder cannot infer is
    this case's error, not the build's; a dim it leaves unknown (a network input given a -1,
    which the build then rejects naming no layer) sends the case alone too."""
    n.prefix = f"case{case.k}."
    first, errors = n.net.num_layers, len(LOGGER.errors())
    try:
        with case_scope(case.id):
            out = add_case(n, case.op, case.attrs, case.tensors)
            if any(d < 0 for d in out.shape):
                out = None
    except Exception:  # noqa: BLE001 - the case's own answer comes from its build alone
        out = None
    for i in range(first, n.net.num_layers):
        n.net.get_layer(i).name = f"case{case.k}.{i - first}"
    return out if len(LOGGER.errors()) == errors else None


def lone(case):
    """A reformat from or to a format of LONE_FORMATS: answered alone from the start."""
    ends = [case.attrs.get("from"), case.attrs.get("to")]
    return case.op == "reformat" and any(isinstance(end, str) and end in LONE_FORMATS for end in ends)


def finished(case, out):
    """The answer of a case whose batch network built: its output object, or the exception that
    answers it (too large, an unresolved dim, an output type the builder does not give)."""
    try:
        with case_scope(case.id):
            return answer(case.op, case.attrs, built_of(case.op, case.attrs, out))
    except Exception as e:  # noqa: BLE001 - the case's answer; wire reports an adapter bug as internal
        return e


def alone(case):
    """The case's answer from its own network: what a single `run` answers (or raises)."""
    with case_scope(case.id):
        try:
            return run_tensors(case.op, case.attrs, case.tensors)
        except Exception as e:  # noqa: BLE001 - the case's answer
            return e


def build_together(cases, settled):
    """The results of `cases` (in order) from one network of those not yet `settled` (a dict of
    results by case index, which it fills). Raises NamesNoCase when the build fails and no
    message names a case."""
    pending = [case for case in cases if case.k not in settled]
    while len(pending) > 1:
        LOGGER.lines.clear()
        n = Network()
        outs = {case.k: add_named(n, case) for case in pending}
        refused = {k for k, out in outs.items() if out is None}
        if not refused:
            plan = plan_of(n)
            errors = LOGGER.errors()
            if plan is not None and not errors:
                settled.update((case.k, finished(case, outs[case.k])) for case in pending)
                break
            refused = named(errors) & set(outs)
            if not refused:
                raise NamesNoCase(" | ".join(errors) or "build_serialized_network returned no plan and logged nothing")
        settled.update((case.k, alone(case)) for case in pending if case.k in refused)
        pending = [case for case in pending if case.k not in refused]
    for case in pending:
        if case.k not in settled:
            settled[case.k] = alone(case)
    return [settled[case.k] for case in cases]


def run_batch(requests):
    """wire.main's `run_batch`: the cases of a batch request built as one network (above); one
    result per request, in order."""
    results = [None] * len(requests)
    cases = []
    for k, (case_id, op, attrs, inputs) in enumerate(requests):
        try:
            cases.append(Case(k, case_id, op, attrs, tensors_of(op, inputs)))
        except Exception as e:  # noqa: BLE001 - as `run` answers it
            results[k] = e
    settled = {}  # once per case, however often bisect builds the part it is in
    for case in cases:
        if lone(case):
            settled[case.k] = alone(case)
    together = [case for case in cases if case.k not in settled]
    for case, result in zip(together, bisect(lambda part: build_together(part, settled), together, NamesNoCase)):
        settled[case.k] = result
    for case in cases:
        results[case.k] = settled[case.k]
    return results


# ----------------------------------------------------------------------------------------------
# Hello


def attempt(op, attrs, tensors):
    """One probe build (wire.probe): a rejection means the builder does not take the dtype; an
    internal error does not say so, and leaves the dtype in, so that the crash stays visible."""
    try:
        build(op, attrs, tensors)
    except Rejected as e:
        if kind_of(e.errors) != "internal":
            raise OpError(kind_of(e.errors), " | ".join(e.errors)) from None


# The most cases a batch request holds: BATCH_TABLE in README.md, measured by bench_batch.py.
BATCH = 32


def hello():
    # The dtypes in which the installed builder builds the simplest case of each op (reformat's
    # dtypes depend on the format, and are the builder's to judge case by case).
    dtypes = probe(TRT_TYPE, attempt, ops=["shuffle", "slice", "scale"])
    return {
        "name": f"tensorrt-rtx-{trt.__version__}",
        "engine": {"name": "tensorrt-rtx", "version": trt.__version__},
        "ops": list(LAYERS),
        "build_only": True,
        "dtypes": dtypes,
        "composed": composed_of(__file__),
        "batch": BATCH,
    }


if __name__ == "__main__":
    main(hello, run, answer="built", run_batch=run_batch)
