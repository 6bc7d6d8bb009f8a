#!/usr/bin/env python3
"""ONNX Runtime's Pad in wrap mode on an axis of length 0 fails with "Unexpected mode of 3", a
message that names no rule.

Spec: ONNX Pad (opset 19 and later) has the modes constant, reflect, edge and wrap; ONNX Runtime
implements wrap (it pads any non-empty axis) and refuses an edge or reflect pad of an empty axis
with a message naming the rule ("Cannot use 'edge' mode to pad dimension with a value of 0").
Engine: the same pad of the empty axis in wrap mode (mode 3 of its kernel) fails with "Unexpected
mode of 3": the kernel's check of empty axes (PadBase::HandleDimValueZero) has cases for constant,
edge and reflect only, and wrap falls through to its default branch.
Adapter: WRAP is a wrap Pad then a Slice; the case is rejected as it should be, but the message
gives no error kind (the trial is `rejected_unclassified`, not failed, so it has no entry).

Standalone: calls onnxruntime directly. Exit 0 while wrap gives "Unexpected mode", 1 once the
message names the empty axis.
"""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def pad(mode):
    graph = helper.make_graph(
        [helper.make_node("Pad", ["data", "pads"], ["output"], mode=mode)],
        f"pad_{mode}",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [None, None]),
         helper.make_tensor_value_info("pads", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    options = ort.SessionOptions()
    options.log_severity_level = 4
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    try:
        out = session.run(None, {"data": np.zeros([2, 0], dtype=np.float32), "pads": np.array([0, 1, 0, 1], dtype=np.int64)})[0]
        return f"output of shape {list(out.shape)}"
    except Exception as e:
        return " ".join(str(e).split())


answers = {mode: pad(mode) for mode in ("edge", "reflect", "wrap")}
print(f"onnxruntime {ort.__version__}: Pad of a [2, 0] tensor by 1 on each side of axis 1")
for mode, answer in answers.items():
    print(f"  {mode:8} {answer}")
sys.exit(0 if "Unexpected mode of 3" in answers["wrap"] else 1)
