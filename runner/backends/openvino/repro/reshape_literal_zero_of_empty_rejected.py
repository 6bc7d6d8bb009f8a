#!/usr/bin/env python3
"""OpenVINO's CPU plugin rejects a valid Reshape of an empty tensor to a shape with a literal 0
(special_zero false) between two Transposes.

Spec: OpenVINO Reshape-1, special_zero false: "0 is interpreted as-is which means that output shape
will contain a zero dimension at the specified location. Input and output tensors are empty in
this case."; "Input tensor volume is equal to output tensor volume" (0 = 0 here).
Engine: a [2, 0] input, Transpose [1, 0] to [0, 2], Reshape to a constant [2, 0, 1], Transpose
[2, 0, 1] is rejected ("Check 'minusOneCount <= 1 && ...'") instead of giving an empty [1, 2, 0]
tensor; without the second Transpose the same Reshape works.

Standalone: calls openvino directly (default configuration, CPU). Exit 0 while the reshape is
rejected, 1 once it gives shape [1, 2, 0].
"""

import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

data = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32)
moved = ops.transpose(data, ops.constant(np.array([1, 0], dtype=np.int64)))
shape = ops.constant(np.array([2, 0, 1], dtype=np.int64))
reshaped = ops.reshape(moved, shape, special_zero=False)
out = ops.transpose(reshaped, ops.constant(np.array([2, 0, 1], dtype=np.int64)))
model = ov.Model([ops.result(out)], [data])
compiled = ov.Core().compile_model(model, "CPU")
try:
    answer = list(compiled([np.zeros((2, 0), dtype=np.float32)]).values())[0]
    print(f"openvino {ov.get_version()}: Transpose [1, 0], Reshape [2, 0, 1], Transpose [2, 0, 1] gives shape {list(answer.shape)}")
    reproduces = list(answer.shape) != [1, 2, 0]
except RuntimeError as e:
    text = " ".join(str(e).split())
    print(f"openvino {ov.get_version()}: Transpose [1, 0], Reshape [2, 0, 1], Transpose [2, 0, 1] is rejected: {text[text.find('Check'):][:160]}")
    reproduces = True
print("Reshape-1 (special_zero false): an empty [2, 0, 1] tensor, transposed to [1, 2, 0]")
sys.exit(0 if reproduces else 1)
