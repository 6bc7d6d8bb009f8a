#!/usr/bin/env python3
"""Batching never changes a reply: the same requests sent to the adapter once as single `run`
lines and once as `batch` lines of the hello's `batch` size must get the same replies, case for
case (type, kind, message, outputs, composed paths). And the earlier emitters of XLA's CPU
backend, which compile the programs that only move elements (backend.MOVES_OPTIONS), move the
same bits as its default emitters: the batched run repeated with XLA_FLAGS forcing the default
emitters everywhere must give the same replies too.

    python3 runner/backends/xla/test_batch.py [DUMP]

Without DUMP the requests are this file's sample: every op and composed path, rejections by
the converter and by JAX's checks, in every dtype, on random bits (NaN payloads, subnormals,
-0 included). With DUMP (a runner `--dump-requests` file, a batch's line standing for its cases)
they are the suite's own. Run by
runner/tests/engines.rs; exit 0 when every reply matches."""

import base64
import json
import os
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "common")]
from wire import INPUT_COUNT, RAW, encode_bytes, encode_raw, nbytes, prod  # noqa: E402

DTYPES = ["bool", "int4", "int8", "uint8", "int32", "int64", "fp8", "float16", "bfloat16", "float32"]
rng = np.random.default_rng(42)


def bits(dtype, shape):
    """A tensor object of random bits (bool: 0 or 1)."""
    if dtype == "bool":
        return encode_raw(dtype, rng.integers(0, 2, size=shape).astype(np.uint8))
    return encode_bytes(dtype, shape, rng.integers(0, 256, size=nbytes(dtype, prod(shape)), dtype=np.uint8).tobytes())


def ints(values, dtype="int64"):
    return encode_raw(dtype, np.array(values, dtype=RAW[dtype]))


def floats(values):
    return encode_raw("float32", np.array(values, dtype=np.float32).view(np.uint32))


# (name, op, attrs, {input position: (dtype or None for the case's, shape) or a tensor object})
CASES = [
    ("shuffle_native", "shuffle", {"first_transpose": [1, 0, 2], "reshape_dims": [12, 2], "second_transpose": [1, 0]}, {0: (None, [2, 3, 4])}),
    ("shuffle_placeholder", "shuffle", {"reshape_dims": [0, -1]}, {0: (None, [2, 3, 4])}),
    ("shuffle_dims_input", "shuffle", {}, {0: (None, [2, 3, 4]), 1: ints([4, 6])}),
    ("shuffle_bad_permutation", "shuffle", {"first_transpose": [0, 0, 1]}, {0: (None, [2, 3, 4])}),
    ("shuffle_volume", "shuffle", {"reshape_dims": [5, 5], "zero_is_placeholder": False}, {0: (None, [2, 3, 4])}),
    ("shuffle_float_dims", "shuffle", {}, {0: (None, [2, 3]), 1: floats([3, 2])}),
    ("slice_strict", "slice", {"start": [0, 1], "size": [2, 2], "stride": [1, 2], "axes": [0, 2]}, {0: (None, [2, 3, 4])}),
    ("slice_strict_outside", "slice", {"start": [2], "size": [5], "axes": [2]}, {0: (None, [2, 3, 4])}),
    ("slice_negative_step", "slice", {"start": [3], "size": [3], "stride": [-1], "axes": [2]}, {0: (None, [2, 3, 4])}),
    ("slice_stride_0", "slice", {"start": [1], "size": [3], "stride": [0], "axes": [1]}, {0: (None, [2, 3, 4])}),
    ("slice_size_0", "slice", {"start": [9], "size": [0], "stride": [3], "axes": [1]}, {0: (None, [2, 3, 4])}),
    ("slice_clamp", "slice", {"mode": "clamp", "start": [-2], "size": [6], "axes": [2]}, {0: (None, [2, 3, 4])}),
    ("slice_wrap", "slice", {"mode": "wrap", "start": [-5], "size": [7], "stride": [2], "axes": [2]}, {0: (None, [2, 3, 4])}),
    ("slice_wrap_empty_axis", "slice", {"mode": "wrap", "start": [0], "size": [2], "axes": [1]}, {0: (None, [2, 0])}),
    ("slice_fill", "slice", {"mode": "fill", "start": [-1], "size": [6], "axes": [2]}, {0: (None, [2, 3, 4]), 4: (None, [1])}),
    ("slice_fill_float", "slice", {"mode": "fill", "start": [-1], "size": [6], "axes": [2]}, {0: (None, [2, 3, 4]), 4: floats([-0.5])}),
    ("slice_fill_zero", "slice", {"mode": "fill", "start": [-2], "size": [3], "axes": [0]}, {0: (None, [2, 3])}),
    ("slice_fill_bad_shape", "slice", {"mode": "fill", "start": [-1], "size": [4], "axes": [1]}, {0: (None, [2, 3]), 4: (None, [2])}),
    ("slice_reflect", "slice", {"mode": "reflect", "start": [-3], "size": [9], "axes": [2]}, {0: (None, [2, 3, 4])}),
    ("slice_reflect_empty", "slice", {"mode": "reflect", "start": [-1], "size": [2], "axes": [1]}, {0: (None, [2, 0])}),
    ("slice_inside_modes", "slice", {"mode": "reflect", "start": [1], "size": [2], "axes": [1]}, {0: (None, [2, 3])}),
    ("slice_axes_twice", "slice", {"start": [0, 0], "size": [1, 1], "axes": [1, 1]}, {0: (None, [2, 3])}),
    ("slice_lists_short", "slice", {"start": [0], "size": [1]}, {0: (None, [2, 3])}),
    ("slice_tensor_start", "slice", {"size": [2], "axes": [1]}, {0: (None, [2, 3]), 1: ints([1], "int32")}),
    ("as_strided", "as_strided", {"size": [2, 2], "stride": [3, 1], "offset": [1]}, {0: (None, [8])}),
    ("as_strided_outside", "as_strided", {"size": [3], "stride": [5], "offset": [-1]}, {0: (None, [2, 4])}),
    ("as_strided_empty_input", "as_strided", {"size": [2], "stride": [1], "offset": [0]}, {0: (None, [0])}),
    ("as_strided_negative_size", "as_strided", {"size": [-1], "stride": [1], "offset": [0]}, {0: (None, [4])}),
    ("scale_uniform", "scale", {"mode": "uniform", "scale": [2.0], "shift": [0.5], "power": [1.0]}, {0: (None, [1, 2, 2, 2])}),
    ("scale_channel", "scale", {"mode": "channel", "scale": [2.0, -1.0], "power": [2.0, 0.5]}, {0: (None, [1, 2, 2, 2])}),
    ("scale_int8_output", "scale", {"mode": "uniform", "scale": [3.0], "output_dtype": "int8"}, {0: (None, [1, 2, 2, 2])}),
    ("scale_weights_mismatch", "scale", {"mode": "channel", "scale": [1.0, 2.0, 3.0]}, {0: (None, [1, 2, 2, 2])}),
    ("reformat_pack", "reformat", {"from": "LINEAR", "to": "CHW4"}, {0: (None, [1, 3, 2, 2])}),
    ("reformat_unpack", "reformat", {"from": "HWC8", "to": "LINEAR", "shape": [1, 3, 2, 2]}, {0: (None, [32])}),
    ("reformat_both", "reformat", {"from": "CHW2", "to": "DLA_LINEAR", "shape": [1, 3, 2, 2]}, {0: (None, [16])}),
    ("reformat_linear", "reformat", {"from": "LINEAR", "to": "LINEAR"}, {0: (None, [1, 3, 2, 2])}),
    ("reformat_bad_buffer", "reformat", {"from": "CHW4", "to": "LINEAR", "shape": [1, 3, 2, 2]}, {0: (None, [7])}),
    ("reformat_no_layout", "reformat", {"from": "LINEAR", "to": "DLA_HWC4"}, {0: (None, [1, 2, 2, 2])}),
]


def sample():
    """The sample's run requests: every case in every dtype."""
    requests = []
    for dtype in DTYPES:
        for name, op, attrs, given in CASES:
            inputs = [None] * INPUT_COUNT[op]
            for i, t in given.items():
                inputs[i] = t if isinstance(t, dict) else bits(t[0] or dtype, t[1])
            while inputs and inputs[-1] is None:
                inputs.pop()
            requests.append({"type": "run", "id": f"{name}::{dtype}", "op": op, "attrs": attrs, "inputs": inputs})
    return requests


def replies(requests, size, env=None):
    """{id: reply} of the adapter for `requests` sent as `run` lines (size 1) or `batch` lines."""
    lines = [json.dumps({"type": "hello", "protocol": 1})]
    if size == 1:
        lines += [json.dumps(r) for r in requests]
    else:
        lines += [json.dumps({"type": "batch", "cases": requests[i:i + size]}) for i in range(0, len(requests), size)]
    env = dict(env or os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, os.path.join(HERE, "backend.py")], input="\n".join(lines) + "\n", text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True, env=env).stdout
    got = [json.loads(line) for line in out.splitlines()]
    assert got[0]["type"] == "hello", got[0]
    by_id = {r["id"]: r for r in got[1:]}
    assert len(by_id) == len(got) - 1 == len(requests), f"{len(got) - 1} replies, {len(by_id)} ids, {len(requests)} requests"
    return got[0], by_id


def compare(what, a, b):
    differ = [i for i in a if a[i] != b.get(i)]
    for i in differ[:5]:
        print(f"{what}: {i}\n  {json.dumps(a[i])[:400]}\n  {json.dumps(b.get(i))[:400]}")
    return differ


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        requests = [r for msg in lines for r in (msg["cases"] if msg.get("type") == "batch" else [msg])]
    else:
        requests = sample()
    hello, single = replies(requests, 1)
    size = hello["batch"]
    _, batched = replies(requests, size)
    env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_cpu_use_fusion_emitters=true").strip())
    default_hello, default = replies(requests, size, env)
    bad = compare(f"single vs batches of {size}", single, batched)
    bad += compare("earlier vs default emitters", batched, default)
    if default_hello["dtypes"] != hello["dtypes"]:
        bad.append("hello")
        print(f"hello dtypes differ with the default emitters: {hello['dtypes']} vs {default_hello['dtypes']}")
    kinds = {}
    for r in single.values():
        kinds[r["type"]] = kinds.get(r["type"], 0) + 1
    print(f"{len(requests)} requests ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))}): "
          f"{len(requests) - len(bad)} equal single, in batches of {size} and with the default emitters; {len(bad)} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
