#!/usr/bin/env python3
"""OpenVINO's CPU plugin ignores a run-time Reshape target shape of one element.

Spec: OpenVINO Reshape-1, "Input tensor volume is equal to output tensor volume, where volume is
the product of dimensions."
Engine: a [2, 3] input reshaped to a run-time [7] comes back with shape [6] (no error); to a
run-time [4, 2] it is rejected, as it should be.

Standalone: calls openvino directly (Reshape of a dynamic-shape input to a run-time shape,
default configuration, CPU). Exit 0 while [7] is not rejected, 1 once it is.
"""

import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

data = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32)
shape = ops.parameter(ov.PartialShape([1]), ov.Type.i64)
model = ov.Model([ops.result(ops.reshape(data, shape, special_zero=False))], [data, shape])
compiled = ov.Core().compile_model(model, "CPU")
try:
    answer = list(compiled([np.zeros((2, 3), dtype=np.float32), np.array([7], dtype=np.int64)]).values())[0]
    print(f"openvino {ov.get_version()}: reshape of [2, 3] to [7] gives shape {list(answer.shape)}")
    rejected = False
except RuntimeError as e:
    print(f"openvino {ov.get_version()}: reshape of [2, 3] to [7] is rejected: {str(e).splitlines()[0]}")
    rejected = True
print("Reshape-1: input volume 6 must equal output volume 7, so there is no output")
sys.exit(1 if rejected else 0)
