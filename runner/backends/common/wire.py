"""Protocol plumbing shared by the engine adapters: tensors on the wire, the request loop, and the
errors an adapter reports. The rules are docs/protocol.md's.

An adapter supplies `hello()` (the capabilities it declares) and `run(op, attrs, inputs)`, which
returns one output tensor object or raises `OpError` / `Unsupported`, and hands them to `main`. Anything else it raises is
a bug of the adapter and is answered as an error of kind `internal` (which fails the case), so
adapter bugs stay visible.

An adapter whose packages cannot be imported answers through missing.py instead.
"""

import base64
import json
import os
import sys
import traceback

import numpy as np

PROTOCOL = 1

# Bytes per element on the wire (int4: two per byte, handled apart).
ITEMSIZE = {
    "bool": 1,
    "int4": None,
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "int64": 8,
    "fp8": 1,
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
}
# numpy dtype holding one element's bits (int4: one packed byte pair per two elements).
RAW = {
    "bool": np.dtype(np.uint8),
    "int4": np.dtype(np.uint8),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "fp8": np.dtype(np.uint8),
    "float16": np.dtype("<u2"),
    "bfloat16": np.dtype("<u2"),
    "float32": np.dtype("<u4"),
}

# The op vocabulary, generated from the Rust definitions (crates/spec/src/vocabulary.rs) and
# checked current by crates/spec/tests/schema.rs: the ops, their inputs and probes, the modes,
# formats, dtypes and error kinds.
VOCABULARY_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "schema", "vocabulary.json")
with open(VOCABULARY_PATH, encoding="utf-8") as _f:
    VOCABULARY = json.load(_f)

# Byte sizes are wire data of each dtype: a dtype added in Rust without its size here fails at
# import, not in the middle of a run.
assert set(ITEMSIZE) == set(VOCABULARY["dtypes"]) == set(RAW), f"{VOCABULARY_PATH}: dtypes differ from ITEMSIZE/RAW"

# Input positions of each op (docs/protocol.md "Ops").
INPUT_COUNT = {op["name"]: len(op["inputs"]) for op in VOCABULARY["ops"]}
OPS = list(INPUT_COUNT)

try:
    MAX_ELEMENTS = int(os.environ.get("OPSPEC_MAX_ELEMENTS", str(1 << 28)))
except ValueError:
    MAX_ELEMENTS = 1 << 28


class OpError(Exception):
    """The implementation rejects the case; `kind` may be None when it cannot tell which rule."""

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


def nbytes(dtype, count):
    if dtype == "int4":
        return (count + 1) // 2
    return count * ITEMSIZE[dtype]


class Wire:
    """A tensor as it travels: dtype name, shape, and the raw little-endian bytes."""

    __slots__ = ("dtype", "shape", "data")

    def __init__(self, dtype, shape, data):
        self.dtype = dtype
        self.shape = shape
        self.data = data

    def raw(self):
        """The bits as a numpy array of `shape` (int4: unpacked to int8 values)."""
        if self.dtype == "int4":
            return unpack_int4(self.data, prod(self.shape)).reshape(self.shape)
        return np.frombuffer(self.data, dtype=RAW[self.dtype]).reshape(self.shape)

    def ints(self, name):
        """A shape-tensor input: 1-D int32/int64 -> list of Python ints."""
        if self.dtype not in ("int32", "int64") or len(self.shape) != 1:
            # The converter reads the values to compute Slice ends or Pad amounts: it has nothing
            # to read in another tensor.
            raise Unsupported(f"input {name!r} is a {self.dtype} tensor of shape {self.shape}, not the 1-D int32/int64 list the converter reads")
        return [int(v) for v in self.raw().tolist()]


def unpack_int4(data, count):
    b = np.frombuffer(data, dtype=np.uint8)
    out = np.empty(2 * len(b), dtype=np.int8)
    out[0::2] = b & 0x0F
    out[1::2] = b >> 4
    return ((out[:count] ^ 8) - 8).astype(np.int8)


def pack_int4(values):
    v = values.reshape(-1).astype(np.uint8) & 0x0F
    if v.size % 2:
        v = np.concatenate([v, np.zeros(1, np.uint8)])
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8).tobytes()


def decode(obj, where):
    if not isinstance(obj, dict):
        raise OpError("internal", f"{where}: tensor is not an object")
    dtype, shape, data = obj.get("dtype"), obj.get("shape"), obj.get("data")
    if dtype not in ITEMSIZE:
        raise Unsupported(f"{where}: dtype {dtype!r} is not known to this adapter")
    if not isinstance(shape, list) or any(type(d) is not int or d < 0 for d in shape):
        raise OpError("internal", f"{where}: bad shape {shape!r}")
    if not isinstance(data, str):
        raise OpError("internal", f"{where}: data is not a base64 string")
    buf = base64.b64decode(data)
    want = nbytes(dtype, prod(shape))
    if len(buf) != want:
        raise OpError("internal", f"{where}: {dtype} tensor of shape {shape} needs {want} bytes, got {len(buf)}")
    return Wire(dtype, list(shape), buf)


def encode_bytes(dtype, shape, data):
    return {"dtype": dtype, "shape": [int(d) for d in shape], "data": base64.b64encode(data).decode("ascii")}


def encode_raw(dtype, array):
    """A tensor object from a numpy array of raw bits (int4: int8 values)."""
    if dtype == "int4":
        return encode_bytes(dtype, array.shape, pack_int4(array))
    return encode_bytes(dtype, array.shape, np.ascontiguousarray(array).astype(RAW[dtype], copy=False).tobytes())


def inputs_of(inputs, count):
    """Decodes the request's inputs: a list of `count` entries, None for absent ones."""
    out = []
    for i in range(count):
        v = inputs[i] if i < len(inputs) else None
        out.append(None if v is None else decode(v, f"input {i}"))
    return out


def int_list(attrs, name, required=False):
    v = attrs.get(name)
    if v is None:
        if required:
            raise OpError("invalid_input", f"attribute {name!r} is required")
        return None
    if not isinstance(v, list) or any(type(x) is not int for x in v):
        raise OpError("invalid_input", f"attribute {name!r} must be a list of integers, got {v!r}")
    return v


def list_from(attrs, name, tensor):
    """A list given either as an attribute or as a shape-tensor input (the loader rejects both)."""
    if tensor is not None:
        return tensor.ints(name)
    return int_list(attrs, name)


def float_list(attrs, name):
    """Scale's coefficients: float32 tensor objects of shape [n] (see docs/protocol.md)."""
    v = attrs.get(name)
    if v is None:
        return None
    if isinstance(v, dict):
        t = decode(v, f"attribute {name}")
        if t.dtype != "float32":
            raise OpError("invalid_input", f"attribute {name} must be a float32 tensor, got {t.dtype}")
        return t.raw().reshape(-1).view(np.float32)
    if isinstance(v, list) and all(type(e) in (int, float) for e in v):
        return np.array(v, dtype=np.float32)
    raise OpError("invalid_input", f"attribute {name} must be a float32 tensor object, got {v!r}")


# The simplest case of each op, which an adapter runs in every dtype at start-up (`probe`), so
# that its hello lists the dtypes the installed engine runs each op in: (attrs, input 0's shape).
PROBES = {op["name"]: (op["probe"]["attrs"], op["probe"]["shape"]) for op in VOCABULARY["ops"]}


def probe(dtypes, attempt, ops=OPS):
    """{op: [dtype, ...]}: the `dtypes` in which `attempt(op, attrs, tensors)` runs the op's
    PROBES case (zeros) without raising OpError or Unsupported, for each of `ops`."""
    found = {}
    for op in ops:
        attrs, shape = PROBES[op]
        found[op] = []
        for dtype in dtypes:
            tensors = [Wire(dtype, shape, bytes(nbytes(dtype, prod(shape))))] + [None] * (INPUT_COUNT[op] - 1)
            try:
                attempt(op, attrs, tensors)
                found[op].append(dtype)
            except (OpError, Unsupported):
                pass
    return found


def _summary(e):
    tb = traceback.extract_tb(e.__traceback__)
    where = " <- ".join(f"{os.path.basename(f.filename)}:{f.lineno} {f.name}" for f in reversed(tb[-3:]))
    return f"{type(e).__name__}: {e} at {where}"


# The composed paths (keys of the hello's `composed`) that produced each case's answer, by case id:
# an adapter's composing branch calls `composed(key)` while it builds a case, and the reply says them
# (docs/protocol.md, "Composed as it happened").
_composed_notes = {}
_current_case = [None]


class case_scope:
    """`with case_scope(case_id):` around building one case: `composed(key)` calls inside it are
    that case's. The request loop opens one per `run` request; a `run_batch` opens one per case."""

    def __init__(self, case_id):
        self.case_id = case_id

    def __enter__(self):
        self.outer = _current_case[0]
        _current_case[0] = self.case_id
        _composed_notes.setdefault(self.case_id, [])
        return self

    def __exit__(self, *exc):
        _current_case[0] = self.outer
        return False


def composed(key):
    """Notes that the case being built takes the composed path `key` (a key of the hello's
    `composed`): its reply lists it."""
    if _current_case[0] is None:  # outside a case (a probe at start-up): no reply to name it
        return
    notes = _composed_notes.setdefault(_current_case[0], [])
    if key not in notes:
        notes.append(key)


def _error_reply(mid, e):
    """The reply of a case whose answer is the exception `e`."""
    if isinstance(e, OpError):
        reply = {"type": "error", "id": mid, "message": e.message}
        if e.kind is not None:
            reply["kind"] = e.kind
        return reply
    if isinstance(e, Unsupported):
        return {"type": "unsupported", "id": mid, "reason": str(e)}
    # A bug in the adapter: make it visible.
    traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    return {"type": "error", "id": mid, "kind": "internal", "message": _summary(e)}


def _with_notes(reply, mid):
    notes = _composed_notes.pop(mid, None)
    if notes and reply.get("type") in ("ok", "built"):
        reply["composed"] = notes
    return reply


def _request_parts(msg):
    """A `run` request's (id, op, attrs, inputs), checked for shape."""
    if not isinstance(msg, dict):
        raise OpError("internal", "request is not a JSON object")
    attrs = msg.get("attrs") or {}
    inputs = msg.get("inputs") or []
    if not isinstance(attrs, dict) or not isinstance(inputs, list):
        raise OpError("internal", "attrs must be an object and inputs a list")
    return msg.get("id"), msg.get("op"), attrs, inputs


def answer_run(msg, run, answer="ok"):
    """The reply to one `run` request: `run(op, attrs, inputs)` gives its output tensor object."""
    mid = msg.get("id") if isinstance(msg, dict) else None
    try:
        with case_scope(mid):
            mid, op, attrs, inputs = _request_parts(msg)
            reply = {"type": answer, "id": mid, "outputs": [run(op, attrs, inputs)]}
    except Exception as e:  # noqa: BLE001 - every exception becomes the case's reply
        reply = _error_reply(mid, e)
    return _with_notes(reply, mid)


def answer_batch(cases, run, run_batch=None, answer="ok"):
    """The replies to a `batch` request's cases, one per case. Without `run_batch` each case is
    answered alone (`answer_run`). `run_batch(requests)` takes the list of `(id, op, attrs,
    inputs)` and returns one result per request, in order: its output tensor object, or the
    exception that is its answer (OpError, Unsupported; anything else is an adapter bug).
    A case whose request is malformed is answered alone and never reaches `run_batch`."""
    if not isinstance(cases, list):
        raise OpError("internal", "a batch's cases must be a list")
    if run_batch is None:
        return [answer_run(msg, run, answer) for msg in cases]
    replies = [None] * len(cases)
    requests, where = [], []
    for i, msg in enumerate(cases):
        try:
            requests.append(_request_parts(msg))
            where.append(i)
        except OpError as e:
            replies[i] = _error_reply(msg.get("id") if isinstance(msg, dict) else None, e)
    for request in requests:
        _composed_notes.setdefault(request[0], [])
    try:
        results = run_batch(requests)
    except Exception as e:  # noqa: BLE001 - a batch that fails as a whole: each case alone
        print(f"batch of {len(requests)} failed as a whole ({type(e).__name__}: {e}); answering each case alone", file=sys.stderr)
        results = None
    if results is None or len(results) != len(requests):
        for request, i in zip(requests, where):
            _composed_notes.pop(request[0], None)
            replies[i] = answer_run(cases[i], run, answer)
        return replies
    for (mid, _, _, _), i, result in zip(requests, where, results):
        if isinstance(result, BaseException):
            reply = _error_reply(mid, result)
        else:
            reply = {"type": answer, "id": mid, "outputs": [result]}
        replies[i] = _with_notes(reply, mid)
    return replies


def bisect(build, items, whole_failure=Exception):
    """Results of `build(items)` (one per item, in order), where `build` fails as a whole with
    `whole_failure` when the engine rejects the batch without saying which item: the batch is then
    split in halves, down to single items, and a single item's failure is its own result (the
    exception). So a failure naming no case costs about log2(n) extra builds per bad item, and
    never another case's verdict."""
    try:
        return build(items)
    except whole_failure as e:
        if len(items) == 1:
            return [e]
        half = len(items) // 2
        return bisect(build, items[:half], whole_failure) + bisect(build, items[half:], whole_failure)


def serve(hello, run, answer="ok", run_batch=None):
    """The request loop: one JSON line in, one JSON line out, flushed; a `batch` request gets one
    line per case. `answer` is the type of a reply with outputs: `ok`, or `built` for a
    build-only backend (whose outputs have no data). `run_batch`, when given, answers a batch's
    cases together (`answer_batch`); the hello should then declare `batch`."""
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        mid = None
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise OpError("internal", "request is not a JSON object")
            mid = msg.get("id")
            kind = msg.get("type")
            if kind == "hello":
                replies = [dict(hello(), type="hello", protocol=PROTOCOL)]
            elif kind == "run":
                replies = [answer_run(msg, run, answer)]
            elif kind == "batch" and run_batch is None and isinstance(msg.get("cases"), list):
                # Answered case by case: each reply goes out as it is made, so that a case that
                # kills the process costs the runner only the cases after it.
                for case in msg["cases"]:
                    out.write(dumps(answer_run(case, run, answer)))
                    out.write("\n")
                    out.flush()
                continue
            elif kind == "batch":
                replies = answer_batch(msg.get("cases"), run, run_batch, answer)
            else:
                raise OpError("internal", f"unknown message type {kind!r}")
        except Exception as e:  # noqa: BLE001 - a request that is not one: say so
            replies = [_error_reply(mid, e)]
        for reply in replies:
            out.write(dumps(reply))
            out.write("\n")
        out.flush()


def composed_of(adapter):
    """The hello's `composed`: the `[composed]` table of the manifest beside the adapter whose
    script is `adapter` (its `__file__`), empty when it has none."""
    import tomllib

    with open(os.path.join(os.path.dirname(os.path.abspath(adapter)), "engine.toml"), "rb") as f:
        return tomllib.load(f).get("composed", {})


def main(hello, run, answer="ok", run_batch=None):
    """An adapter's main loop: `serve` until standard input closes; an interrupt, or a runner that
    closed the pipe, ends it quietly."""
    try:
        serve(hello, run, answer, run_batch)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
