#!/usr/bin/env python3
"""MNN's conversion of a 5-D (or 3-D) NCHW tensor to NHWC permutes the shape it reports but not
the data: the result, read in its own shape, does not hold the input's elements where NHWC puts
them.

Spec: MNN's Python API, `MNN.expr.convert(x, format)`: "convert data_format of `x` to `format`
... Returns: Var, data_format is format" (the docstring of MNN/expr/__init__.py; its example, at
rank 4, returns the NHWC arrangement of the data: [[[[0, 4], [1, 5]], [[2, 6], [3, 7]]]] for
0..7 in [1, 2, 2, 2]). MNN takes the channel as axis 1 at every rank (its NC4HW4 of a 5-D tensor
packs axis 1), so NHWC of [N, C, D, H, W] is [N, D, H, W, C], the shape MNN reports.
Engine: for x = 0..119 in [1, 2, 3, 4, 5], the result has shape [1, 3, 4, 5, 2] but element
[0, 0, 0, 0, :] is [0, 1] (the input's first two elements in memory), not x[0, :, 0, 0, 0] =
[0, 60]; transposing the result back to [1, 2, 3, 4, 5] does not give x.
Adapter: for this reason DHWC (and HWC at ranks other than 4) is not mapped onto MNN's NHWC:
the adapter declares no DHWC and answers HWC at other ranks `unsupported` (README.md).

Standalone: calls MNN directly. Exit 0 while MNN still leaves the data in place, 1 once the
result holds the NHWC arrangement.
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


print(f"MNN {MNN.version()}, Python {platform.python_version()}, CPU: {cpu()} ({platform.machine()})")
x = np.arange(120, dtype=np.float32).reshape(1, 2, 3, 4, 5)
y = F.convert(F.const(x.reshape(-1), [1, 2, 3, 4, 5], F.NCHW), F.NHWC)
got = np.asarray(y.read()).reshape(y.shape)
want = x.transpose(0, 2, 3, 4, 1)
print(f"convert(0..119 in [1, 2, 3, 4, 5], NHWC): shape {list(y.shape)}, element [0, 0, 0, 0, :] = {got[0, 0, 0, 0].tolist()}")
print(f"spec: shape {list(want.shape)}, element [0, 0, 0, 0, :] = {want[0, 0, 0, 0].tolist()}")
sys.exit(1 if list(y.shape) == list(want.shape) and np.array_equal(got, want) else 0)
