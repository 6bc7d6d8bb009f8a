#!/usr/bin/env python3
"""A network output whose allowed_formats is CHW16 (float16, [1, 16, 1, 2]), DLA_LINEAR or
DLA_HWC4 (float16 and int8, [1, 3, 2, 2]) ends the build in an internal assertion ("Assertion
allowedFormatSet != FormatSet::kNONE failed", Error Code 2: Internal Error), where a format the
builder cannot give a tensor is an API usage error elsewhere ("No TensorFormats available for
tensor ...", "has dataType ... unsupported by tensor's allowed TensorFormats"). NvInferRuntime.h
lists CHW16 for float16 and the DLA formats for float16 and int8."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, build, verdict  # noqa: E402


def pack(fmt, dtype, shape):
    net = BUILDER.create_network(0)
    x = net.add_input("x", dtype, shape)
    y = net.add_identity(x).get_output(0)
    net.mark_output(y)
    y.allowed_formats = 1 << int(fmt)
    plan, errors = build(net)
    return "plan" if plan is not None else f"rejected: {errors[-1] if errors else 'nothing logged'}"


if __name__ == "__main__":
    answers = {
        "CHW16 float16": pack(trt.TensorFormat.CHW16, trt.float16, (1, 16, 1, 2)),
        "DLA_LINEAR float16": pack(trt.TensorFormat.DLA_LINEAR, trt.float16, (1, 3, 2, 2)),
        "DLA_LINEAR int8": pack(trt.TensorFormat.DLA_LINEAR, trt.int8, (1, 3, 2, 2)),
        "DLA_HWC4 int8": pack(trt.TensorFormat.DLA_HWC4, trt.int8, (1, 3, 2, 2)),
    }
    verdict(
        any("Assertion" in a for a in answers.values()),
        "; ".join(f"{k}: {v}" for k, v in answers.items()),
        "a plan, or an API usage error naming the format (never an internal assertion)",
    )
