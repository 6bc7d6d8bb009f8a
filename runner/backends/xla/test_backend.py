#!/usr/bin/env python3
"""The adapter's own rules, in process: each composing branch notes its key of engine.toml's
[composed] (and a case the engine computes as it is notes none), alone and in a batch; every
catalogue key is some branch's; a program XLA rejects as a whole is split until the guilty case
answers alone, the others keeping their replies; the programs compiled with XLA's earlier
emitters hold only cases that move elements of types those copy bit for bit. Run by
runner/tests/engines.rs; exit 0 when every check holds."""

import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]

import backend  # noqa: E402
from test_batch import bits, floats, ints  # noqa: E402
from wire import answer_batch, answer_run, composed_of  # noqa: E402

X = bits("float32", [2, 3, 4])
# (case name, op, attrs, inputs, the composed keys its reply lists)
COMPOSED = [
    ("native_shuffle", "shuffle", {"first_transpose": [2, 0, 1], "reshape_dims": [4, 6]}, [X], []),
    ("native_strict_slice", "slice", {"start": [0, 1], "size": [2, 2], "stride": [1, 2], "axes": [0, 2]}, [X], []),
    ("native_scale", "scale", {"mode": "uniform", "scale": [2.0]}, [bits("float32", [1, 2, 2, 2])], []),
    ("native_reformat", "reformat", {"from": "LINEAR", "to": "LINEAR"}, [X], []),
    ("native_mode_inside", "slice", {"mode": "reflect", "start": [1], "size": [2], "axes": [2]}, [X], []),
    ("native_size_0_from_0", "slice", {"start": [0], "size": [0], "axes": [1]}, [X], []),
    ("zero_placeholder", "shuffle", {"reshape_dims": [0, 12]}, [X], ["shuffle:zero-placeholder"]),
    ("clamp", "slice", {"mode": "clamp", "start": [-2], "size": [6], "axes": [2]}, [X], ["slice:CLAMP"]),
    ("wrap", "slice", {"mode": "wrap", "start": [-5], "size": [7], "stride": [2], "axes": [2]}, [X], ["slice:WRAP"]),
    ("fill", "slice", {"mode": "fill", "start": [-1], "size": [6], "axes": [2]}, [X, None, None, None, floats([7.0])], ["slice:FILL"]),
    ("reflect", "slice", {"mode": "reflect", "start": [-3], "size": [9], "axes": [2]}, [X], ["slice:REFLECT"]),
    ("negative_step", "slice", {"start": [3], "size": [3], "stride": [-1], "axes": [2]}, [X], ["slice:negative-step"]),
    ("stride_0", "slice", {"start": [1], "size": [3], "stride": [0], "axes": [1]}, [X], ["slice:stride-0"]),
    ("size_0", "slice", {"start": [9], "size": [0], "stride": [3], "axes": [1]}, [X], ["slice:size-0"]),
    ("fill_then_negative_step", "slice", {"mode": "fill", "start": [4], "size": [6], "stride": [-1], "axes": [2]}, [X], ["slice:FILL", "slice:negative-step"]),
    ("as_strided", "as_strided", {"size": [2, 2], "stride": [3, 1], "offset": [1]}, [bits("float32", [8])], ["as_strided"]),
    ("int8_output", "scale", {"mode": "uniform", "scale": [3.0], "output_dtype": "int8"}, [bits("float32", [1, 2, 2, 2])], ["scale:int8-output"]),
] + [
    (f"reformat_{fmt}", "reformat", {"from": "LINEAR", "to": fmt}, [bits("int8", [1, 4, 2, 3, 2] if fmt in ("DHWC8", "CDHW32", "DHWC") else [1, 3, 2, 2])], [f"reformat:{fmt}"])
    for fmt in ("CHW2", "HWC8", "CHW4", "CHW16", "CHW32", "DHWC8", "CDHW32", "HWC", "DLA_LINEAR", "DLA_HWC4", "HWC16", "DHWC")
] + [
    ("reformat_unpack_and_pack", "reformat", {"from": "CHW4", "to": "HWC8", "shape": [1, 3, 2, 2]}, [bits("int8", [16])], ["reformat:CHW4", "reformat:HWC8"]),
]


def request(name, op, attrs, inputs):
    return {"type": "run", "id": name, "op": op, "attrs": attrs, "inputs": inputs}


def check_composed():
    """Each case's reply lists its keys, alone and in a batch; every key is in the catalogue
    and every catalogue key is some case's."""
    catalogue = set(composed_of(backend.__file__))
    requests = [request(name, op, attrs, inputs) for name, op, attrs, inputs, _ in COMPOSED]
    batched = {r["id"]: r for r in answer_batch(requests, backend.run, backend.run_batch)}
    used = set()
    for (name, _, _, _, keys), msg in zip(COMPOSED, requests):
        alone = answer_run(msg, backend.run)
        assert alone["type"] == "ok", alone
        assert alone.get("composed", []) == keys, f"{name}: {alone.get('composed')} != {keys}"
        assert batched[name] == alone, f"{name}: batched {batched[name]} != alone {alone}"
        assert set(keys) <= catalogue, f"{name}: {set(keys) - catalogue} not in engine.toml's [composed]"
        used |= set(keys)
    assert used == catalogue, f"catalogue keys no case notes: {sorted(catalogue - used)}"


def check_split():
    """A program XLA rejects naming no case: halves, then singles; only the guilty case's reply
    is the rejection (internal, or unsupported for UNIMPLEMENTED), the others as alone."""
    requests = [request(f"case{i}", "shuffle", {"first_transpose": [1, 0, 2]}, [bits("float32", [2, 3, i + 1])]) for i in range(10)]
    alone = [answer_run(msg, backend.run) for msg in requests]
    compile_cases = backend.compile_cases
    for text, kind in (("INTERNAL: made up", "error"), ("UNIMPLEMENTED: made up", "unsupported")):
        programs = []

        def guilty(cases):
            programs.append(len(cases))
            if any(case.args[0].shape == (2, 3, 7) for case in cases):
                raise RuntimeError(text)
            return compile_cases(cases)

        backend.compile_cases = guilty
        try:
            backend.CACHE.clear()
            replies = answer_batch(requests, backend.run, backend.run_batch)
        finally:
            backend.compile_cases = compile_cases
        for i, (got, want) in enumerate(zip(replies, alone)):
            if i == 6:
                assert got["type"] == kind and "made up" in (got.get("message") or got.get("reason")), got
            else:
                assert got == want, (got, want)
        assert programs == [10, 5, 5, 2, 1, 1, 3], programs  # the whole, its halves, [5, 6] split, then [7, 8, 9]


def check_emitters():
    """moves_only: Scale, a converted fill and bfloat16 data keep XLA's default emitters."""
    cases = {
        "shuffle float32": ("shuffle", {"reshape_dims": [24]}, [X], True),
        "shuffle bfloat16": ("shuffle", {"reshape_dims": [24]}, [bits("bfloat16", [2, 3, 4])], False),
        "fill of the input's type": ("slice", {"mode": "fill", "start": [-1], "size": [3], "axes": [0]}, [X, None, None, None, bits("float32", [])], True),
        "fill converted": ("slice", {"mode": "fill", "start": [-1], "size": [3], "axes": [0]}, [bits("int8", [2, 3]), None, None, None, floats([1.5])], False),
        "scale": ("scale", {"mode": "uniform", "scale": [2.0]}, [bits("float16", [1, 1, 1, 2])], False),
        "reformat int4": ("reformat", {"from": "LINEAR", "to": "CHW4"}, [bits("int4", [1, 3, 2, 2])], True),
        "as_strided int64": ("as_strided", {"size": [2], "stride": [1], "offset": [0]}, [bits("int64", [4])], True),
        "reshape dims input": ("shuffle", {}, [X, ints([24])], True),
    }
    for name, (op, attrs, inputs, moves) in cases.items():
        assert backend.plan_case(op, attrs, inputs).moves == moves, name


def main():
    check_composed()
    check_split()
    check_emitters()
    print(f"composed: {len(COMPOSED)} cases; split: a guilty case among 10; emitters: 8 cases")


if __name__ == "__main__":
    main()
