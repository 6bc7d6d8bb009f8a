#!/usr/bin/env python3
"""A WRAP Slice with a stride of 2^63 - 1 fails in Myelin's shape inference.

Spec: NvInfer.h defines WRAP per output coordinate (x = y * stride + start, read at x mod d); int32 [3] with start 0, size 3, stride 2^63 - 1 has output shape [3].

Engine: "expected shape [0] but got [3]" (Error Code 1: Myelin): the lowered end start + size * stride overflows 64 bits.
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


if __name__ == "__main__":
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.int32, (3,))
    layer = net.add_slice(x, (0,), (3,), (2**63 - 1,))
    layer.mode = trt.SampleMode.WRAP
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[0] if errors else 'nothing logged'}"
    verdict("Myelin" in answer, answer, "a plan whose output has shape [3]")
