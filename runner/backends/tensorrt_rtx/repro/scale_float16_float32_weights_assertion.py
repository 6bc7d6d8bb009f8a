#!/usr/bin/env python3
"""IScaleLayer on a float16 input ([1, 1, 1, 2], UNIFORM) given float32 weights ends the build in
an internal assertion ("Assertion node.inputs[0]->typeConstraint.value() == weightsPtr.type()
failed") instead of a usage error naming the weights' type. (The adapter gives the weights in the
input's type, as a strongly typed network wants, so no case of the suite meets this.)"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, build, verdict  # noqa: E402

if __name__ == "__main__":
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float16, (1, 1, 1, 2))
    scale = np.array([2.0], dtype=np.float32)
    layer = net.add_scale(x, trt.ScaleMode.UNIFORM, trt.Weights(), scale, trt.Weights())
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[-1] if errors else 'nothing logged'}"
    verdict("Assertion" in answer, answer, "an API usage error naming the weights' type (or a plan)")
