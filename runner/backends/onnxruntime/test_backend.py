#!/usr/bin/env python3
"""The adapter's own choices, each on a case of its own: the composed path a reply names (one case
per key of the manifest's `[composed]`, and native cases that name none), the Slice modes it
knows, and Slice ends and coordinates past int64. Run by runner/tests/engines.rs; exit 0 when
every check holds."""

import base64
import importlib.util
import os
import sys
import tomllib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
import wire  # noqa: E402

_spec = importlib.util.spec_from_file_location("ort_backend", os.path.join(HERE, "backend.py"))
backend = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backend)

INT64_MAX = (1 << 63) - 1


def tensor(array, dtype="float32"):
    array = np.ascontiguousarray(array, dtype={"float32": "<f4", "float16": "<f2", "int8": "i1"}[dtype])
    return {"dtype": dtype, "shape": list(array.shape), "data": base64.b64encode(array.tobytes()).decode()}


def values(reply):
    out = reply["outputs"][0]
    dtype = {"float32": "<f4", "float16": "<f2", "int8": "i1"}[out["dtype"]]
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
# (what, reply, the composed keys it names, the values it holds or None)
CASES = [
    ("a strict slice inside the input: native", slice_(X, [1, 0], [2, 2], [1, 2]), [], X[1:3, 0:4:2]),
    ("a shuffle: native", answer("shuffle", {"first_transpose": [1, 0]}, X), [], X.T),
    ("a scale: native", answer("scale", {"mode": "uniform", "shift": tensor([1.0])}, X.reshape(1, 1, 3, 4)), [], X.reshape(1, 1, 3, 4) + 1),
    ("WRAP by one wrap Pad: native", slice_(X[0], [-1], [6], [1], "wrap"), [], np.array([3, 0, 1, 2, 3, 0], np.float32)),
    ("REFLECT within d-1: native", slice_(X[0], [-2], [4], [1], "reflect"), [], np.array([2, 1, 0, 1], np.float32)),
    ("a stride-0 axis", slice_(X, [0, 2], [3, 2], [1, 0]), ["slice:stride-0"], X[:, [2, 2]]),
    ("a strict axis leaving the input (read from the back by the Gather)", slice_(X[0], [-1], [2]), ["slice:strict-outside"], np.array([3, 0], np.float32)),
    ("REFLECT past d-1", slice_(X[0, :3], [0], [8], [1], "reflect"), ["slice:reflect-periodic"], np.array([0, 1, 2, 1, 0, 1, 2, 1], np.float32)),
    ("REFLECT of one element", slice_(X[:1, :1], [-1, 0], [3, 1], [1, 1], "reflect"), ["slice:reflect-one-element"], np.zeros((3, 1), np.float32)),
    ("as_strided", answer("as_strided", {"size": [2, 2], "stride": [3, 1], "offset": [1]}, np.arange(6, dtype=np.float16), "float16"), ["as_strided"], np.array([[1, 2], [4, 5]], np.float16)),
    ("LINEAR to CHW4", answer("reformat", {"from": "LINEAR", "to": "CHW4"}, np.zeros((1, 2, 1, 1), np.int8), "int8"), ["reformat:CHW4"], None),
    ("CHW4 to HWC8", answer("reformat", {"from": "CHW4", "to": "HWC8", "shape": [1, 2, 1, 1]}, np.zeros(4, np.float16), "float16"), ["reformat:CHW4", "reformat:HWC8"], None),
    ("DLA_HWC4 to LINEAR", answer("reformat", {"from": "DLA_HWC4", "to": "LINEAR", "shape": [1, 1, 1, 1]}, np.zeros(64, np.int8), "int8"), ["reformat:DLA_HWC4"], None),
]
for fmt in ("CHW2", "CHW16", "CHW32", "DHWC8", "CDHW32", "HWC", "DLA_LINEAR", "HWC16", "DHWC"):
    dtype = {"HWC": "float32", "DHWC": "float32", "DLA_LINEAR": "int8", "HWC16": "int8", "CDHW32": "int8"}.get(fmt, "float16")
    CASES.append((f"LINEAR to {fmt}", answer("reformat", {"from": "LINEAR", "to": fmt}, np.zeros((1, 2, 1, 1, 1), dtype={"float32": np.float32, "int8": np.int8}.get(dtype, np.float16)) if fmt in ("DHWC8", "CDHW32", "DHWC") else np.zeros((1, 2, 1, 1), dtype={"float32": np.float32, "int8": np.int8}.get(dtype, np.float16)), dtype), [f"reformat:{fmt}"], None))


def check():
    failures = []
    for what, reply, keys, expect in CASES:
        got = reply.get("composed", [])
        ok = reply["type"] == "ok" and sorted(got) == sorted(keys) and (expect is None or np.array_equal(values(reply), expect))
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {reply['type']} composed {got}")
        if not ok:
            failures.append((what, reply))

    # Every key of the manifest is named by a case above, and no case names another.
    with open(os.path.join(HERE, "engine.toml"), "rb") as f:
        catalogue = set(tomllib.load(f)["composed"])
    named = {k for _, reply, _, _ in CASES for k in reply.get("composed", [])}
    if named != catalogue:
        failures.append(("keys", f"named by no case: {sorted(catalogue - named)}; not in the manifest: {sorted(named - catalogue)}"))

    # A rejection names no composed path (the notes are of answers with outputs).
    reply = slice_(X[0], [3], [2])
    if reply["type"] != "error" or reply.get("kind") != "out_of_bounds" or "composed" in reply:
        failures.append(("a strict Gather out of bounds", reply))

    # An unknown Slice mode is rejected, never read as STRICT_BOUNDS.
    for start in ([0], [5]):
        reply = slice_(X[0], start, [2], [1], "bogus")
        if reply["type"] != "error" or reply.get("kind") != "invalid_input":
            failures.append(("unknown mode", reply))

    # A stride of 2^63-1 with one coordinate read (x = start): an end past int64 is no internal
    # error; with two coordinates, the second leaves int64 and the input: out_of_bounds.
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    reply = slice_(x, [1, 0], [1, 8], [INT64_MAX, 1])
    if reply["type"] != "ok" or not np.array_equal(values(reply), x[1:2]):
        failures.append(("stride 2^63-1, size 1", reply))
    reply = slice_(x, [1, 0], [2, 8], [INT64_MAX, 1])
    if reply["type"] != "error" or reply.get("kind") != "out_of_bounds":
        failures.append(("stride 2^63-1, size 2", reply))
    reply = slice_(x[0], [7], [3], [-INT64_MAX - 1])
    if reply["type"] != "error" or reply.get("kind") != "out_of_bounds":
        failures.append(("stride -2^63, size 3", reply))

    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(check())
