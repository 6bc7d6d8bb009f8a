#!/usr/bin/env python3
"""An IShuffleLayer second transpose with an entry past the rank kills the builder's process.

Spec: NvInfer.h setSecondTranspose takes a permutation of the reshape result's axes; the builder reports a wrong one as "IShuffleLayer `second_transpose` is not valid", a usage error.

Engine: float16 [2, 3] with second transpose [2, 0]: a segmentation fault in build_serialized_network (asking the output's shape first ends in "Assertion src.d[i].value() failed"). The build runs in a child process so that the script survives it.
"""

import subprocess
import sys

# The build, in a child process so that this script survives the crash and reports it.
CHILD = """
import tensorrt_rtx as trt

builder = trt.Builder(trt.Logger(trt.Logger.ERROR))
net = builder.create_network(0)
x = net.add_input("x", trt.float16, (2, 3))
layer = net.add_shuffle(x)
layer.second_transpose = trt.Permutation([2, 0])
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
    print(f"  specification: an API usage error (the second transpose is not a permutation of [0, 1]), the process alive")
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
