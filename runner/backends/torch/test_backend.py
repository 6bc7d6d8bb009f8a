#!/usr/bin/python3
"""The adapter's own choices, each on a case of its own: the three adapter defects of issues 42
and 43, fixed: a Slice stride of 2^63-1 on an axis that reads one coordinate, CLAMP / REFLECT /
FILL of a [2, 0] input with size 0 on the empty axis, an unknown Slice mode. Run by runner/tests/engines.rs with the manifest's interpreter; exit 0 when every
check holds."""

import base64
import importlib.util
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
import wire  # noqa: E402

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
    # Issue 42: CLAMP or REFLECT of a [2, 0] input with size 0 on the empty axis reads nothing
    # (docs/semantics.md §2.7): a [4, 0] output, which F.pad refused; FILL's constant pad too.
    ("CLAMP of [2, 0] to [4, 0]", slice_(E, [-1, 0], [4, 0], [1, 1], "clamp"), [], (4, 0)),
    ("REFLECT of [2, 0] to [4, 0]", slice_(E, [-1, 0], [4, 0], [1, 1], "reflect"), [], (4, 0)),
    ("FILL of [2, 0] to [4, 0]", slice_(E, [-1, 0], [4, 0], [1, 1], "fill"), [], (4, 0)),
    # Issue 42: a stride of 2^63-1 on an in-range start reads only y = 0, x = start (torch 1.13's
    # slicing of that step overflowed the [3, 8] input's stride of 8 to -8 and refused it).
    ("stride 2^63-1, one coordinate", slice_(np.arange(24, dtype=np.float32).reshape(3, 8), [1, 0], [1, 8], [INT64_MAX, 1]), [], np.arange(8, 16, dtype=np.float32).reshape(1, 8)),
]


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
