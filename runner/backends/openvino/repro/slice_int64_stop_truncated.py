#!/usr/bin/env python3
"""OpenVINO's CPU plugin keeps only the low 32 bits of a run-time int64 Slice start or stop.

Spec: OpenVINO Slice-8: start and stop are 1-D tensors of type T_IND (int32 or int64); "The rules
follow python language slicing data[start:stop:step]", and "A value larger than the size of a
dimension is silently clamped".
Engine: on 10 elements, [0 : 2**32 + 3 : 1] gives 3 elements (2**32 + 3 read as 3) and
[9 : INT64_MIN : -1] gives 9 elements, 9 down to 1 (INT64_MIN read as 0); Python gives all 10.
Adapter: a downward slice that runs to the front ends at -(d + 1), not INT64_MIN
(common/convert.py); a start or stop beyond 32 bits that a case gives still meets this.

Standalone: calls openvino directly (a Slice with run-time start, stop and step, compiled on CPU).
Exit 0 while either slice is still cut short, 1 once both follow Python.
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
x = np.arange(10, dtype=np.float32)
reproduces = False
for a, b, s in ((0, (1 << 32) + 3, 1), (9, -(1 << 63), -1)):
    answer = list(compiled([x] + [np.array([v], dtype=np.int64) for v in (a, b, s)]).values())[0]
    python = x[a:b:s]
    print(f"openvino {ov.get_version()}: x[{a}:{b}:{s}] = {answer.astype(int).tolist()}")
    print(f"Python slicing:          x[{a}:{b}:{s}] = {python.astype(int).tolist()}")
    reproduces |= not np.array_equal(answer, python)
sys.exit(0 if reproduces else 1)
