#!/usr/bin/env python3
"""OpenVINO's CPU plugin corrupts the heap on a bfloat16 → float32 → bfloat16 model run at its default bfloat16 inference precision, when each input tensor is dropped after its request.

Spec: OpenVINO Python API, InferRequest.infer(inputs): runs the model on the given tensors and returns the results; an ov.Tensor made from a type and shape owns its memory, and nothing documents that an input must outlive the call. A crash is no answer.

Engine: Parameter(bf16) → Convert(f32) → Convert(bf16) → Result, compiled on CPU in the default configuration (INFERENCE_PRECISION_HINT bf16 on a CPU with bfloat16 arithmetic), 50 requests, each with a fresh [1, 1, 2, 2] tensor dropped after infer: the process aborts in glibc ("malloc(): unaligned fastbin chunk detected"). With every input tensor kept alive, or with INFERENCE_PRECISION_HINT f32 (the adapter's setting), 3000 requests run. A run of the adapter before it set f32 once aborted the same way ("malloc_consolidate(): unaligned fastbin chunk detected") on scale::uniform::uniform_empty_lists_are_identity::int8; its bfloat16 sibling, sent a little earlier, is this model (no weights: the Convert pair alone), and glibc notices a corrupted heap only at a later allocation. With MALLOC_PERTURB_=165 the adapter in the default configuration aborts at the bfloat16 case itself, every run.

Standalone: calls openvino directly; the requests run in child processes so that the script survives the abort. Exit 0 while the default configuration aborts and f32 does not, 1 once it no longer aborts, 3 on a CPU whose default inference precision is not bf16 (the defect cannot be shown there).
"""

import subprocess
import sys

CHILD = """
import sys
import numpy as np
import openvino as ov
import openvino.opset13 as ops

config = {} if sys.argv[1] == "default" else {"INFERENCE_PRECISION_HINT": sys.argv[1]}
x = ops.parameter(ov.PartialShape([-1, -1, -1, -1]), ov.Type.bf16)
model = ov.Model([ops.result(ops.convert(ops.convert(x, ov.Type.f32), ov.Type.bf16))], [x])
request = ov.Core().compile_model(model, "CPU", config).create_infer_request()
data = np.array([3, -3, 64, -64], dtype=np.float32).view(np.uint32) >> 16  # bfloat16 bits
wrong = 0
for _ in range(int(sys.argv[2])):
    t = ov.Tensor(ov.Type.bf16, [1, 1, 2, 2])
    np.asarray(t.data).reshape(-1).view(np.uint16)[:4] = data
    request.infer([t])
    del t
    out = np.asarray(request.get_output_tensor(0).data).reshape(-1).view(np.uint16)[:4]
    wrong += not np.array_equal(out, data)
print(f"{wrong} wrong outputs")
"""


def run(precision, requests):
    child = subprocess.run([sys.executable, "-c", CHILD, precision, str(requests)], capture_output=True, text=True)
    said = (child.stdout.strip() + " " + child.stderr.strip().splitlines()[-1] if child.stderr.strip() else child.stdout.strip()).strip()
    return child.returncode, said


if __name__ == "__main__":
    import openvino as ov

    default = ov.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")
    print(f"openvino {ov.get_version()}, CPU default inference precision {default}")
    if default != ov.Type.bf16:
        print("this CPU does not run bfloat16 arithmetic by default: the defect cannot be shown here")
        sys.exit(3)
    default_code, default_said = run("default", 50)
    f32_code, f32_said = run("f32", 3000)
    print(f"  default configuration, 50 requests: exit status {default_code}; {default_said}")
    print(f"  INFERENCE_PRECISION_HINT f32, 3000 requests: exit status {f32_code}; {f32_said}")
    print("  specification: every request answered (the input unchanged), the process alive")
    reproduces = default_code < 0 and f32_code == 0
    print("the defect still reproduces" if reproduces else "the defect no longer reproduces")
    sys.exit(0 if reproduces else 1)
