#!/usr/bin/env python3
"""ISliceLayer FILL on a float32 [3] input with a fill tensor of shape [1, 1] kills the process with
a segmentation fault while the builder builds, where NvInfer.h asks for a scalar fill value (the
builder refuses a fill of shape [2] with "should have a fill value that is of rank 0 or is a
singleton with the same rank as the input").

The build runs in a child process, so that this script survives the crash and reports it."""

import os
import subprocess
import sys

CHILD = """
import tensorrt_rtx as trt
from _common import BUILDER, build
net = BUILDER.create_network(0)
x = net.add_input("x", trt.float32, (3,))
fill = net.add_input("fill", trt.float32, (1, 1))
layer = net.add_slice(x, (-1,), (4,), (1,))
layer.mode = trt.SampleMode.FILL
layer.set_input(4, fill)
net.mark_output(layer.get_output(0))
plan, errors = build(net)
print("plan" if plan is not None else "rejected", errors)
"""

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    from _common import verdict

    child = subprocess.run([sys.executable, "-c", CHILD], cwd=here, capture_output=True, text=True)
    answer = f"exit status {child.returncode}; {child.stdout.strip() or 'no output'}"
    verdict(child.returncode < 0, answer, "an API usage error (the fill value is not a scalar), the process alive")
