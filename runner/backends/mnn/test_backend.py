#!/usr/bin/env python3
"""Tests of the MNN adapter's own choices, on MNN: a Slice of negative stride inside the input
never reaches MNN's StridedSlice with a negative step (which writes past its output buffer:
repro/strided_slice_negative_step_writes_past_output.py), and still gives the right values.
Run by runner/tests/engines.rs; exit 0 when every test passes."""

import base64
import os
import struct
import sys
import unittest

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import backend  # noqa: E402  (MNN's own output goes to the adapter's scratch file)


def floats(values):
    data = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
    return {"dtype": "float32", "shape": [len(values)], "data": data}


def values_of(wire):
    return list(struct.unpack(f"<{wire['shape'][0]}f", base64.b64decode(wire["data"])))


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


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=0).result
    sys.exit(0 if result.wasSuccessful() else 1)
