#!/usr/bin/env python3
"""IShuffleLayer: a second transpose that is not a permutation of the reshape result's axes
([2, 0] on a rank-2 tensor) kills the process with a segmentation fault in
build_serialized_network (asking the output's shape first ends in an internal assertion,
"Assertion src.d[i].value() failed"), where NvInfer.h's setSecondTranspose asks for a permutation
and an invalid first transpose is a logged API usage error.

The build runs in a child process, so that this script survives the crash and reports it."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import tensorrt_rtx as trt
from _common import BUILDER, build
net = BUILDER.create_network(0)
x = net.add_input("x", trt.float16, (2, 3))
layer = net.add_shuffle(x)
layer.second_transpose = trt.Permutation([2, 0])
net.mark_output(layer.get_output(0))
plan, errors = build(net)
print("plan" if plan is not None else "rejected", errors)
"""

if __name__ == "__main__":
    from _common import verdict

    child = subprocess.run([sys.executable, "-c", CHILD], cwd=os.path.dirname(os.path.abspath(__file__)),
                           capture_output=True, text=True)
    answer = f"exit status {child.returncode}; {child.stdout.strip() or 'no output'}"
    verdict(child.returncode < 0, answer, "an API usage error (the second transpose is not a permutation of [0, 1]), the process alive")
