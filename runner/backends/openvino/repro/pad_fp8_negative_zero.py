#!/usr/bin/env python3
"""OpenVINO's CPU Pad turns an f8e4m3 -0.0 into +0.0 when oneDNN may not use the AVX512_CORE_FP16
ISA: on a CPU without avx512_fp16, or with ONEDNN_MAX_CPU_ISA capped below AVX512_CORE_FP16.

Spec: OpenVINO Pad-12: the output holds the input's elements unchanged, with the padding
around them (`edge` and `symmetric` copy border elements); TensorRT's Slice and the suite's
reformat pack move bits unchanged (docs/semantics.md, `*.data.bits-unchanged`).
Engine: Pad in every mode (constant, edge, reflect, symmetric) returns 0x00 for every 0x80 (-0.0)
of an f8e4m3 tensor, the copied interior included; Slice, Transpose, Reshape, Concat, Tile keep
0x80, and so does a Convert node making the same two conversions. The CPU plugin runs that Pad in
f32 between two oneDNN reorders it inserts (f8_e4m3 -> f32 and f32 -> f8_e4m3); which reorder
runs decides. With the AVX512_CORE_FP16 ISA oneDNN's jit reorders run (runtime primitives
`jit_uni_*`, `jit_direct_copy:uni` under ONEDNN_VERBOSE=1) and keep -0.0; below it the
reference reorders run (`ref_any_*`, `simple:any`) and lose it. Upstream oneDNN's source agrees
(the plugin's fork is oneDNN v3.13.0, as ONEDNN_VERBOSE names it): its jit reorders take f8
only with avx512_core_fp16 or avx10_2, an ISA that needs the CPU's avx512_fp16 (with
avx512_bf16 and avx_vnni, cpu_isa_traits.hpp), with no vendor check; its reference reorder
computes `d / dst_scale + dst_zp`, and -0.0 + 0 is +0.0.
The experiment (`--settings`: the constant Pad under each hint, and under each ONEDNN_MAX_CPU_ISA
value in a process of its own):
- Intel Xeon (family 6 model 207: avx512_fp16, avx512_bf16, amx_tile; no avx_ne_convert, no
  amx_fp16), OpenVINO 2026.4.1, 2026-12-05: -0.0 kept with no cap and every precision and
  execution hint (`jit_uni_*`), and under the caps AVX512_CORE_FP16, AVX512_CORE_AMX and DEFAULT;
  lost under SSE41, AVX, AVX2, AVX2_VNNI, AVX512_CORE, AVX512_CORE_VNNI and AVX512_CORE_BF16
  (`ref_any_*`), the same loss and the same primitives as on the AMD CPU.
- AMD EPYC (Zen 4: avx512_bf16, no avx512_fp16, no AMX), OpenVINO 2026.4.1: lost under every
  cap, hint and precision (`ref_any_*`).
So the deciding fact is the AVX512_CORE_FP16 ISA (the avx512_fp16 flag, not capped away), neither
the vendor (the Intel CPU loses -0.0 once capped) nor AMX (the cap AVX512_CORE_FP16 leaves AMX
out and keeps -0.0). The CPU plugin's OPTIMIZATION_CAPABILITIES (the hello's `engine_flags`)
lists FP16 exactly when that ISA is in reach here (a cap below AVX512_CORE_FP16 drops it, set
by ONEDNN_MAX_CPU_ISA or DNNL_MAX_CPU_ISA, in capitals or not), so the
known-failures entries hold `if cpu_flags lacks avx512_fp16 or engine_flags lacks FP16`, and the
hello names ONEDNN_MAX_CPU_ISA in its `env`, so a run records a cap and its replays set it.
Adapter: Slice's CLAMP/FILL/REFLECT modes and the vector formats' channel padding are Pad.

Standalone: calls openvino directly, prints the CPU, its flags, the ISA cap and the engine's
runtime path, and with `--settings` the same Pad under every ISA cap and hint (one process per
ISA value). On a CPU with avx512_fp16 and no cap it also runs the Pad capped at
AVX512_CORE_BF16, where the defect shows. Exit 0 while -0.0 becomes +0.0 exactly where the deciding
fact says (without the AVX512_CORE_FP16 ISA, by the CPU or by the cap); 1 when it does not (the
engine changed, or the fact no longer decides: update the entries); 3 off x86-64.
"""

import json
import os
import platform
import subprocess
import sys

import numpy as np
import openvino as ov
import openvino.opset13 as ops

# The flags that name the x86 conversions and matrix units a f8 / f16 / bf16 path may use.
FLAGS = ["f16c", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
         "avx_vnni", "avx_ne_convert", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16"]
# oneDNN's ISA caps in order; the fp8 jit reorders need AVX512_CORE_FP16.
ISAS = ["SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI", "AVX512_CORE_BF16",
        "AVX512_CORE_FP16", "AVX512_CORE_AMX", "DEFAULT"]
HINTS = [{}, {"INFERENCE_PRECISION_HINT": "f32"}, {"INFERENCE_PRECISION_HINT": "bf16"},
         {"INFERENCE_PRECISION_HINT": "f16"}, {"EXECUTION_MODE_HINT": "ACCURACY"},
         {"EXECUTION_MODE_HINT": "PERFORMANCE"}]
X = np.array([0x80, 0x38, 0x80, 0x00], dtype=np.uint8)  # f8e4m3: -0, 1.0, -0, +0


def cpu():
    facts = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f.read().split("\n\n")[0].splitlines():
                key, _, value = line.partition(":")
                facts[key.strip()] = value.strip()
    except OSError:
        pass
    flags = set(facts.get("flags", "").split())
    return facts.get("vendor_id", "unknown"), facts.get("model name", "unknown"), flags


def pad(core, mode, config=None):
    """(the interior of Pad's output, the runtime model's layers as (type, primitive))."""
    data = ops.parameter(ov.PartialShape([-1]), ov.Type.f8e4m3)
    pads = ops.constant(np.array([1], dtype=np.int64))
    model = ov.Model([ops.result(ops.pad(data, pads, pads, mode))], [data])
    compiled = core.compile_model(model, "CPU", config or {})
    request = compiled.create_infer_request()
    tensor = ov.Tensor(ov.Type.f8e4m3, ov.Shape([4]))
    np.asarray(tensor.data).view(np.uint8)[:] = X
    request.infer([tensor])
    out = np.asarray(request.get_output_tensor(0).data).view(np.uint8)
    layers = []
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        if info["layerType"].astype(str) in ("Reorder", "Pad", "Convert"):
            layers.append(f"{info['layerType'].astype(str)}:{info['primitiveType'].astype(str)}")
    return [int(v) for v in out[1:5]], layers


def convert(core, source, target, values):
    data = ops.parameter(ov.PartialShape([-1]), source)
    model = ov.Model([ops.result(ops.convert(data, target))], [data])
    request = core.compile_model(model, "CPU").create_infer_request()
    tensor = ov.Tensor(source, ov.Shape([len(values)]))
    np.asarray(tensor.data).view(values.dtype)[:] = values
    request.infer([tensor])
    return np.asarray(request.get_output_tensor(0).data)


def fp16_isa(flags, capabilities):
    """Whether oneDNN may use the AVX512_CORE_FP16 ISA here: the CPU has avx512_fp16, and the CPU
    plugin lists FP16 among its OPTIMIZATION_CAPABILITIES (it does not under a cap below
    AVX512_CORE_FP16). The known-failures entries test the same two facts."""
    return "avx512_fp16" in flags and "FP16" in capabilities


def shown(values):
    return "[" + ", ".join(hex(v) for v in values) + "]"


def one_setting():
    """`--one`: the constant Pad under this process's ONEDNN_MAX_CPU_ISA, as JSON."""
    interior, layers = pad(ov.Core(), "constant")
    print(json.dumps({"interior": interior, "layers": layers}))


def settings(core):
    lost_everywhere = True
    for config in HINTS:
        try:
            interior, layers = pad(core, "constant", config)
        except RuntimeError as e:
            print(f"  {config or 'default config'}: refused ({str(e).splitlines()[-1][:80]})")
            continue
        lost_everywhere &= interior != list(X)
        print(f"  {config or 'default config'}: {shown(interior)} via {' '.join(layers)}")
    for isa in ISAS:
        env = dict(os.environ, ONEDNN_MAX_CPU_ISA=isa)
        run = subprocess.run([sys.executable, __file__, "--one"], env=env, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"  ONEDNN_MAX_CPU_ISA={isa}: failed ({run.stderr.strip().splitlines()[-1:]})")
            continue
        answer = json.loads(run.stdout.strip().splitlines()[-1])
        lost_everywhere &= answer["interior"] != list(X)
        print(f"  ONEDNN_MAX_CPU_ISA={isa}: {shown(answer['interior'])} via {' '.join(answer['layers'])}")
    print("  -0.0 lost under every setting" if lost_everywhere else "  some setting keeps -0.0")


def main():
    if "--one" in sys.argv:
        return one_setting()
    vendor, model_name, flags = cpu()
    core = ov.Core()
    print(f"openvino {ov.get_version()} on {platform.system()} {platform.machine()}, {vendor} {model_name}")
    print(f"CPU flags: has {' '.join(f for f in FLAGS if f in flags) or 'none of them'}; "
          f"lacks {' '.join(f for f in FLAGS if f not in flags) or 'none of them'}")
    capabilities = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    print(f"CPU plugin OPTIMIZATION_CAPABILITIES: {capabilities}")
    print(f"ONEDNN_MAX_CPU_ISA: {os.environ.get('ONEDNN_MAX_CPU_ISA', 'unset')}; the deciding fact: "
          f"the AVX512_CORE_FP16 ISA is {'in' if fp16_isa(flags, capabilities) else 'out of'} reach "
          f"(cpu_flags {'has' if 'avx512_fp16' in flags else 'lacks'} avx512_fp16, "
          f"engine_flags {'has' if 'FP16' in capabilities else 'lacks'} FP16)")
    lost = []
    for mode in ["constant", "edge", "reflect", "symmetric"]:
        interior, layers = pad(core, mode)
        print(f"Pad {mode:9}: interior {shown(X)} -> {shown(interior)}; runtime layers {' '.join(layers)}")
        if interior != list(X):
            lost.append(mode)
    there = convert(core, ov.Type.f8e4m3, ov.Type.f32, X)
    back = convert(core, ov.Type.f32, ov.Type.f8e4m3, np.array([-0.0, 1.0, -0.0, 0.0], np.float32))
    print(f"Convert node f8e4m3 -> f32: {list(there)} (sign bits {[int(b) for b in np.signbit(there)]}); "
          f"f32 -> f8e4m3: {shown(back.view(np.uint8))}")
    if "--settings" in sys.argv:
        print("the constant Pad under each setting (its interior, and the runtime layers):")
        settings(core)
    if platform.machine() not in ("x86_64", "AMD64"):
        print("not an x86-64 CPU: the deciding fact (the AVX512_CORE_FP16 ISA) is an x86 one")
        sys.exit(3)
    expected = not fp16_isa(flags, capabilities)
    print(f"-0.0 became +0.0 in modes {lost}" if lost else "-0.0 kept in every mode")
    if bool(lost) != expected:
        print(f"the AVX512_CORE_FP16 ISA is {'out' if expected else 'in'} reach, so -0.0 was expected "
              f"{'lost' if expected else 'kept'}: the fact no longer decides; update the entries")
        sys.exit(1)
    if not expected:
        # The defect lives in the reference reorders; with the ISA in reach, show it under a cap.
        capped = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX512_CORE_BF16")
        run = subprocess.run([sys.executable, __file__, "--one"], env=capped, capture_output=True, text=True,
                             check=True)
        answer = json.loads(run.stdout.strip().splitlines()[-1])
        print(f"capped at ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16: interior {shown(X)} -> "
              f"{shown(answer['interior'])}; runtime layers {' '.join(answer['layers'])}")
        if answer["interior"] == list(X):
            print("-0.0 kept under the cap too: the engine changed; update the entries")
            sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    main()
