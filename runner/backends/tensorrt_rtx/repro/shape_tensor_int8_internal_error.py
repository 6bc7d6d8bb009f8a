#!/usr/bin/env python3
"""An int8 shape tensor ends the build in an internal error before the usage error that names the type rule.

Spec: NvInfer.h: IShuffleLayer input 1 (the reshape dims) is a 1-D Int32 or Int64 shape tensor; the builder's own usage error says so ("second input has type Int8 but must have type Int64 or Int32").

Engine: float32 [2, 3] reshaped by an int8 constant [3, 2]: "Error Code 1: Internal Error (SymbolicExecute is not supported for weights type Int8 ...)" first, logged at the moment the layer's output dims are asked for, then the usage error; an int32 constant builds. An ISliceLayer stride given as an int8 constant (input 3) ends the same way.
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


def reshape_by(values):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    layer = net.add_shuffle(net.add_input("x", trt.float32, (2, 3)))
    layer.set_input(1, net.add_constant((2,), values).get_output(0))
    net.mark_output(layer.get_output(0))
    plan = BUILDER.build_serialized_network(net, BUILDER.create_builder_config())
    return plan, list(LOGGER.lines)


def slice_stride_by(values):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    layer = net.add_slice(net.add_input("x", trt.float32, (3, 3)), trt.Dims([0, 0]), trt.Dims([2, 2]), trt.Dims([1, 1]))
    layer.set_input(3, net.add_constant((2,), values).get_output(0))
    net.mark_output(layer.get_output(0))
    plan = BUILDER.build_serialized_network(net, BUILDER.create_builder_config())
    return plan, list(LOGGER.lines)


if __name__ == "__main__":
    plan8, errors8 = reshape_by(np.array([3, 2], dtype=np.int8))
    slice8, slice_errors8 = slice_stride_by(np.array([1, 1], dtype=np.int8))
    plan32, errors32 = reshape_by(np.array([3, 2], dtype=np.int32))
    reproduces = all(plan is None and errors and "Internal Error" in errors[0] for plan, errors in [(plan8, errors8), (slice8, slice_errors8)])
    print(f"tensorrt_rtx {trt.__version__}")
    print(f"  builder, int8 dims:  {' | '.join(errors8)[:500] if errors8 else 'plan'}")
    print(f"  builder, int32 dims: {'plan' if plan32 is not None else ' | '.join(errors32)[:300]}")
    print(f"  builder, int8 slice stride: {' | '.join(slice_errors8)[:500] if slice_errors8 else 'plan'}")
    print("  specification: the usage error on the type, no internal error")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
