#!/usr/bin/env python3
"""OpenVINO's CPU Pad turns an f8e4m3 -0.0 into +0.0, on an AMD EPYC (Zen 4).

Spec: OpenVINO Pad-12: the output holds the input's elements unchanged, with the padding
around them (`edge` and `symmetric` copy border elements); TensorRT's Slice and the suite's
reformat pack move bits unchanged (docs/semantics.md, `*.data.bits-unchanged`).
Engine: on the machine named below, Pad in every mode (constant, edge, reflect, symmetric)
returns 0x00 for every 0x80 (-0.0) of an f8e4m3 tensor, the copied interior included; Slice,
Transpose, Reshape, Concat, Tile and a Convert pair keep 0x80. Capping the ISA with
ONEDNN_MAX_CPU_ISA (SSE41 up to AVX512_CORE_BF16) changes nothing there. On an Intel Xeon with
AMX the same wheel keeps 0x80: the known-failures entries carry `if cpu_vendor ==
AuthenticAMD`, the one fact known to separate the two.
Adapter: Slice's CLAMP/FILL/REFLECT modes and the vector formats' channel padding are Pad.

Standalone: calls openvino directly, prints the facts it ran on. Exit 0 while -0 becomes +0;
3 when it keeps -0 on a CPU that is not AMD's (the entries' condition does not hold there);
1 when it keeps -0 on an AMD CPU (the engine changed: update the entries).
"""

import platform
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops


def cpu():
    facts = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f.read().split("\n\n")[0].splitlines():
                key, _, value = line.partition(":")
                facts[key.strip()] = value.strip()
    except OSError:
        pass
    return facts.get("vendor_id", "unknown"), facts.get("model name", "unknown")


x = np.array([0x80, 0x38, 0x80, 0x00], dtype=np.uint8)  # f8e4m3: -0, 1.0, -0, +0
core = ov.Core()
lost = []
for mode in ["constant", "edge", "reflect", "symmetric"]:
    data = ops.parameter(ov.PartialShape([-1]), ov.Type.f8e4m3)
    pads = ops.constant(np.array([1], dtype=np.int64))
    model = ov.Model([ops.result(ops.pad(data, pads, pads, mode))], [data])
    request = core.compile_model(model, "CPU").create_infer_request()
    tensor = ov.Tensor(ov.Type.f8e4m3, ov.Shape([4]))
    np.asarray(tensor.data).view(np.uint8)[:] = x
    request.infer([tensor])
    out = np.asarray(request.get_output_tensor(0).data).view(np.uint8)
    print(f"Pad {mode:9}: input {[hex(v) for v in x]} -> {[hex(v) for v in out]}")
    # The interior, positions 1..4, is the input unchanged by Pad's definition.
    if list(out[1:5]) != list(x):
        lost.append(mode)

vendor, model_name = cpu()
print(f"openvino {ov.get_version()} on {platform.system()} {platform.machine()}, {vendor} {model_name}")
print(f"CPU plugin capabilities: {core.get_property('CPU', 'OPTIMIZATION_CAPABILITIES')}")
if lost:
    print(f"-0.0 became +0.0 in modes {lost}")
    sys.exit(0)
print("-0.0 kept in every mode")
sys.exit(1 if vendor == "AuthenticAMD" else 3)
