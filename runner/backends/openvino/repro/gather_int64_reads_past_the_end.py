#!/usr/bin/env python3
"""OpenVINO's CPU Gather on int64 data returns memory past the end for an index out of range.

Spec: OpenVINO Gather-8: an index outside [-d, d) gives 0 in the output (the documented reason
why an index of UINT32_MAX is safe, ov::pass::ConvertNmsGatherPathToUnsigned); float16 and
float32 data do give 0.
Engine: with dynamic shapes, int64 (and int32) data return whatever lies past the buffer for
an index >= d, the index d itself included: the values change from run to run, an
out-of-bounds read.
Adapter: as_strided is a Gather of the view's flat indices from the reshaped input; a view
that reaches past the input's end gives such indices.

Standalone: calls openvino directly, prints the facts it ran on. Exit 0 while some index past
the end gives a non-zero int64, 1 once every one gives 0.
"""

import platform
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def gather(ov_type):
    data = ops.parameter(ov.PartialShape([-1]), ov_type)
    indices = ops.parameter(ov.PartialShape([-1]), ov.Type.i64)
    model = ov.Model([ops.result(ops.gather(data, indices, ops.constant(np.int64(0))))], [data, indices])
    return ov.Core().compile_model(model, "CPU")


print(f"openvino {ov.get_version()} on {platform.system()} {platform.machine()}, {cpu_model()}")
found = {}
for name, ov_type, np_type in [("int64", ov.Type.i64, np.int64), ("float16", ov.Type.f16, np.float16)]:
    compiled = gather(ov_type)
    past = []
    for repeat in range(4):
        for d in range(1, 9):
            x = np.arange(1, d + 1).astype(np_type)
            # d is the first index past the end; the spec gives 0 for every one of them.
            out = list(compiled([x, np.arange(d, d + 6, dtype=np.int64)]).values())[0]
            past += out.tolist()
    nonzero = [v for v in past if v != 0]
    found[name] = nonzero
    print(f"{name}: {len(past)} reads past the end, {len(nonzero)} non-zero, e.g. {nonzero[:6]}")
sys.exit(0 if found["int64"] else 1)
