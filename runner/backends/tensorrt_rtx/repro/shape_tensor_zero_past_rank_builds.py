#!/usr/bin/env python3
"""A zero placeholder past the input's rank, given through a shape tensor, builds.

Spec: NvInfer.h IShuffleLayer: with zero_is_placeholder a 0 copies the input dim at its position; the builder refuses a 0 with no input dim there as "has zero placeholder that refers to invalid axis", a usage error, when the dims are reshape_dims.

Engine: an empty float32 input [0] reshaped to [1, 0] (and [2, 0] to [2, 0, 0]) through a constant shape tensor on input 1 builds a plan with output [1, 0] ([2, 0, 0]); the same dims as reshape_dims are the usage error. A non-empty input is refused either way (a volume error).
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


def reshape(shape, dims, tensor):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    layer = net.add_shuffle(net.add_input("x", trt.float32, shape))
    if tensor:
        layer.set_input(1, net.add_constant((len(dims),), np.array(dims, dtype=np.int64)).get_output(0))
    else:
        layer.reshape_dims = trt.Dims(dims)
    net.mark_output(layer.get_output(0))
    plan = BUILDER.build_serialized_network(net, BUILDER.create_builder_config())
    if plan is not None:
        return f"plan, output {list(net.get_output(0).shape)}"
    return f"rejected: {LOGGER.lines[0][:200] if LOGGER.lines else 'nothing logged'}"


if __name__ == "__main__":
    answers = {f"{list(s)} -> {d} as {'shape tensor' if t else 'reshape_dims'}": reshape(s, d, t)
               for s, d in [((0,), [1, 0]), ((2, 0), [2, 0, 0])] for t in (True, False)}
    built = [k for k, v in answers.items() if "shape tensor" in k and v.startswith("plan")]
    print(f"tensorrt_rtx {trt.__version__}")
    for k, v in answers.items():
        print(f"  builder, {k}: {v}")
    print("  specification: the usage error 'has zero placeholder that refers to invalid axis' either way")
    reproduces = bool(built)
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
