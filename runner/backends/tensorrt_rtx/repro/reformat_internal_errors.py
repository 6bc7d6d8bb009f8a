#!/usr/bin/env python3
"""Two format requests the builder should build or refuse as a usage error end in internal
errors instead:
- a CHW4 network input of rank 5 (int8, [2, 1, 3, 1, 2]) to a LINEAR output: "MyelinCheckException:
  layouts.cpp: CHECK(reshape_seq.size() && ...) failed", although the same shape packs from LINEAR
  to CHW4 (NvInferRuntime.h: CHW4 takes rank >= 3; the vector dim is the third-to-last);
- an HWC network output of rank 2 (float32, [3, 2]): "Assertion !n->candidateRequirements.empty()
  failed. No supported formats", where a rank-2 output in CHW4 or CHW2 is the usage error "No
  TensorFormats available for tensor"."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tensorrt_rtx as trt  # noqa: E402
from _common import BUILDER, build, verdict  # noqa: E402


def identity(src, dst, dtype, shape):
    net = BUILDER.create_network(0)
    x = net.add_input("x", dtype, shape)
    x.allowed_formats = 1 << int(src)
    y = net.add_identity(x).get_output(0)
    net.mark_output(y)
    y.allowed_formats = 1 << int(dst)
    plan, errors = build(net)
    return "plan" if plan is not None else f"rejected: {errors[-1][:300] if errors else 'nothing logged'}"


if __name__ == "__main__":
    F = trt.TensorFormat
    answers = {
        "CHW4 -> LINEAR, int8 rank 5": identity(F.CHW4, F.LINEAR, trt.int8, (2, 1, 3, 1, 2)),
        "LINEAR -> CHW4, int8 rank 5": identity(F.LINEAR, F.CHW4, trt.int8, (2, 1, 3, 1, 2)),
        "LINEAR -> HWC, float32 rank 2": identity(F.LINEAR, F.HWC, trt.float32, (3, 2)),
        "LINEAR -> CHW4, int8 rank 2": identity(F.LINEAR, F.CHW4, trt.int8, (3, 2)),
    }
    internal = [k for k, a in answers.items() if "Myelin" in a or "Assertion" in a]
    verdict(
        bool(internal),
        "; ".join(f"{k}: {v}" for k, v in answers.items()),
        "CHW4 rank 5 builds both ways; HWC rank 2 is refused as a usage error (internal errors now: "
        + (", ".join(internal) or "none") + ")",
    )
