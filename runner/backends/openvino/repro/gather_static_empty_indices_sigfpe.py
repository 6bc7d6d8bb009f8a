#!/usr/bin/env python3
"""OpenVINO's CPU plugin dies of SIGFPE compiling a Gather with empty indices of a static shape.

Spec: OpenVINO Gather-8: the output shape is data.shape[:axis] + indices.shape + data.shape[axis+1:],
so indices of shape [0] give an empty output; nothing in the spec rejects them.
Engine: data of static shape [3] and indices of static shape [0] kill the process with SIGFPE
(an integer division by zero) while the model compiles, for every data type tried; the same
model with dynamic indices or dynamic data compiles and returns an empty tensor.
Adapter: as_strided with a size entry of 0 is a Gather of empty indices; the adapter declares
every dim dynamic, so it does not meet this.

Standalone: runs the engine in a child process (it is killed) and checks the signal. Exit 0
while the child dies of SIGFPE, 1 once it compiles and returns the empty tensor.
"""

import platform
import signal
import subprocess
import sys

CHILD = r"""
import numpy as np
import openvino as ov
import openvino.opset13 as ops

data = ops.parameter(ov.PartialShape([3]), ov.Type.f32)
indices = ops.parameter(ov.PartialShape([0]), ov.Type.i64)
model = ov.Model([ops.result(ops.gather(data, indices, ops.constant(np.int64(0))))], [data, indices])
compiled = ov.Core().compile_model(model, "CPU")
out = list(compiled([np.arange(3, dtype=np.float32), np.zeros([0], dtype=np.int64)]).values())[0]
print(f"openvino {ov.get_version()}: Gather of [3] with indices [0] = {out.tolist()}, shape {list(out.shape)}")
"""

child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
print(child.stdout + child.stderr, end="")
print(f"{platform.system()} {platform.machine()}: the child's exit status is {child.returncode}")
if child.returncode == -signal.SIGFPE:
    print("the process was killed by SIGFPE")
    sys.exit(0)
sys.exit(1 if child.returncode == 0 else 2)
