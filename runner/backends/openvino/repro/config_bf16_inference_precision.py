#!/usr/bin/env python3
"""On a CPU with bfloat16 arithmetic, OpenVINO's CPU plugin by default runs a bfloat16 → float32
→ bfloat16 computation at bfloat16 precision: subnormal results come back 0, where the model's
float32 Multiply keeps them.

Spec: OpenVINO CPU plugin, INFERENCE_PRECISION_HINT: bf16 is the default on platforms with native
bfloat16 support (a documented accuracy trade-off, not a defect); TensorRT's Scale computes in
float32 and rounds once to the bfloat16 output (clause scale.float.rounding).
Engine: bfloat16 [0x0080, 0x0001, 0x0003, 0xffc1] through Convert(f32) → Multiply(0.5) →
Convert(bf16) gives 0x0000 for 0x0080 · 0.5 by default, 0x0040 with INFERENCE_PRECISION_HINT f32.
Adapter: compiles with INFERENCE_PRECISION_HINT f32 (backend.py, CONFIG), its one setting.

Standalone: calls openvino directly. Exit 0 while the default precision changes the result, 1 once
it does not, 3 when this CPU has no bfloat16 arithmetic (the default is f32 there: nothing to show).
"""

import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

core = ov.Core()
default = core.get_property("CPU", "INFERENCE_PRECISION_HINT")
if default != ov.Type.bf16:
    print(f"openvino {ov.get_version()}: the CPU plugin's default inference precision here is {default}, not bf16")
    sys.exit(3)
data = ops.parameter(ov.PartialShape([-1]), ov.Type.bf16)
weight = ops.parameter(ov.PartialShape([-1]), ov.Type.f32)
product = ops.multiply(ops.convert(data, ov.Type.f32), weight)
model = ov.Model([ops.result(ops.convert(product, ov.Type.bf16))], [data, weight])
bits = np.array([0x0080, 0x0001, 0x0003, 0xFFC1], dtype=np.uint16)
answers = {}
for name, config in (("default", {}), ("f32", {"INFERENCE_PRECISION_HINT": "f32"})):
    x = ov.Tensor(ov.Type.bf16, [4])
    np.asarray(x.data).reshape(-1).view(np.uint16)[:] = bits
    out = core.compile_model(model, "CPU", config)([x, np.array([0.5], dtype=np.float32)])
    answers[name] = [f"0x{v:04x}" for v in np.asarray(list(out.values())[0]).view(np.uint16).tolist()]
    print(f"openvino {ov.get_version()}, {name} precision: {[f'0x{v:04x}' for v in bits]} · 0.5 = {answers[name]}")
print("float32 product rounded once to bfloat16: ['0x0040', '0x0000', '0x0002', '0xffc1']")
sys.exit(0 if answers["default"] != answers["f32"] else 1)
