#!/usr/bin/env python3
"""Each message pattern of errors.py against ONNX Runtime's own message: a one-node graph that the
engine rejects for the rule, whose message must give the pattern's kind (and a message of another
rule must not). Run by runner/tests/engines.rs; exit 0 when every pattern holds."""

import os
import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as TP
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
from errors import PATTERNS  # noqa: E402
from kinds import check  # noqa: E402

OPTIONS = ort.SessionOptions()
OPTIONS.log_severity_level = 4


def message(op, inputs, consts=(), node_name="", ranked=True, **attrs):
    """ONNX Runtime's message for a one-node graph `op` fed `inputs` (name -> array) and constant
    initializers `consts` (name -> array); the inputs are declared of their rank, or of none."""
    names = list(inputs) + [n for n, _ in consts]
    infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), [None] * a.ndim if ranked else None) for n, a in inputs.items()]
    inits = [helper.make_tensor(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape, a.reshape(-1).tolist()) for n, a in consts]
    node = helper.make_node(op, names, ["y"], name=node_name, **attrs)
    graph = helper.make_graph([node], "g", infos, [helper.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    try:
        session = ort.InferenceSession(model.SerializeToString(), OPTIONS, providers=["CPUExecutionProvider"])
        session.run(None, inputs)
    except Exception as e:
        return " ".join(str(e).split())
    raise AssertionError(f"{op} {attrs} was not rejected")


def rank_message(declared, fed):
    """ONNX Runtime's message for an input `v1` declared of rank `declared` and fed an array
    `fed` (an Identity graph)."""
    info = helper.make_tensor_value_info("v1", helper.np_dtype_to_tensor_dtype(fed.dtype), [None] * declared)
    graph = helper.make_graph([helper.make_node("Identity", ["v1"], ["y"])], "g", [info], [helper.make_tensor_value_info("y", TP.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    session = ort.InferenceSession(model.SerializeToString(), OPTIONS, providers=["CPUExecutionProvider"])
    try:
        session.run(None, {"v1": fed})
    except Exception as e:
        return " ".join(str(e).split())
    raise AssertionError(f"a rank-{fed.ndim} feed of a rank-{declared} input was not rejected")


x23 = {"x": np.zeros((2, 3), np.float32)}
x03 = {"x": np.zeros((0, 3), np.float32)}
i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
CASES = [
    # (op of the case, message, expected kind)
    ("shuffle", message("Transpose", x23, perm=[0, 2]), "invalid_permutation"),
    ("shuffle", message("Transpose", x23, perm=[0, 0]), "invalid_permutation"),
    # at run time, where the rank was not known before (the shuffle's second Transpose)
    ("shuffle", message("Transpose", x23, ranked=False, perm=[0, 2, 1]), "invalid_permutation"),
    ("shuffle", message("Reshape", x03, [("s", i64(0, -1))], allowzero=1), "indeterminate_wildcard"),
    ("shuffle", message("Reshape", x23, [("s", i64(-2, 3))]), "invalid_reshape"),
    ("shuffle", message("Reshape", x23, [("s", i64(-1, -1))]), "invalid_reshape"),
    ("shuffle", message("Reshape", x23, [("s", i64(1, 1, 0))]), "invalid_reshape"),
    ("shuffle", message("Reshape", dict(x23, s=i64(4, 2))), "volume_mismatch"),
    ("reformat", message("Reshape", dict(x23, s=i64(4, 2)), node_name="buffer"), "invalid_buffer"),
    ("reformat", rank_message(1, np.zeros((2, 4), np.float32)), "invalid_buffer"),
    # another input's rank, or another op's input: no kind
    ("reformat", rank_message(2, np.zeros((8,), np.float32)), None),
    ("shuffle", rank_message(1, np.zeros((2, 4), np.float32)), None),
    # a -1 beside a zero product, and one that does not divide: the same check, no kind
    ("shuffle", message("Reshape", dict(x03, s=i64(0, -1))), None),
    ("shuffle", message("Reshape", dict(x23, s=i64(4, -1))), None),
    ("slice", message("Slice", dict(x23, a=i64(0, 0), b=i64(1, 1), c=i64(0, 0))), "invalid_axes"),
    ("slice", message("Slice", dict(x23, a=i64(0), b=i64(1), c=i64(5))), "invalid_axes"),
    ("slice", message("Pad", dict(x03, p=i64(1, 0, 1, 0)), mode="edge"), "empty_dimension"),
    ("slice", message("Pad", dict(x03, p=i64(1, 0, 1, 0)), mode="reflect"), "empty_dimension"),
    ("as_strided", message("Gather", dict(x23, i=i64(2)), axis=0), "out_of_bounds"),
    ("slice", message("Slice", dict(x23, a=i64(0), b=i64(1), c=i64(0), d=i64(0))), None),
]


if __name__ == "__main__":
    sys.exit(check(PATTERNS, CASES))
