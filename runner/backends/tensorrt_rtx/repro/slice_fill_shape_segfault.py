#!/usr/bin/env python3
"""A Slice fill tensor of shape [1, 1] on a rank-1 input kills the builder's process.

Spec: NvInfer.h asks for a scalar fill value; the builder refuses a fill of shape [2] with "should have a fill value that is of rank 0 or is a singleton with the same rank as the input".

Engine: float32 [3], FILL, start -1, size 4, fill of shape [1, 1]: a segmentation fault while building. The build runs in a child process so that the script survives it.
"""

import subprocess
import sys

# The build, in a child process so that this script survives the crash and reports it.
CHILD = """
import tensorrt_rtx as trt

builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
net = builder.create_network(0)
x = net.add_input("x", trt.float32, (3,))
fill = net.add_input("fill", trt.float32, (1, 1))
layer = net.add_slice(x, (-1,), (4,), (1,))
layer.mode = trt.SampleMode.FILL
layer.set_input(4, fill)
net.mark_output(layer.get_output(0))
plan = builder.build_serialized_network(net, builder.create_builder_config())
print("plan" if plan is not None else "rejected")
"""

if __name__ == "__main__":
    import tensorrt_rtx as trt

    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    reproduces = child.returncode < 0
    print(f"tensorrt_rtx {trt.__version__}")
    print(f"  builder:       exit status {child.returncode}; {child.stdout.strip() or 'no output'}")
    print(f"  specification: an API usage error (the fill value is not a scalar), the process alive")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
