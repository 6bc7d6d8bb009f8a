#!/usr/bin/env python3
"""Batching never changes a reply: the same requests sent to the MNN adapter as single `run` lines
and as `batch` lines of 8, 32 and 128 get equal replies, case for case (type, kind, message,
outputs, composed notes), and the same cases crash the process. The requests are a fixed sample
built here (every op, mode and composing branch, errors, unsupported cases, and one case that
kills the process, so that a batch that dies is shown re-sent singly), or a dump of the suite's
requests given as argument (`runner --dump-requests FILE`):

    python3 runner/backends/mnn/test_batch.py [DUMP]

Left out of the sample: cases whose reply holds bytes MNN reads from outside its buffers (a
StridedSlice begin past the end with stride >= 2: repro/strided_slice_begin_past_end_reads_past_input.py),
which differ between two runs of the same requests, batched or not, and StridedSlice with a
negative step outside the input (repro/strided_slice_negative_step_writes_past_output.py).
Run by runner/tests/engines.rs; exit 0 when the replies agree."""

import base64
import json
import os
import random
import struct
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_batch import answer  # noqa: E402

DTYPES = {"float32": "<f", "int32": "<i", "int8": "<b", "uint8": "<B"}


def tensor(dtype, shape, values=None):
    n = 1
    for d in shape:
        n *= d
    values = list(range(1, n + 1)) if values is None else values
    if dtype in ("int8", "uint8"):
        values = [v % 100 for v in values]
    data = struct.pack(f"{DTYPES[dtype][0]}{n}{DTYPES[dtype][1]}", *values)
    return {"dtype": dtype, "shape": list(shape), "data": base64.b64encode(data).decode()}


def shuffles(rng):
    for shape, dims in (([2, 3], [3, 2]), ([2, 3, 4], [0, -1]), ([1, 2, 3, 4], [6, 4]), ([6], [2, -1]),
                        ([2, 3], [4, 2]), ([2, 3], [-1, -1]), ([2, 3], [1 << 40, 1 << 40]), ([2, 3], None)):
        for dtype in DTYPES:
            rank = len(shape)
            perm = rng.sample(range(rank), rank) if rng.random() < 0.7 else None
            attrs = {"first_transpose": perm} if perm else {}
            if dims is not None:
                attrs["reshape_dims"] = dims
            yield "shuffle", attrs, [tensor(dtype, shape), None]
    yield "shuffle", {"first_transpose": [0, 0]}, [tensor("float32", [2, 3]), None]
    yield "shuffle", {"reshape_dims": []}, [tensor("float32", [1]), None]  # kills the process


def slices(rng):
    modes = ("strict_bounds", "wrap", "clamp", "fill", "reflect")
    for i in range(160):
        mode = modes[i % 5]
        shape = rng.choice(([5], [3, 4], [2, 3, 4]))
        start, size, stride = [], [], []
        for d in shape:
            n, st = rng.randint(0, 4), rng.randint(-2, 2)
            if mode == "strict_bounds" and st != 0:
                # inside the input, so no read past its buffer and no negative step outside
                s0 = rng.randint(0, d - 1)
                n = min(n, (d - 1 - s0) // st + 1 if st > 0 else s0 // -st + 1)
            else:
                s0 = rng.randint(-6, 6)
            start.append(s0)
            size.append(n)
            stride.append(st)
        attrs = {"start": start, "size": size, "stride": stride}
        if mode != "strict_bounds":
            attrs["mode"] = mode
        dtype = rng.choice(list(DTYPES))
        fill = tensor("float32", [], [rng.choice([0, 7])]) if mode == "fill" and dtype == "float32" else None
        yield "slice", attrs, [tensor(dtype, shape), None, None, None, fill, None]
    yield "slice", {"start": [1, 1], "size": [-1, -1], "stride": [1, 1]}, [tensor("float32", [2, 3])] + [None] * 5
    yield "slice", {"start": [2], "size": [1], "stride": [(1 << 63) - 1]}, [tensor("float32", [5])] + [None] * 5
    yield "slice", {"start": [0], "size": [2], "stride": [1], "mode": "mirror"}, [tensor("float32", [5])] + [None] * 5
    yield "slice", {"start": [0], "size": [2], "stride": [1]}, [{"dtype": "float16", "shape": [2], "data": "AAAAAA=="}] + [None] * 5


def others(rng):
    for size, stride, offset in (([2], [2], [1]), ([2, 2], [2, 1], [0]), ([3], [0], [4]), ([2], [1], [-1]), ([2], [-1], [1])):
        yield "as_strided", {"size": size, "stride": stride, "offset": offset}, [tensor("float32", [6])]
    for mode, count in (("uniform", 1), ("channel", 2), ("elementwise", 8)):
        weights = [round(rng.uniform(-2, 2), 2) for _ in range(count)]
        yield "scale", {"mode": mode, "scale": weights, "shift": weights}, [tensor("float32", [1, 2, 2, 2])]
        yield "scale", {"mode": mode, "scale": weights, "output_dtype": "int8"}, [tensor("float32", [1, 2, 2, 2])]
    for src, dst in (("LINEAR", "HWC"), ("LINEAR", "CHW4"), ("LINEAR", "LINEAR")):
        yield "reformat", {"from": src, "to": dst}, [tensor("int8", [1, 3, 2, 2])]
    yield "reformat", {"from": "HWC", "to": "LINEAR", "shape": [1, 3, 2, 2]}, [tensor("float32", [12])]


def sample():
    rng = random.Random(41)
    cases = [*shuffles(rng), *slices(rng), *others(rng)]
    return [{"type": "run", "id": f"case{i}:{op}", "op": op, "attrs": attrs, "inputs": inputs}
            for i, (op, attrs, inputs) in enumerate(cases)]


def main(argv):
    if argv:
        with open(argv[0]) as f:
            requests = [json.loads(line) for line in f if line.strip()]
    else:
        requests = sample()
    single, figures = answer(requests, 1)
    failures = 0
    for n in (8, 32, 128):
        batched, batch_figures = answer(requests, n)
        differ = sorted(k for k in set(single) | set(batched) if single.get(k) != batched.get(k))
        print(f"batches of {n}: {len(requests)} cases, {len(batched)} replies, "
              f"{batch_figures['crashed']} crashed ({figures['crashed']} singly), {len(differ)} differ from single")
        for k in differ[:10]:
            print(f"  {k}:\n    single  {json.dumps(single.get(k))[:300]}\n    batched {json.dumps(batched.get(k))[:300]}")
        failures += len(differ) + (batch_figures["crashed"] != figures["crashed"])
    kinds, notes = {}, {}
    for reply in single.values():
        kinds[reply["type"]] = kinds.get(reply["type"], 0) + 1
        for key in reply.get("composed", []):
            notes[key] = notes.get(key, 0) + 1
    print(f"single replies by type: {kinds}; composed notes: {notes}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
