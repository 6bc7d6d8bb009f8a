#!/usr/bin/env python3
"""Every message pattern of the adapter's KIND_PATTERNS (and INTERNAL) is checked here on a real
message of the pinned builder: each request below makes TensorRT-RTX refuse a network, and the
test asserts that the rejection's message matches that one pattern and gets its kind. A pattern
that no request exercises fails the test, so that no kind rests on a message never seen.

    python3 runner/backends/tensorrt_rtx/test_errors.py

Needs the adapter's packages (requirements.txt); runner/tests/engines.rs runs it.
"""

import base64
import os
import sys
import unittest

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import numpy as np  # noqa: E402

import backend  # noqa: E402
from wire import OpError  # noqa: E402


def tensor(dtype, shape, values=None):
    """A wire tensor object; `values` default to zeros."""
    raw = {"float32": "<f4", "float16": "<f2", "int8": "i1", "uint8": "u1", "int32": "<i4", "int64": "<i8", "fp8": "u1"}[dtype]
    count = int(np.prod(shape)) if shape else 1
    array = np.zeros(count, raw) if values is None else np.array(values, raw).reshape(-1)
    return {"dtype": dtype, "shape": list(shape), "data": base64.b64encode(array.tobytes()).decode()}


def floats(values):
    return tensor("float32", [len(values)], values)


def shuffle(x, reshape=None, **attrs):
    return "shuffle", attrs, [x, reshape]


def slice_(x, fill=None, start_tensor=None, **attrs):
    return "slice", attrs, [x, start_tensor, None, None, fill, None]


F23 = tensor("float32", [2, 3])
# (kind, the pattern's text as written in KIND_PATTERNS, request)
CASES = [
    ("invalid_rank", r"Max expected length is 8", shuffle(tensor("float32", [1] * 9))),
    ("invalid_rank", r"must have num dims <= Dims::MAX_DIMS", shuffle(tensor("float32", [6]), tensor("int64", [9], [6] + [1] * 8))),
    ("invalid_permutation", r"`(first|second)_transpose` is not valid", shuffle(F23, first_transpose=[1, 1])),
    ("invalid_reshape", r"reshape dimension with more than one -1 wildcard", shuffle(F23, reshape_dims=[-1, -1])),
    ("invalid_reshape", r"reshape dimension is less than -1", shuffle(F23, reshape_dims=[-2, -3])),
    ("invalid_reshape", r"has zero placeholder that refers to invalid axis", shuffle(tensor("float32", [0]), reshape_dims=[0, 0])),
    ("volume_mismatch", r"reshape changes volume", shuffle(F23, reshape_dims=[5])),
    ("volume_mismatch", r"reshape wildcard -1 has no integer solution", shuffle(F23, reshape_dims=[4, -1])),
    ("volume_mismatch", r"reshape of empty tensor to non-empty tensor", shuffle(tensor("float32", [0, 2]), reshape_dims=[2, 0])),
    ("indeterminate_wildcard", r"reshape wildcard -1 has infinite number of solutions or no solution",
     shuffle(tensor("float32", [0, 3]), reshape_dims=[0, -1])),
    ("invalid_weights", r"weights has count \d+ but \d+ was expected",
     ("scale", {"mode": "channel", "scale": floats([1, 2])}, [tensor("float32", [1, 3, 2, 2])])),
    ("invalid_weights", r"count \d+ conflicts with \d+ count",
     ("scale", {"mode": "channel", "scale": floats([1, 2]), "shift": floats([0, 0]), "power": floats([2])}, [tensor("float32", [1, 2, 1, 1])])),
    ("invalid_channel_axis", r"\[Scale\]: For \w+ mode, channel axis -?\d+ must be in range",
     ("scale", {"mode": "channel", "scale": floats([1]), "channel_axis": 4}, [tensor("float32", [1, 1, 2, 2])])),
    ("out_of_bounds", r"out of bounds slice", slice_(tensor("float32", [3, 4]), start=[0, 2], size=[3, 4])),
    ("out_of_bounds", r"ISliceLayer has out of bounds access on axis", slice_(F23, start=[2], size=[2], axes=[1])),
    ("empty_dimension", r"invalid non-zero slice on an empty dimension", slice_(tensor("float32", [0]), start=[1], size=[3], mode="wrap")),
    ("fill_not_allowed", r"Fill input should only be provided when SampleMode is kFILL",
     slice_(tensor("float32", [3]), fill=tensor("float32", []), start=[-1], size=[4], mode="clamp")),
    ("invalid_fill", r"should have a fill value that is of rank 0",
     slice_(tensor("float32", [3]), fill=tensor("float32", [2]), start=[-1], size=[4], mode="fill")),
    ("invalid_fill", r"`input4` type must be the same as or implicitly convertible",
     slice_(tensor("float32", [3]), fill=tensor("int32", []), start=[-1], size=[4], mode="fill")),
    ("invalid_size", r"slice size cannot have negative dimension", slice_(tensor("float32", [3]), start=[0], size=[-1])),
    ("rank_mismatch", r"mismatch in number of dimensions for (start|size|stride)", slice_(F23, start=[0], size=[1, 1])),
    ("rank_mismatch", r"must have the same length as axes input", slice_(F23, start=[0, 0], size=[1, 1], axes=[1])),
    ("invalid_input", r"ISliceLayer input[1235] must be a 1D shape tensor", slice_(F23, start_tensor=tensor("int32", [1, 2]), size=[1, 1])),
    ("unsupported_dtype", r"unsupported by tensor's allowed TensorFormats", ("reformat", {"from": "LINEAR", "to": "CHW2"}, [tensor("float32", [1, 2, 1, 1])])),
    ("unsupported_dtype", r"\]: (first )?input has type \w+ but must have type", ("scale", {"mode": "uniform"}, [tensor("int32", [1, 1, 2, 2])])),
    ("unsupported_dtype", r"Tensor (input|fill) has datatype \w+ but is not consumed by", slice_(tensor("fp8", [4]), start=[1], size=[2])),
]
INTERNAL_CASES = [
    ("Error Code 2: Internal Error", ("reformat", {"from": "LINEAR", "to": "CHW16"}, [tensor("float16", [1, 16, 1, 2])])),
    ("Error Code 1: Myelin", slice_(F23, start=[5, -5], size=[0, 0], stride=[0, 0])),
    # Logged before the usage error on the shape tensor's type (repro/shape_tensor_int8_internal_error.py).
    ("Error Code 1: Internal Error", shuffle(F23, tensor("int8", [2], [3, 2]))),
]


def rejection(request):
    op, attrs, inputs = request
    try:
        reply = backend.run(op, attrs, inputs)
    except OpError as e:
        return e
    raise AssertionError(f"the builder built {op} {attrs}: {reply}")


class Messages(unittest.TestCase):
    def test_each_pattern_gives_its_kind_on_a_real_message(self):
        for kind, pattern, request in CASES:
            with self.subTest(pattern=pattern):
                e = rejection(request)
                compiled = dict((k, {p.pattern: p for p in ps}) for k, ps in backend.KIND_PATTERNS)[kind][pattern]
                self.assertTrue(compiled.search(e.message), f"{pattern!r} not in {e.message!r}")
                self.assertEqual(e.kind, kind, e.message)

    def test_every_pattern_is_exercised(self):
        exercised = {(kind, pattern) for kind, pattern, _ in CASES}
        for kind, patterns in backend.KIND_PATTERNS:
            for p in patterns:
                self.assertIn((kind, p.pattern), exercised, f"no real message checks {kind}: {p.pattern}")

    def test_internal_errors_that_name_no_rule_are_internal(self):
        for text, request in INTERNAL_CASES:
            with self.subTest(text=text):
                e = rejection(request)
                self.assertIn(text, e.message)
                self.assertEqual(e.kind, "internal", e.message)

    def test_a_rejection_that_names_no_rule_has_no_kind(self):
        # A second transpose that repeats an axis: the builder reports the volume, not the rule.
        e = rejection(shuffle(F23, second_transpose=[1, 1]))
        self.assertIn("volume mismatch", e.message)
        self.assertIsNone(e.kind)


if __name__ == "__main__":
    unittest.main()
