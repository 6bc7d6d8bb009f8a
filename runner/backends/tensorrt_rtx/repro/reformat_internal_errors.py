#!/usr/bin/env python3
"""A rank-5 CHW4 network input and a rank-2 HWC network output end the build in internal errors.

Spec: NvInferRuntime.h: CHW4 takes rank >= 3 (the vector dim is the third-to-last), so [2, 1, 3, 1, 2] unpacks as it packs; HWC needs rank >= 3, and a rank-2 output in CHW4 is the usage error "No TensorFormats available for tensor".

Engine: CHW4 -> LINEAR of int8 [2, 1, 3, 1, 2]: "MyelinCheckException: layouts.cpp: CHECK(reshape_seq.size() && ...) failed" (LINEAR -> CHW4 of the same shape builds); LINEAR -> HWC of float32 [3, 2]: "Assertion !n->candidateRequirements.empty() failed. No supported formats".
"""

import sys

import tensorrt_rtx as trt


class Messages(trt.ILogger):
    """Keeps the errors TensorRT logs (the CUDA driver probe's complaint aside: no GPU here)."""

    def __init__(self):
        trt.ILogger.__init__(self)
        self.lines = []

    def log(self, severity, msg):
        if severity in (trt.ILogger.Severity.INTERNAL_ERROR, trt.ILogger.Severity.ERROR) and "cudaError 35" not in msg:
            self.lines.append(" ".join(str(msg).split()))


LOGGER = Messages()
BUILDER = trt.Builder(LOGGER)


def build(network):
    """(plan or None, the errors logged while building)."""
    LOGGER.lines.clear()
    plan = BUILDER.build_serialized_network(network, BUILDER.create_builder_config())
    return plan, list(LOGGER.lines)


def verdict(reproduces, engine_answer, specified):
    print(f"tensorrt_rtx {trt.__version__}")
    print(f"  builder:       {engine_answer}")
    print(f"  specification: {specified}")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)


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
