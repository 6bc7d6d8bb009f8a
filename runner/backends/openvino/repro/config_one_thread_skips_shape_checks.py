#!/usr/bin/env python3
"""With INFERENCE_NUM_THREADS 1, OpenVINO's CPU plugin skips the run-time shape check of Reshape
that its default configuration makes, and returns a tensor of a made-up shape (or crashes).

Spec: OpenVINO Reshape-1, "Input tensor volume is equal to output tensor volume, where volume is
the product of dimensions."; a configuration setting is documented to change how fast a model
runs, not what it computes.
Engine: the same model (Reshape of a dynamic [2, 3] input to a run-time [4, 2]) is rejected with
the default configuration and answered (shape [0, 0] here) with INFERENCE_NUM_THREADS 1.
Adapter: runs the plugin in its default configuration (backend.py, CONFIG).

Standalone: calls openvino directly, each configuration in a child process (the one-thread run
may crash). Exit 0 while the one-thread run does not reject the reshape, 1 once it does.
"""

import subprocess
import sys

CHILD = r"""
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops
config = {"INFERENCE_NUM_THREADS": 1} if sys.argv[1] == "one-thread" else {}
data = ops.parameter(ov.PartialShape([-1, -1]), ov.Type.f32)
shape = ops.parameter(ov.PartialShape([2]), ov.Type.i64)
model = ov.Model([ops.result(ops.reshape(data, shape, special_zero=False))], [data, shape])
compiled = ov.Core().compile_model(model, "CPU", config)
try:
    out = list(compiled([np.zeros((2, 3), dtype=np.float32), np.array([4, 2], dtype=np.int64)]).values())[0]
    print(f"answered with shape {list(out.shape)}")
except RuntimeError as e:
    print("rejected: " + str(e).splitlines()[0])
"""

answers = {}
for config in ("default", "one-thread"):
    run = subprocess.run([sys.executable, "-c", CHILD, config], capture_output=True, text=True, timeout=300)
    answers[config] = run.stdout.strip() or f"crashed (exit status {run.returncode})"
    print(f"openvino, {config} configuration: reshape of [2, 3] to [4, 2] {answers[config]}")
print("Reshape-1: input volume 6 must equal output volume 8, so there is no output")
sys.exit(1 if answers["one-thread"].startswith("rejected") else 0)
