#!/usr/bin/python3
"""The adapter's own choices, each on a case of its own: the composed path a reply names (one case
per key of the manifest's `[composed]`, and native cases that name none), and the three adapter
defects of issues 42 and 43, fixed: a Slice stride of 2^63-1 on an axis that reads one
coordinate, CLAMP / REFLECT / FILL of a [2, 0] input with size 0 on the empty axis, an unknown
Slice mode. Run by runner/tests/engines.rs with the manifest's interpreter; exit 0 when every
check holds."""

import base64
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
import wire  # noqa: E402

try:
    import tomllib
except ImportError:  # Debian 12's Python 3.11 has it; an older one reads the keys below by hand
    tomllib = None

_spec = importlib.util.spec_from_file_location("torch_backend", os.path.join(HERE, "backend.py"))
backend = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backend)

INT64_MAX = (1 << 63) - 1
F32 = "<f4"


def tensor(array, dtype="float32"):
    array = np.ascontiguousarray(array, dtype={"float32": F32, "float16": "<f2"}[dtype])
    return {"dtype": dtype, "shape": list(array.shape), "data": base64.b64encode(array.tobytes()).decode()}


def values(reply):
    out = reply["outputs"][0]
    dtype = {"float32": F32, "float16": "<f2"}[out["dtype"]]
    return np.frombuffer(base64.b64decode(out["data"]), dtype=dtype).reshape(out["shape"])


def answer(op, attrs, x, dtype="float32"):
    inputs = [tensor(x, dtype)] + [None] * (wire.INPUT_COUNT[op] - 1)
    return wire.answer_run({"type": "run", "id": f"test::{op}", "op": op, "attrs": attrs, "inputs": inputs}, backend.run)


def slice_(x, start, size, stride=None, mode=None):
    attrs = {"start": start, "size": size}
    if stride is not None:
        attrs["stride"] = stride
    if mode is not None:
        attrs["mode"] = mode
    return answer("slice", attrs, x)


X = np.arange(12, dtype=np.float32).reshape(3, 4)
E = np.zeros((2, 0), np.float32)
# (what, reply, the composed keys it names, the values it holds: an array, or a shape for an empty one)
CASES = [
    ("a strict slice of positive stride: native", slice_(X, [1, 0], [2, 2], [1, 2]), [], X[1:3, 0:4:2]),
    ("CLAMP: native", slice_(X[0], [-2], [7], [1], "clamp"), [], np.array([0, 0, 0, 1, 2, 3, 3], np.float32)),
    ("FILL: native", slice_(X[0], [-1], [6], [1], "fill"), [], np.array([0, 0, 1, 2, 3, 0], np.float32)),
    ("WRAP within the axis: native", slice_(X[0], [-1], [6], [1], "wrap"), [], np.array([3, 0, 1, 2, 3, 0], np.float32)),
    ("REFLECT within d-1: native", slice_(X[0], [-2], [4], [1], "reflect"), [], np.array([2, 1, 0, 1], np.float32)),
    ("a stride of 0 reading one coordinate: native", slice_(X, [1, 2], [1, 1], [0, 0]), [], X[1:2, 2:3]),
    ("a shuffle without a 0 placeholder: native", answer("shuffle", {"first_transpose": [1, 0], "reshape_dims": [2, 6]}, X), [], X.T.reshape(2, 6)),
    ("as_strided: native", answer("as_strided", {"size": [2, 2], "stride": [3, 1], "offset": [1]}, np.arange(6), "float16"), [], np.array([[1, 2], [4, 5]], np.float16)),
    ("scale: native", answer("scale", {"mode": "uniform", "shift": tensor([1.0])}, X.reshape(1, 1, 3, 4)), [], X.reshape(1, 1, 3, 4) + 1),
    ("HWC at rank 4: native", answer("reformat", {"from": "LINEAR", "to": "HWC"}, np.arange(4).reshape(1, 2, 1, 2)), [], np.array([0, 2, 1, 3], np.float32)),
    ("DHWC at rank 5: native", answer("reformat", {"from": "LINEAR", "to": "DHWC"}, np.arange(2).reshape(1, 2, 1, 1, 1)), [], np.array([0, 1], np.float32)),
    ("a 0 placeholder", answer("shuffle", {"reshape_dims": [0, 2, 2]}, X), ["shuffle:zero-placeholder"], X.reshape(3, 2, 2)),
    ("a stride of 0", slice_(X, [0, 2], [3, 2], [1, 0]), ["slice:stride-0"], X[:, [2, 2]]),
    ("a negative stride", slice_(X[0], [3], [3], [-1]), ["slice:negative-step"], np.array([3, 2, 1], np.float32)),
    ("a size of 0 at a start outside the axis", slice_(X[0], [7], [0], [1]), ["slice:size-0"], (0,)),
    ("WRAP past the axis", slice_(X[0, :2], [-3], [8], [1], "wrap"), ["slice:wrap-periodic"], np.array([1, 0, 1, 0, 1, 0, 1, 0], np.float32)),
    ("REFLECT past d-1", slice_(X[0, :3], [0], [8], [1], "reflect"), ["slice:reflect-periodic"], np.array([0, 1, 2, 1, 0, 1, 2, 1], np.float32)),
    ("REFLECT of one element", slice_(X[:1, :1], [-1, 0], [3, 1], [1, 1], "reflect"), ["slice:reflect-one-element"], np.zeros((3, 1), np.float32)),
    ("HWC at rank 3", answer("reformat", {"from": "LINEAR", "to": "HWC"}, np.arange(4).reshape(2, 1, 2)), ["reformat:HWC"], np.array([0, 2, 1, 3], np.float32)),
    ("DHWC at rank 4, unpacked", answer("reformat", {"from": "DHWC", "to": "LINEAR", "shape": [2, 1, 1, 1]}, np.arange(2)), ["reformat:DHWC"], np.arange(2, dtype=np.float32).reshape(2, 1, 1, 1)),
    # Issue 42: CLAMP or REFLECT of a [2, 0] input with size 0 on the empty axis reads nothing
    # (docs/semantics.md §2.7): a [4, 0] output, which F.pad refused; FILL's constant pad too.
    ("CLAMP of [2, 0] to [4, 0]", slice_(E, [-1, 0], [4, 0], [1, 1], "clamp"), ["slice:empty-pad"], (4, 0)),
    ("REFLECT of [2, 0] to [4, 0]", slice_(E, [-1, 0], [4, 0], [1, 1], "reflect"), ["slice:empty-pad"], (4, 0)),
    ("FILL of [2, 0] to [4, 0]", slice_(E, [-1, 0], [4, 0], [1, 1], "fill"), ["slice:empty-pad"], (4, 0)),
    # Issue 42: a stride of 2^63-1 on an in-range start reads only y = 0, x = start (torch 1.13's
    # slicing of that step overflowed the [3, 8] input's stride of 8 to -8 and refused it).
    ("stride 2^63-1, one coordinate", slice_(np.arange(24, dtype=np.float32).reshape(3, 8), [1, 0], [1, 8], [INT64_MAX, 1]), [], np.arange(8, 16, dtype=np.float32).reshape(1, 8)),
]


def manifest_keys():
    path = os.path.join(HERE, "engine.toml")
    if tomllib is not None:
        with open(path, "rb") as f:
            return set(tomllib.load(f)["composed"])
    with open(path) as f:
        text = f.read().split("[composed]", 1)[1]
    return {line.split("=", 1)[0].strip().strip('"') for line in text.splitlines() if "=" in line and not line.startswith("#")}


def check():
    failures = []
    for what, reply, keys, expect in CASES:
        got = reply.get("composed", [])
        ok = reply["type"] == "ok" and sorted(got) == sorted(keys)
        if ok and isinstance(expect, tuple):
            ok = reply["outputs"][0]["shape"] == list(expect) and not reply["outputs"][0]["data"]
        elif ok:
            ok = np.array_equal(values(reply), expect)
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {reply['type']} composed {got}")
        if not ok:
            failures.append((what, reply))

    # Every key of the manifest is named by a case above, and no case names another.
    named = {k for _, reply, _, _ in CASES for k in reply.get("composed", [])}
    catalogue = manifest_keys()
    if named != catalogue:
        failures.append(("keys", f"named by no case: {sorted(catalogue - named)}; not in the manifest: {sorted(named - catalogue)}"))

    # The empty axis itself still goes to torch: CLAMP of [2, 0] to [4, 1] pads an axis of 0.
    reply = slice_(E, [-1, 0], [4, 1], [1, 1], "clamp")
    if reply["type"] != "error" or reply.get("kind") != "empty_dimension":
        failures.append(("CLAMP of [2, 0] to [4, 1]", reply))
    # ... and FILL's value is still converted by torch when the output is empty.
    fill = {"dtype": "float32", "shape": [], "data": base64.b64encode(np.float32(300).tobytes()).decode()}
    request = {"type": "run", "id": "test::fill", "op": "slice", "attrs": {"start": [-1, 0], "size": [4, 0], "mode": "fill"},
               "inputs": [{"dtype": "int8", "shape": [2, 0], "data": ""}, None, None, None, fill, None]}
    reply = wire.answer_run(request, backend.run)
    if reply["type"] != "error" or reply.get("kind") != "invalid_fill":
        failures.append(("FILL of [2, 0] int8 with 300", reply))

    # Issue 43: an unknown Slice mode is rejected, never read as STRICT_BOUNDS.
    for start in ([0], [5]):
        reply = slice_(X[0], start, [2], [1], "bogus")
        if reply["type"] != "error" or reply.get("kind") != "invalid_input":
            failures.append(("unknown mode", reply))

    # A rejection names no composed path (the notes are of answers with outputs).
    reply = slice_(X[0], [5], [2], [-1])
    if reply["type"] != "error" or "composed" in reply:
        failures.append(("a negative stride outside the input", reply))

    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(check())
