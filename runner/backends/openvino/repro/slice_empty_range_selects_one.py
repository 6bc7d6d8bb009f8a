#!/usr/bin/env python3
"""OpenVINO's Slice returns one element for an empty range that starts before the front.

Spec: OpenVINO Slice-8, "The rules follow python language slicing data[start:stop:step]"; in
Python, x[-100:-100:-3] of 3 elements is empty (start equals stop).
Engine: [x[0]], one element, both from shape inference on constants and from the CPU kernel with
run-time values.
Adapter: an axis of size 0 is written as the range [0, 0) with step 1 (common/convert.py), which
TensorRT's rule allows (a size-0 axis reads nothing whatever its start and stride).

Standalone: calls openvino directly. Exit 0 while the range gives an element, 1 once it is empty.
"""

import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

data = ops.parameter(ov.PartialShape([-1]), ov.Type.f32)
start, stop, step = (ops.parameter(ov.PartialShape([1]), ov.Type.i64) for _ in range(3))
axes = ops.constant(np.array([0], dtype=np.int64))
model = ov.Model([ops.result(ops.slice(data, start, stop, step, axes))], [data, start, stop, step])
compiled = ov.Core().compile_model(model, "CPU")
x = np.arange(3, dtype=np.float32)
answer = list(compiled([x] + [np.array([v], dtype=np.int64) for v in (-100, -100, -3)]).values())[0]
print(f"openvino {ov.get_version()}: x[-100:-100:-3] = {answer.tolist()}")
print(f"Python slicing:          x[-100:-100:-3] = {x[-100:-100:-3].tolist()}")
sys.exit(0 if answer.size else 1)
