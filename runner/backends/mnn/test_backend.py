#!/usr/bin/env python3
"""Tests of the MNN adapter's own choices, on MNN: a Slice of negative stride inside the input
never reaches MNN's StridedSlice with a negative step (which writes past its output buffer:
repro/strided_slice_negative_step_writes_past_output.py), and still gives the right values; each
composing branch lists its key of the manifest's [composed] table in its reply, a native case
none; the adapter defects of issues 42 and 43, each with a case of its own.
Run by runner/tests/engines.rs; exit 0 when every test passes."""

import base64
import os
import struct
import sys
import time
import tomllib
import unittest

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import backend  # noqa: E402  (MNN's own output goes to the adapter's scratch file)
from wire import answer_run  # noqa: E402  (on the path backend.py set)

HERE = os.path.dirname(os.path.abspath(__file__))


def floats(values, shape=None):
    data = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    return {"dtype": "float32", "shape": shape or [len(values)], "data": data}


def values_of(wire):
    n = 1
    for d in wire["shape"]:
        n *= d
    return list(struct.unpack(f"<{n}f", base64.b64decode(wire["data"])))


def reply(op, attrs, inputs):
    """The adapter's reply to one run request, composed notes included."""
    return answer_run({"type": "run", "id": "t", "op": op, "attrs": attrs, "inputs": inputs}, backend.run)


def slice_reply(attrs, values=(1, 2, 3, 4, 5), fill=None):
    return reply("slice", attrs, [floats(list(values)), None, None, None, fill, None])


class NegativeSteps(unittest.TestCase):
    def setUp(self):
        self.steps = []
        self.original = backend.F.strided_slice

        def recording(x, begin, end, strides, *rest):
            self.steps.append(list(strides.read()))
            return self.original(x, begin, end, strides, *rest)

        backend.F.strided_slice = recording

    def tearDown(self):
        backend.F.strided_slice = self.original

    def slice(self, mode, start, size, stride):
        attrs = {"mode": mode, "start": [start], "size": [size], "stride": [stride]}
        return values_of(backend.run("slice", attrs, [floats([1, 2, 3, 4, 5])]))

    def assert_no_negative_step(self):
        self.assertFalse([s for s in self.steps if any(v < 0 for v in s)], self.steps)

    def test_fill_past_the_end(self):
        # Coordinates 8, 7, 6, 5 of [1..5]: all past the end, the fill value 0 (slice.fill.value).
        self.assertEqual(self.slice("fill", 8, 4, -1), [0, 0, 0, 0])
        self.assert_no_negative_step()

    def test_reflect_past_the_end(self):
        # Coordinates 8, 7, 6, 5 reflect (period 8) to 0, 1, 2, 3 (slice.reflect.mirror).
        self.assertEqual(self.slice("reflect", 8, 4, -1), [1, 2, 3, 4])
        self.assert_no_negative_step()

    def test_strict_bounds_inside(self):
        # Coordinates 4, 2, 0 (slice.coordinates.formula).
        self.assertEqual(self.slice("strict_bounds", 4, 3, -2), [5, 3, 1])
        self.assert_no_negative_step()


def slice_case(attrs, values=(1, 2, 3, 4, 5), fill=None):
    return ("slice", attrs, [floats(list(values)), None, None, None, fill, None])


# (key its reply lists or None for a native case, request, output values)
BRANCHES = [
    ("slice:WRAP", slice_case({"mode": "wrap", "start": [-1], "size": [3], "stride": [1]}), [5, 1, 2]),
    ("slice:CLAMP", slice_case({"mode": "clamp", "start": [-1], "size": [3], "stride": [3]}), [1, 3, 5]),
    # x = -3 on d = 3 (period 4) reads 1: a Pad of 3 before, staged as two of at most d-1
    ("slice:REFLECT", slice_case({"mode": "reflect", "start": [-3], "size": [2], "stride": [1]}, (1, 2, 3)), [2, 3]),
    # an axis of one element: a Gather of it
    ("slice:REFLECT", slice_case({"mode": "reflect", "start": [-2], "size": [3], "stride": [1]}, (7,)), [7, 7, 7]),
    # one Pad REFLECT is MNN's own
    (None, slice_case({"mode": "reflect", "start": [-1], "size": [2], "stride": [1]}, (1, 2, 3)), [2, 1]),
    ("slice:FILL", slice_case({"mode": "fill", "start": [-1], "size": [3], "stride": [1]}, (1, 2, 3), floats([9], [])), [9, 1, 2]),
    # zeros are MNN's Pad CONSTANT
    (None, slice_case({"mode": "fill", "start": [-1], "size": [3], "stride": [1]}, (1, 2, 3)), [0, 1, 2]),
    ("slice:negative-step", slice_case({"start": [4], "size": [3], "stride": [-2]}), [5, 3, 1]),
    ("slice:stride-0", slice_case({"start": [2], "size": [3], "stride": [0]}), [3, 3, 3]),
    (None, slice_case({"start": [1], "size": [2], "stride": [2]}), [2, 4]),
    ("as_strided", ("as_strided", {"size": [2], "stride": [2], "offset": [1]}, [floats([1, 2, 3, 4, 5])]), [2, 4]),
    ("scale", ("scale", {"mode": "uniform", "scale": [2.0], "shift": [1.0]}, [floats([1, 2], [1, 1, 1, 2])]), [3, 5]),
    (None, ("shuffle", {"first_transpose": [1, 0]}, [floats([1, 2, 3, 4, 5, 6], [2, 3]), None]), [1, 4, 2, 5, 3, 6]),
]


def catalogue_keys():
    with open(os.path.join(HERE, "engine.toml"), "rb") as f:
        return set(tomllib.load(f)["composed"])


class ComposedNotes(unittest.TestCase):
    """Each composing branch: a case, its values, and the key its reply lists (docs/protocol.md,
    "Composed as it happened"); a native case lists none."""

    def test_each_branch_lists_its_key(self):
        for key, (op, attrs, inputs), values in BRANCHES:
            with self.subTest(key=key, attrs=attrs):
                got = reply(op, attrs, inputs)
                self.assertEqual(got["type"], "ok", got)
                self.assertEqual(values_of(got["outputs"][0]), values)
                self.assertEqual(got.get("composed"), [key] if key else None)

    def test_every_catalogue_key_has_a_branch(self):
        self.assertEqual({key for key, _, _ in BRANCHES if key}, catalogue_keys())


class Defects(unittest.TestCase):
    """The adapter defects of issues 42 and 43 (and the int32 kin found beside them), each on a case
    of its own: what the old adapter answered is in the comment."""

    def error(self, got, kind):
        self.assertEqual((got["type"], got.get("kind")), ("error", kind), got)

    def test_huge_stride_on_a_size_one_axis_reads_the_start(self):
        # was: error `internal` (OverflowError converting the end 2 + 2^63 - 1 to int32)
        for mode in ("strict_bounds", "fill", "reflect"):
            got = slice_reply({"mode": mode, "start": [2], "size": [1], "stride": [(1 << 63) - 1]})
            self.assertEqual((got["type"], values_of(got["outputs"][0])), ("ok", [3]), got)
            self.assertNotIn("composed", got)

    def test_huge_stride_on_a_longer_axis_is_unsupported(self):
        got = slice_reply({"start": [1], "size": [2], "stride": [1 << 62]})
        self.assertEqual(got["type"], "unsupported", got)
        self.assertIn("int32", got["reason"])

    def test_huge_stride_zero_start_is_judged_by_the_gather(self):
        # was: error "MNN building the graph: Python integer ... out of bounds for int32"; the
        # index is outside the input, as a clipped int32 index still is (MNN's Gather gives 0)
        got = slice_reply({"start": [1 << 40], "size": [2], "stride": [0]})
        self.assertEqual((got["type"], values_of(got["outputs"][0])), ("ok", [0, 0]), got)

    def test_negative_as_strided_offset(self):
        # was: ok, [0, 1] (MNN's Gather gives 0 for the index -1)
        self.error(reply("as_strided", {"size": [2], "stride": [1], "offset": [-1]}, [floats([1, 2, 3, 4])]), "invalid_offset")

    def test_negative_as_strided_stride_and_size(self):
        self.error(reply("as_strided", {"size": [2], "stride": [-1], "offset": [1]}, [floats([1, 2, 3, 4])]), "invalid_stride")
        self.error(reply("as_strided", {"size": [2, 0], "stride": [1, 1], "offset": [0]}, [floats([1, 2, 3, 4])]), "invalid_size")

    def test_reshape_dims_past_int32(self):
        # was: ok, [2, 3] (MNN read 2^40 as 0, a placeholder); the reference says volume_mismatch
        # (src/ops/shuffle.rs: the volume is checked on the dims, an overflowing product never
        # equals the input's)
        self.error(reply("shuffle", {"reshape_dims": [1 << 40, 1 << 40]}, [floats(list(range(6)), [2, 3]), None]), "volume_mismatch")
        self.error(reply("shuffle", {"reshape_dims": [1 << 40, -1]}, [floats(list(range(6)), [2, 3]), None]), "volume_mismatch")
        self.error(reply("shuffle", {"reshape_dims": [-(1 << 40), 6]}, [floats(list(range(6)), [2, 3]), None]), "invalid_reshape")

    def test_reshape_product_past_int32(self):
        # was: error `invalid_reshape` (MNN's product wrapped to -2, read as a dim below -1)
        self.error(reply("shuffle", {"reshape_dims": [(1 << 31) - 1, 2]}, [floats(list(range(6)), [2, 3]), None]), "volume_mismatch")

    def test_permutation_entry_past_int32(self):
        # was: ok, the input unchanged (2^32 read as axis 0)
        self.error(reply("shuffle", {"first_transpose": [1 << 32, 1]}, [floats(list(range(6)), [2, 3]), None]), "invalid_permutation")

    def test_negative_slice_size(self):
        # was: ok, a [0, 0] output (the ends start - 1 read from the back)
        for mode in ("strict_bounds", "wrap", "fill"):
            got = reply("slice", {"mode": mode, "start": [1, 1], "size": [-1, -1], "stride": [1, 1]}, [floats(list(range(6)), [2, 3])])
            self.error(got, "invalid_size")

    def test_unknown_mode(self):
        # was: ok, the slice as STRICT_BOUNDS; the reference rejects it (invalid_input)
        for mode in ("WRAP", "mirror"):
            self.error(slice_reply({"mode": mode, "start": [-1], "size": [2], "stride": [1]}), "invalid_input")
        self.error(reply("scale", {"mode": "per_tensor", "scale": [2.0]}, [floats([1, 2], [1, 1, 1, 2])]), "invalid_input")

    def test_size_at_the_budget_is_cheap(self):
        # was: 22 s of CPU and 10 GB (a Python list of 2^28 coordinates, for an axis of positive
        # step); MNN's StridedSlice then answers an empty output (known-failures.txt)
        start = time.process_time()
        got = reply("slice", {"start": [1], "size": [1 << 28], "stride": [1]}, [floats([1])])
        self.assertLess(time.process_time() - start, 2)
        self.assertEqual((got["type"], got["outputs"][0]["shape"]), ("ok", [0]), got)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=0).result
    sys.exit(0 if result.wasSuccessful() else 1)
