#!/usr/bin/env python3
"""A shape tensor of the wrong rank or type ends the build in an internal assertion.

Spec: NvInfer.h: IShuffleLayer input 1 and ISliceLayer inputs 1, 2, 3 and 5 are 1-D Int32 or Int64 shape tensors; the builder names the rule for a rank-2 start of a Slice ("ISliceLayer input1 must be a 1D shape tensor, but rank is 2").

Engine: Shuffle reshape dims of rank 0 or 2: "Assertion rank() == 1 failed"; float32 reshape dims or Slice start: "Assertion !value || value->type() == ValueType::kINT failed"; float32 Slice axes: "Assertion std::ranges::all_of(values, ...) failed".
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


def answer(net, before):
    plan, errors = build(net)
    errors = before + errors
    return "plan" if plan is not None else f"rejected: {errors[0] if errors else 'nothing logged'}"


def reshape_by(values):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3))
    layer = net.add_shuffle(x)
    layer.set_input(1, net.add_constant(values.shape, values).get_output(0))
    net.mark_output(layer.get_output(0))
    return answer(net, list(LOGGER.lines))


def slice_with(position, values):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float32, (2, 3))
    layer = net.add_slice(x, (0, 0), (1, 2), (1, 1))
    layer.set_input(position, net.add_constant(values.shape, values).get_output(0))
    net.mark_output(layer.get_output(0))
    return answer(net, list(LOGGER.lines))


if __name__ == "__main__":
    answers = {
        "shuffle, rank-0 int32 reshape dims": reshape_by(np.array(6, dtype=np.int32)),
        "shuffle, rank-2 int32 reshape dims": reshape_by(np.array([[3, 2]], dtype=np.int32)),
        "shuffle, float32 reshape dims": reshape_by(np.array([3.0, 2.0], dtype=np.float32)),
        "slice, float32 start": slice_with(1, np.array([0.0, 1.0], dtype=np.float32)),
        "slice, float32 axes": slice_with(5, np.array([0.0, 1.0], dtype=np.float32)),
    }
    verdict(
        any("Assertion" in a for a in answers.values()),
        "; ".join(f"{k}: {v}" for k, v in answers.items()),
        "an API usage error: a shape tensor is a 1-D Int32 or Int64 tensor",
    )
