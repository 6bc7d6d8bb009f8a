#!/usr/bin/env python3
"""ISliceLayer: a STRICT_BOUNDS slice whose size is 0 on an axis whose start lies outside the
input ([2, 3], start [5, -5], size [0, 0]) fails in Myelin's shape inference: "starts operand must
be less than the input dimension size at axis 0, unless both are zero or output dimension size is
zero", although the output dimension size is zero. TensorRT's cookbook (SliceLayer.md) shows that
a size-0 axis takes no coordinate, so its start cannot be out of bounds."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, build, verdict  # noqa: E402

if __name__ == "__main__":
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3))
    layer = net.add_slice(x, (5, -5), (0, 0), (0, 0))
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[0] if errors else 'nothing logged'}"
    verdict("Myelin" in answer, answer, "a plan whose output has shape [0, 0]")
