#!/usr/bin/env python3
"""OpenVINO's CPU plugin computes one Multiply with the kernel of another Multiply of the same
model when its run-time kernel cache is on (the default): the second gives wrong values.

Spec: OpenVINO Multiply-1, "element-wise multiplication with two given tensors applying
broadcasting rule specified in the auto_broadcast attribute" (numpy); a model of two independent
Multiplies computes each as it would alone, and a cache setting is documented to change how fast
a model runs, not what it computes.
Engine: a model of two independent subgraphs, a [2, 1, 1, 2] x [2, 1, 1, 1] Multiply and then a
[1, 1, 1, 1, 1, 2, 1, 2] x [2, 1, 1] Multiply (dynamic dims), returns the second product's second
channel wrong (the first channel's values again, zeros or other memory, from run to run); each
alone, the two in the other order, or the same model with CPU_RUNTIME_CACHE_CAPACITY 0 give the
products.
Adapter: a batch of cases is one model of independent subgraphs (backend.py, run_batch); the
Scale cases scale::mutants::channel_axis_minus_rank and scale::rank::rank8_input_channel (float16,
bfloat16) are such a pair, so the adapter compiles every model with CPU_RUNTIME_CACHE_CAPACITY 0
(backend.py, CONFIG).

Standalone: calls openvino directly, both configurations at f32 precision. Exit 0 while the default configuration gives a wrong
product, 1 once it gives both right.
"""

import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

SHAPES = [([2, 1, 1, 2], [2, 1, 1, 1]), ([1, 1, 1, 1, 1, 2, 1, 2], [2, 1, 1])]


def products(config):
    """The two subgraphs' products, and the numpy ones, from one model compiled with `config`."""
    params, results, feeds = [], [], []
    for x_shape, w_shape in SHAPES:
        x = ops.parameter(ov.PartialShape([-1] * len(x_shape)), ov.Type.f32)
        w = ops.parameter(ov.PartialShape([-1] * len(w_shape)), ov.Type.f32)
        params += [x, w]
        results.append(ops.result(ops.multiply(x, w)))
        feeds += [np.arange(1, 5, dtype=np.float32).reshape(x_shape), np.array([2, 3], dtype=np.float32).reshape(w_shape)]
    request = ov.Core().compile_model(ov.Model(results, params), "CPU", config).create_infer_request()
    request.infer(feeds)
    got = [request.get_output_tensor(i).data.reshape(-1).tolist() for i in range(len(SHAPES))]
    want = [(feeds[2 * i] * feeds[2 * i + 1]).reshape(-1).tolist() for i in range(len(SHAPES))]
    return got, want


print(f"openvino {ov.get_version()}")
wrong = False
# f32 precision in both (the adapter's setting; values of 1 to 12 are exact at any precision).
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
for name, config in [("default", F32), ("CPU_RUNTIME_CACHE_CAPACITY 0", dict(F32, CPU_RUNTIME_CACHE_CAPACITY="0"))]:
    got, want = products(config)
    for (x_shape, w_shape), g, w in zip(SHAPES, got, want):
        print(f"{name}: {x_shape} x {w_shape} gives {g}, numpy {w}")
        if name == "default" and g != w:
            wrong = True
sys.exit(0 if wrong else 1)
