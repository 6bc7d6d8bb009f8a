#!/usr/bin/env python3
"""IScaleLayer on an int8 input ends the build in an internal assertion.

Spec: NvInfer.h documents int8 as an input type of IScaleLayer; a plan or a usage error would be an answer.

Engine: [1, 1, 2, 4] int8, UNIFORM scale 0.5 as float32 weights: "Assertion node.inputs[0]->typeConstraint.value() == weightsPtr.type() failed" (Error Code 2: Internal Error); int8 weights are refused: "IScaleLayer scale must have unquantized type, i.e. kFLOAT, kHALF, or kBF16".
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
    x = net.add_input("x", trt.int8, (1, 1, 2, 4))
    scale = np.array([0.5], dtype=np.float32)
    layer = net.add_scale(x, trt.ScaleMode.UNIFORM, trt.Weights(), scale, trt.Weights())
    net.mark_output(layer.get_output(0))
    plan, errors = build(net)
    answer = "plan" if plan is not None else f"rejected: {errors[-1] if errors else 'nothing logged'}"
    verdict("Assertion" in answer, answer, "a plan (int8 is a documented input type), or an API usage error")
