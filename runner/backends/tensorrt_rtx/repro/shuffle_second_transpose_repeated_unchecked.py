#!/usr/bin/env python3
"""A repeated IShuffleLayer second transpose entry, without a reshape, is never checked as a permutation.

Spec: NvInfer.h setSecondTranspose takes a permutation of the reshape result's axes; with reshape dims the builder reports [1, 1] as "IShuffleLayer `second_transpose` is not valid", a usage error naming the rule.

Engine: float32 [2, 3] with second transpose [1, 1] and no reshape: the builder applies the repeated entry and reports "volume mismatch ... output dimensions [3,3] have volume 9", a rule the case does not break; with reshape dims [3, 2] the same [1, 1] is "second_transpose is not valid".
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


def second_transpose(reshape):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    layer = net.add_shuffle(net.add_input("x", trt.float32, (2, 3)))
    if reshape is not None:
        layer.reshape_dims = trt.Dims(reshape)
    layer.second_transpose = trt.Permutation([1, 1])
    net.mark_output(layer.get_output(0))
    plan = BUILDER.build_serialized_network(net, BUILDER.create_builder_config())
    return "plan" if plan is not None else " | ".join(LOGGER.lines)[:400]


if __name__ == "__main__":
    plain, reshaped = second_transpose(None), second_transpose((3, 2))
    reproduces = "not valid" not in plain and "not valid" in reshaped
    print(f"tensorrt_rtx {trt.__version__}")
    print(f"  builder, no reshape:    {plain}")
    print(f"  builder, reshape [3,2]: {reshaped}")
    print("  specification: both the usage error 'second_transpose is not valid'")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
