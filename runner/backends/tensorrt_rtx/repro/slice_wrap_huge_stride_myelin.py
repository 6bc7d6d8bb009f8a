#!/usr/bin/env python3
"""ISliceLayer WRAP on an int32 [3] input with stride 2^63 - 1 and size 3 fails in Myelin's shape
inference ("expected shape [0] but got [3]"): the lowering computes the end start + size * stride
in 64 bits and it overflows. NvInfer.h defines WRAP per output coordinate (x = y * stride + start,
read at x mod d); the output shape is the size, [3]."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, build, verdict  # noqa: E402

if __name__ == "__main__":
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.int32, (3,))
    layer = net.add_slice(x, (0,), (3,), (2**63 - 1,))
    layer.mode = trt.SampleMode.WRAP
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[0] if errors else 'nothing logged'}"
    verdict("Myelin" in answer, answer, "a plan whose output has shape [3]")
