#!/usr/bin/env python3
"""A shape tensor of the wrong rank or type ends the build in an internal assertion, where
NvInfer.h asks for a 1-D Int32 or Int64 shape tensor (IShuffleLayer input 1; ISliceLayer inputs
1, 2, 3 and 5) and a usage error would name it (as the builder does for a rank-2 start of a Slice:
"ISliceLayer input1 must be a 1D shape tensor, but rank is 2"):
- Shuffle, reshape dims of rank 0 or 2 (int32): "Assertion rank() == 1 failed";
- Shuffle, float32 reshape dims: "Assertion !value || value->type() == ValueType::kINT failed";
- Slice, a float32 start: the same SymbolicCoord assertion;
- Slice, float32 axes: "Assertion std::ranges::all_of(values, ...) failed" (assertValuesHaveType)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, LOGGER, build, verdict  # noqa: E402


def answer(net, before):
    plan, errors = build(net)
    errors = before + errors
    return "plan" if plan is not None else f"rejected: {errors[0] if errors else 'nothing logged'}"


def reshape_by(values):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3))
    layer = net.add_shuffle(x)
    layer.set_input(1, net.add_constant(values.shape, values).get_output(0))
    net.mark_output(layer.get_output(0))
    return answer(net, list(LOGGER.lines))


def slice_with(position, values):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3))
    layer = net.add_slice(x, (0, 0), (1, 2), (1, 1))
    layer.set_input(position, net.add_constant(values.shape, values).get_output(0))
    net.mark_output(layer.get_output(0))
    return answer(net, list(LOGGER.lines))


if __name__ == "__main__":
    answers = {
        "shuffle, rank-0 int32 reshape dims": reshape_by(np.array(6, dtype=np.int32)),
        "shuffle, rank-2 int32 reshape dims": reshape_by(np.array([[3, 2]], dtype=np.int32)),
        "shuffle, float32 reshape dims": reshape_by(np.array([3.0, 2.0], dtype=np.float32)),
        "slice, float32 start": slice_with(1, np.array([0.0, 1.0], dtype=np.float32)),
        "slice, float32 axes": slice_with(5, np.array([0.0, 1.0], dtype=np.float32)),
    }
    verdict(
        any("Assertion" in a for a in answers.values()),
        "; ".join(f"{k}: {v}" for k, v in answers.items()),
        "an API usage error: a shape tensor is a 1-D Int32 or Int64 tensor",
    )
