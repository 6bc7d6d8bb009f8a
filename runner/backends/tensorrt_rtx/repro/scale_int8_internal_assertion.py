#!/usr/bin/env python3
"""IScaleLayer on an int8 input ([1, 1, 2, 4], UNIFORM scale 0.5): with float32 weights the build
ends in an internal assertion ("Assertion node.inputs[0]->typeConstraint.value() ==
weightsPtr.type() failed", Error Code 2: Internal Error); with int8 weights the layer is refused
as a usage error ("IScaleLayer scale must have unquantized type, i.e. kFLOAT, kHALF, or kBF16").
NvInfer.h documents int8 as an input type of IScaleLayer; either a plan or a usage error would
be an answer, an internal assertion is not."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, build, verdict  # noqa: E402

if __name__ == "__main__":
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.int8, (1, 1, 2, 4))
    scale = np.array([0.5], dtype=np.float32)
    layer = net.add_scale(x, trt.ScaleMode.UNIFORM, trt.Weights(), scale, trt.Weights())
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[-1] if errors else 'nothing logged'}"
    verdict("Assertion" in answer, answer, "a plan (int8 is a documented input type), or an API usage error")
