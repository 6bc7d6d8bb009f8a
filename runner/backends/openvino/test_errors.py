#!/usr/bin/env python3
"""Each message pattern of errors.py against OpenVINO's own message: a small model that OpenVINO
rejects for the rule, whose message must give the pattern's kind. Run by runner/tests/engines.rs;
exit 0 when every pattern holds."""

import os
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
from errors import PATTERNS  # noqa: E402
from kinds import check  # noqa: E402


def message(build):
    """OpenVINO's message when `build()` makes the nodes of a model (OpenVINO checks each node as
    it is made)."""
    try:
        build()
    except RuntimeError as e:
        return " ".join(str(e).split())
    raise AssertionError("the model was not rejected")


def feed_message(rank, fed):
    """OpenVINO's message when a model whose input 0 has `rank` dynamic dims is fed `fed`."""
    x = data(rank)
    request = ov.Core().compile_model(ov.Model([ops.result(ops.relu(x))], [x]), "CPU").create_infer_request()
    try:
        request.infer([ov.Tensor(fed)])
    except RuntimeError as e:
        return " ".join(str(e).split())
    raise AssertionError(f"a tensor of shape {fed.shape} fed to a rank-{rank} input was not rejected")


def data(rank=2):
    return ops.parameter(ov.PartialShape([-1] * rank), ov.Type.f32)


def const(*values):
    return ops.constant(np.array(values, dtype=np.int64))


CASES = [
    ("shuffle", message(lambda: ops.transpose(data(), const(0, 2))), "invalid_permutation"),
    ("shuffle", message(lambda: ops.transpose(data(), const(0, 1, 2))), "invalid_permutation"),
    ("shuffle", message(lambda: ops.reshape(data(), const(0, -1), special_zero=False)), "indeterminate_wildcard"),
    ("shuffle", message(lambda: ops.reshape(data(), const(-2, 3), special_zero=False)), "invalid_reshape"),
    ("shuffle", message(lambda: ops.reshape(data(), const(-1, -1), special_zero=False)), "invalid_reshape"),
    ("shuffle", message(lambda: ops.reshape(data(), const(1, 1, 0), special_zero=True)), "invalid_reshape"),
    ("shuffle", message(lambda: ops.reshape(data(), ops.constant(np.array([[6]], dtype=np.int64)), special_zero=False)), "invalid_input"),
    ("slice", message(lambda: ops.pad(data(1), const(1), const(1), "constant", ops.constant(np.array([[0.0]], dtype=np.float32)))), "invalid_fill"),
    ("reformat", feed_message(1, np.zeros((2, 4), np.float32)), "invalid_buffer"),
    # an input of another rank, or another op's input: no kind
    ("reformat", feed_message(2, np.zeros((8,), np.float32)), None),
    ("shuffle", feed_message(1, np.zeros((2, 4), np.float32)), None),
]


if __name__ == "__main__":
    sys.exit(check(PATTERNS, CASES))
