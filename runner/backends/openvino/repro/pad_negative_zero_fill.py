#!/usr/bin/env python3
"""OpenVINO's CPU Pad writes +0.0 where the constant pad_value is -0.0.

Spec: OpenVINO Pad-12, mode `constant`: the padded elements are pad_value; -0.0 is a value of its
own (sign bit set), and TensorRT's FILL writes the fill value's bits (slice.data.bits-unchanged).
Engine: a constant Pad of float16 or float32 data with pad_value -0.0 (a constant, or a run-time
scalar with static or dynamic data dims) returns +0.0 (0x0000) in every padded element; the
copied interior is unchanged.
Adapter: Slice's FILL mode is a constant Pad with the fill as pad_value, then a Slice.

Standalone: calls openvino directly, prints the facts it ran on. Exit 0 while the fill comes back
as +0.0, 1 once it keeps its sign.
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


print(f"openvino {ov.get_version()} on {platform.system()} {platform.machine()}, {cpu_model()}")
lost = []
for name, ov_type, np_type in [("float16", ov.Type.f16, np.float16), ("float32", ov.Type.f32, np.float32)]:
    data = ops.parameter(ov.PartialShape([-1]), ov_type)
    value = ops.parameter(ov.PartialShape([]), ov_type)
    pads = ops.constant(np.array([1], dtype=np.int64))
    model = ov.Model([ops.result(ops.pad(data, pads, pads, "constant", value))], [data, value])
    out = list(ov.Core().compile_model(model, "CPU")([np.array([1, 2], np_type), np.array(-0.0, np_type)]).values())[0]
    print(f"{name}: Pad([1, 2], 1, 1, constant, -0.0) = {out.tolist()}, sign bits {np.signbit(out).tolist()}")
    if not (np.signbit(out[0]) and np.signbit(out[-1])):
        lost.append(name)
sys.exit(0 if lost else 1)
