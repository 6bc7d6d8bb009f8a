#!/usr/bin/env python3
"""OpenVINO's Pad in REFLECT mode rejects a tensor with an axis of extent 0, even when that axis
gets no padding.

Spec: TensorRT's ISliceLayer (NvInfer.h, kREFLECT) asks only that an input dim of 0 have an
output dim of 0: a [2, 0] input sliced to [4, 0] (start -1 on axis 0) is a valid, empty output
(slice::zero_size::reflect_pads_beside_an_empty_axis). OpenVINO's Pad shape inference
(pad_shape_inference.hpp, the check its message quotes: `begin_lb < dim_lb && end_lb < dim_lb` for
REFLECT) asks each axis's pads to be less than its extent, so an axis of extent 0 admits no pad,
not even 0: the two rules differ.
Engine: Pad REFLECT of a [2, 0] float32 with pads_begin [1, 0] and pads_end [1, 0] is rejected
("REFLECT padding mode requires ..."), where TensorRT's rule gives an empty [4, 0]; the same Pad
of a [2, 1] tensor gives [4, 1].

Standalone: calls openvino directly (default configuration, CPU). Exit 0 while the Pad of the
[2, 0] tensor is rejected, 1 once it gives shape [4, 0].
"""

import sys

import numpy as np
import openvino as ov
import openvino.opset12 as ops


def pad(shape):
    data = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32)
    begin = ops.constant(np.array([1, 0], dtype=np.int64))
    end = ops.constant(np.array([1, 0], dtype=np.int64))
    model = ov.Model([ops.result(ops.pad(data, begin, end, "reflect"))], [data])
    compiled = ov.Core().compile_model(model, "CPU")
    try:
        answer = list(compiled([np.zeros(shape, dtype=np.float32)]).values())[0]
        return f"shape {list(answer.shape)}"
    except RuntimeError as e:
        text = " ".join(str(e).split())
        return f"rejected: {text[text.find('Check'):][:160]}"


empty, one = pad((2, 0)), pad((2, 1))
print(f"openvino {ov.get_version()}: Pad REFLECT [1, 0] / [1, 0] of [2, 0]: {empty}; of [2, 1]: {one}")
print("TensorRT's rule (ISliceLayer kREFLECT): an empty [4, 0] output")
sys.exit(0 if empty.startswith("rejected") and one == "shape [4, 1]" else 1)
