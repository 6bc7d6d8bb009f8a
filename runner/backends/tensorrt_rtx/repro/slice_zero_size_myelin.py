#!/usr/bin/env python3
"""A size-0 Slice whose start lies outside the input fails in Myelin's shape inference.

Spec: A size-0 axis takes no coordinate, so its start cannot be out of bounds (TensorRT cookbook SliceLayer.md); the output of [2, 3] sliced with start [5, -5], size [0, 0] is [0, 0].

Engine: "Error during shape inference ... starts operand must be less than the input dimension size at axis 0, unless both are zero or output dimension size is zero" (Error Code 1: Myelin), although the output size is zero.
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
    x = net.add_input("x", trt.float32, (2, 3))
    layer = net.add_slice(x, (5, -5), (0, 0), (0, 0))
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[0] if errors else 'nothing logged'}"
    verdict("Myelin" in answer, answer, "a plan whose output has shape [0, 0]")
