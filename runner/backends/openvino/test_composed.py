#!/usr/bin/env python3
"""Each composing branch of the adapter (backend.py's `composed` calls) on a case that takes it:
the reply lists the branch's key of the manifest's `[composed]` table, and only the keys of the
branches the case took; a case the engine's own op answers lists none. Every key of the table is
some case's, so the catalogue names no branch that does not exist. Each case is answered alone
and in one batch of all of them, with the same notes. Run by runner/tests/engines.rs; exit 0 when
every case lists what it should."""

import base64
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
import backend  # noqa: E402
from wire import answer_batch, answer_run, composed_of  # noqa: E402

NP = {"float16": np.float16, "float32": np.float32, "int8": np.int8, "int32": np.int32}


def tensor(dtype, shape, values=None):
    """A wire tensor object of `shape`, holding 1, 2, 3, ... unless `values` are given."""
    count = int(np.prod(shape, dtype=np.int64))
    array = np.arange(1, count + 1) if values is None else np.asarray(values)
    data = array.astype(NP[dtype]).tobytes()
    return {"dtype": dtype, "shape": list(shape), "data": base64.b64encode(data).decode()}


def floats(*values):
    return tensor("float32", [len(values)], values)


def slice_case(mode, start, size, stride, dtype="float32", shape=(3,)):
    return "slice", {"start": start, "size": size, "stride": stride, "mode": mode}, [tensor(dtype, shape)] + [None] * 5


def reformat_case(src, dst, dtype="float16", shape=(1, 3, 2, 2)):
    """A pack (src LINEAR), an unpack (dst LINEAR) or a repack of a [1, 3, 2, 2] tensor; the
    packed buffer of an unpack is zeros of the format's length (what a pack of it gives)."""
    if src == "LINEAR":
        return "reformat", {"from": src, "to": dst}, [tensor(dtype, shape)]
    length = answer_run({"type": "run", "id": "length", **dict(zip(("op", "attrs", "inputs"), reformat_case("LINEAR", src, dtype, shape)))}, backend.run)
    buffer = tensor(dtype, length["outputs"][0]["shape"], np.zeros(length["outputs"][0]["shape"]))
    return "reformat", {"from": src, "to": dst, "shape": list(shape)}, [buffer]


FORMATS = ["CHW2", "HWC8", "CHW4", "CHW16", "CHW32", "DHWC8", "CDHW32", "HWC", "DLA_LINEAR", "DLA_HWC4", "HWC16", "DHWC"]

# (name, (op, attrs, inputs), the keys its reply lists)
CASES = [
    ("as_strided view", ("as_strided", {"size": [2, 2], "stride": [1, 2], "offset": [1]}, [tensor("float16", [6])]), ["as_strided"]),
    ("slice stride 0", slice_case("strict_bounds", [1], [3], [0], "int32", (4,)), ["slice:stride-0"]),
    ("slice clamp outside", slice_case("clamp", [-1], [5], [1]), ["slice:CLAMP"]),
    ("slice fill outside", slice_case("fill", [-2], [4], [2]), ["slice:FILL"]),
    ("slice reflect outside", slice_case("reflect", [-4], [9], [1]), ["slice:REFLECT"]),
    ("slice clamp outside, stride 0", slice_case("clamp", [4], [2], [0]), ["slice:CLAMP", "slice:stride-0"]),
    ("scale with weights", ("scale", {"mode": "uniform", "scale": floats(2.0), "shift": floats(1.0)}, [tensor("float32", [1, 1, 2, 2])]), ["scale"]),
    ("scale to int8", ("scale", {"mode": "uniform", "output_dtype": "int8"}, [tensor("float32", [1, 1, 2, 2])]), ["scale"]),
    ("scale of float16", ("scale", {"mode": "channel", "power": floats(2.0, 1.0, 0.5)}, [tensor("float16", [1, 3, 1, 2])]), ["scale"]),
    ("reformat CHW4 to HWC8", reformat_case("CHW4", "HWC8"), ["reformat:CHW4", "reformat:HWC8"]),
    ("reformat HWC unpack", reformat_case("HWC", "LINEAR", "float32"), ["reformat:HWC"]),
] + [(f"reformat pack {f}", reformat_case("LINEAR", f, "int8" if f.startswith("DLA") else "float16"), [f"reformat:{f}"]) for f in FORMATS]

NATIVE = [
    ("shuffle", ("shuffle", {"first_transpose": [1, 0], "reshape_dims": [6]}, [tensor("float32", [2, 3]), None])),
    ("slice inside", slice_case("strict_bounds", [2], [2], [-1])),
    ("slice clamp inside", slice_case("clamp", [0], [2], [1])),
    ("slice of size 0", slice_case("strict_bounds", [7], [0], [0])),
    ("scale float32 without weights", ("scale", {"mode": "uniform"}, [tensor("float32", [1, 1, 2, 2])])),
    ("reformat LINEAR to LINEAR", reformat_case("LINEAR", "LINEAR")),
]


def request(n, name, case):
    op, attrs, inputs = case
    return {"type": "run", "id": f"{n}::{name}", "op": op, "attrs": attrs, "inputs": inputs}


def main():
    requests = [(request(n, name, case), keys) for n, (name, case, keys) in enumerate(CASES)]
    requests += [(request(len(CASES) + n, name, case), []) for n, (name, case) in enumerate(NATIVE)]
    batch = {r["id"]: r for r in answer_batch([q for q, _ in requests], backend.run, backend.run_batch)}
    failures = []
    for q, keys in requests:
        for how, reply in (("alone", answer_run(q, backend.run)), ("batched", batch[q["id"]])):
            if reply["type"] != "ok":
                failures.append(f"{q['id']} ({how}): {reply}")
            elif reply.get("composed", []) != keys:
                failures.append(f"{q['id']} ({how}): lists {reply.get('composed', [])}, its branches are {keys}")
    catalogue = set(composed_of(backend.__file__))
    used = {k for _, keys in requests for k in keys}
    if used != catalogue:
        failures.append(f"catalogue keys no case takes: {sorted(catalogue - used)}; keys taken outside the catalogue: {sorted(used - catalogue)}")
    for line in failures:
        print(line)
    print(f"{len(requests)} cases, each alone and batched: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
