#!/usr/bin/env python3
"""TensorRT-RTX builds a CHW4 network input of bfloat16, a type its own TensorFormat binds out.

Spec: TensorRT-RTX's TensorFormat.CHW4 (the binding's documentation of the enum, as installed): "Four wide channel vectorized row major format. This format is bound to INT8."; a tensor whose type its allowed formats do not take is the usage error "unsupported by tensor's allowed TensorFormats" (float32 in CHW4 gets it).

Engine: a bfloat16 [1, 4, 2, 2] network input in CHW4, an identity to a LINEAR output: a plan, no error (float32 in CHW4 is refused with the usage error).
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


def unpack(dtype):
    LOGGER.lines.clear()
    net = BUILDER.create_network(0)
    x = net.add_input("x", dtype, (1, 4, 2, 2))
    x.allowed_formats = 1 << int(trt.TensorFormat.CHW4)
    y = net.add_identity(x).get_output(0)
    net.mark_output(y)
    y.allowed_formats = 1 << int(trt.TensorFormat.LINEAR)
    plan = BUILDER.build_serialized_network(net, BUILDER.create_builder_config())
    return "plan" if plan is not None else f"rejected: {LOGGER.lines[-1][:200] if LOGGER.lines else 'nothing logged'}"


if __name__ == "__main__":
    doc = " ".join(trt.TensorFormat.__doc__.split())
    bound = doc[doc.find("CHW4 :"):][:120]
    answers = {"bfloat16": unpack(trt.bfloat16), "float32": unpack(trt.float32)}
    reproduces = answers["bfloat16"] == "plan" and "bound to INT8" in bound
    print(f"tensorrt_rtx {trt.__version__}")
    print(f"  documentation: {bound}")
    print(f"  builder:       " + "; ".join(f"CHW4 {k}: {v}" for k, v in answers.items()))
    print(f"  specification: bfloat16 in CHW4 refused as float32 is (the format is bound to INT8)")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
