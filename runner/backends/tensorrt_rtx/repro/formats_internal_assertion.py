#!/usr/bin/env python3
"""A network output whose allowed_formats is CHW16 or a DLA format ends the build in an internal assertion, neither a plan nor a usage error.

Spec: NvInferRuntime.h lists CHW16 for float16 and DLA_LINEAR / DLA_HWC4 for float16 and int8; a format the builder cannot give a tensor is a usage error elsewhere ("No TensorFormats available for tensor ...", "has dataType ... unsupported by tensor's allowed TensorFormats").

Engine: CHW16 float16 [1, 16, 1, 2], DLA_LINEAR float16 and int8, DLA_HWC4 int8 ([1, 3, 2, 2]): "Assertion allowedFormatSet != FormatSet::kNONE failed" (Error Code 2: Internal Error).
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
