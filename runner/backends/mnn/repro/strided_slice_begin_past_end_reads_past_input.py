#!/usr/bin/env python3
"""MNN's StridedSlice with a begin at or past the end of the axis and a stride above 1 answers one
element, read from past the end of its input's buffer.

Spec: MNN's Python API, `MNN.expr.strided_slice(x, begin, end, strides, begin_mask, end_mask,
...)`: TensorFlow's StridedSlice, which clamps a positive-stride begin and end to [0, d]: of
[1, 2, 3, 4, 5], begin 5, end 13 is the empty slice [5, 5), whatever the stride. MNN itself
gives the empty slice for stride 1.
Engine: for stride 2 it answers shape [1], holding 4 bytes from past the 5-element input (heap
contents: 0x0000000e, 0x00000012 and 0x0000006f seen, varying from one process to the next), on
MNN 3.6.1, AMD EPYC. So a reply of such a case differs between two runs of the same requests.
Adapter: none (STRICT_BOUNDS with start >= d and stride >= 2 reaches this call as it is:
slice::sweep::modes::mode_stride_start__strict_bounds__2__{5,8}).

Standalone: calls MNN directly. Exit 0 while MNN still answers an element for stride 2, 1 once it
answers the empty slice as it does for stride 1.
"""

import platform
import sys

import numpy as np
import MNN
import MNN.expr as F


def cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ints(values):
    return F.const(np.asarray(values, dtype=np.int32), [len(values)], F.NCHW, F.int)


def strided(stride):
    x = F.const(np.arange(1, 6, dtype=np.float32), [5], F.NCHW, F.float)
    y = F.strided_slice(x, ints([5]), ints([13]), ints([stride]), 0, 0)
    shape = list(y.shape)
    bits = [f"0x{v:08x}" for v in np.asarray(y.read()).view(np.uint32).tolist()] if 0 not in shape else []
    return shape, bits


print(f"MNN {MNN.version()}, Python {platform.python_version()}, CPU: {cpu()} ({platform.machine()})")
one, two = strided(1), strided(2)
print(f"[1..5] begin 5 end 13 stride 1: shape {one[0]}, bits {one[1]}")
print(f"[1..5] begin 5 end 13 stride 2: shape {two[0]}, bits {two[1]} (the input's bits: 0x3f800000 .. 0x40a00000)")
print("spec: shape [0] for both")
sys.exit(0 if two[0] == [1] and one[0] == [0] else 1)
