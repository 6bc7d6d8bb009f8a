#!/usr/bin/env python3
"""ONNX Runtime's Pad refuses a reflect pad of more than d - 1 elements, which ONNX's own Pad
example computes.

Spec: ONNX Pad (opset 21), "Example 2 (`reflect` mode)": data [[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]],
pads [0, 2, 0, 0], mode 'reflect' gives [[1.0, 1.2, 1.0, 1.2], [2.3, 3.4, 2.3, 3.4], [4.5, 5.7, 4.5, 5.7]]
(a pre-pad of 2 on an axis of 2); onnx.reference computes it.
Engine: "Pad reflect: pre-pad (2) exceeds maximum allowed (1) for axis 1".
Adapter: writes such a pad as reflect Pads of at most d - 1 each (common/convert.py, pad_stages).

Standalone: calls onnxruntime directly. Exit 0 while ONNX Runtime still refuses the example, 1 once
it computes the spec's output.
"""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

data = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], dtype=np.float32)
spec = np.array([[1.0, 1.2, 1.0, 1.2], [2.3, 3.4, 2.3, 3.4], [4.5, 5.7, 4.5, 5.7]], dtype=np.float32)
graph = helper.make_graph(
    [helper.make_node("Pad", ["data", "pads"], ["output"], mode="reflect")],
    "pad_example_2",
    [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3, 2])],
    [helper.make_tensor_value_info("output", TensorProto.FLOAT, [3, 4])],
    [helper.make_tensor("pads", TensorProto.INT64, [4], [0, 2, 0, 0])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
options = ort.SessionOptions()
options.log_severity_level = 4
try:
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    answer = session.run(None, {"data": data})[0]
except Exception as e:  # the engine's refusal
    answer = " ".join(str(e).split())
print(f"onnxruntime {ort.__version__}: {answer}")
print(f"ONNX Pad example 2:  {spec.tolist()}")
sys.exit(1 if isinstance(answer, np.ndarray) and np.array_equal(answer, spec) else 0)
