"""Shared by the reproducers: a builder whose logger keeps TensorRT's messages, and the verdict.

Each reproducer calls tensorrt_rtx directly (no adapter), prints the builder's answer beside what
TensorRT's documentation specifies, and exits 0 while the defect still reproduces, 1 once it no
longer does."""

import sys

import tensorrt_rtx as trt


class Messages(trt.ILogger):
    def __init__(self):
        trt.ILogger.__init__(self)
        self.lines = []

    def log(self, severity, msg):
        if severity in (trt.ILogger.Severity.INTERNAL_ERROR, trt.ILogger.Severity.ERROR):
            self.lines.append(" ".join(str(msg).split()))


LOGGER = Messages()
BUILDER = trt.Builder(LOGGER)


def build(network):
    """(plan or None, the error messages logged while building)."""
    LOGGER.lines.clear()
    plan = BUILDER.build_serialized_network(network, BUILDER.create_builder_config())
    return plan, list(LOGGER.lines)


def verdict(reproduces, engine_answer, specified):
    print(f"tensorrt_rtx {trt.__version__}")
    print(f"  builder:       {engine_answer}")
    print(f"  specification: {specified}")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
