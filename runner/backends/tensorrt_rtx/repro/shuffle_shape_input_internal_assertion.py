#!/usr/bin/env python3
"""IShuffleLayer input 1 (the reshape dims as a tensor) of the wrong rank or type ends the build
in an internal assertion, where NvInfer.h asks for a 1-D Int32 or Int64 shape tensor and a
usage error would name it:
- a rank-0 or rank-2 int32 constant: "Assertion rank() == 1 failed" (getAsSymbolicDims);
- a float32 constant: "Assertion !value || value->type() == ValueType::kINT failed"."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, LOGGER, build, verdict  # noqa: E402


def reshape_by(values):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3))
    dims = net.add_constant(values.shape, values).get_output(0)
    layer = net.add_shuffle(x)
    layer.set_input(1, dims)
    net.mark_output(layer.get_output(0))
    before = list(LOGGER.lines)
    plan, errors = build(net)
    errors = before + errors
    return "plan" if plan is not None else f"rejected: {errors[0] if errors else 'nothing logged'}"


if __name__ == "__main__":
    answers = {
        "rank 0 int32 [6]": reshape_by(np.array(6, dtype=np.int32)),
        "rank 2 int32 [[3, 2]]": reshape_by(np.array([[3, 2]], dtype=np.int32)),
        "float32 [3, 2]": reshape_by(np.array([3.0, 2.0], dtype=np.float32)),
    }
    verdict(
        any("Assertion" in a for a in answers.values()),
        "; ".join(f"{k}: {v}" for k, v in answers.items()),
        "an API usage error: input 1 must be a 1-D Int32 or Int64 shape tensor",
    )
