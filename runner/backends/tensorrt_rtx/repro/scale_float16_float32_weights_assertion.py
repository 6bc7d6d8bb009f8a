#!/usr/bin/env python3
"""IScaleLayer on a float16 input given float32 weights ends the build in an internal assertion (the adapter gives the weights in the input's type, so no case meets it).

Spec: A usage error naming the weights' type, as the builder gives for int8 weights ("IScaleLayer scale must have unquantized type"), or a plan.

Engine: [1, 1, 1, 2] float16, UNIFORM scale 2.0 as float32: "Assertion node.inputs[0]->typeConstraint.value() == weightsPtr.type() failed".
"""

import sys

import numpy as np
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
    x = net.add_input("x", trt.float16, (1, 1, 1, 2))
    scale = np.array([2.0], dtype=np.float32)
    layer = net.add_scale(x, trt.ScaleMode.UNIFORM, trt.Weights(), scale, trt.Weights())
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[-1] if errors else 'nothing logged'}"
    verdict("Assertion" in answer, answer, "an API usage error naming the weights' type (or a plan)")
