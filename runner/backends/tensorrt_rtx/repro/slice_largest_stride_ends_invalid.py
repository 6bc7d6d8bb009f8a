#!/usr/bin/env python3
"""A STRICT_BOUNDS Slice of size 1 with a stride of 2^63 - 1 fails in Myelin's code generator.

Spec: NvInfer.h defines Slice per output coordinate (x = y * stride + start); on an axis of size 1
only y = 0 is read, so x = start whatever the stride: float32 [3] with start 1, size 1, stride
2^63 - 1 reads in[1], an output of shape [1] (the case slice::strict_bounds::largest_stride_one_element).

Engine: "ends operand is invalid at axis 0" (Myelin, compileGraph): the lowered end, past int64,
is refused, though it is never read.
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


def build(stride):
    """The builder's answer to the slice start 1, size 1 of a float32 [3] with `stride`."""
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    x = net.add_input("x", trt.float32, (3,))
    net.mark_output(net.add_slice(x, (1,), (1,), (stride,)).get_output(0))
    plan = BUILDER.build_serialized_network(net, BUILDER.create_builder_config())
    if plan is not None:
        return "plan"
    errors = [line for line in LOGGER.lines if "ends operand" in line] or LOGGER.lines
    return f"rejected: {errors[0][-200:] if errors else 'nothing logged'}"


if __name__ == "__main__":
    largest, small = build(2**63 - 1), build(1)
    reproduces = "ends operand is invalid" in largest and small == "plan"
    print(f"tensorrt_rtx {trt.__version__}")
    print(f"  builder:       stride 2^63-1: {largest}; stride 1: {small}")
    print("  specification: a plan for both, reading in[1] (size 1 reads y = 0 only)")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
