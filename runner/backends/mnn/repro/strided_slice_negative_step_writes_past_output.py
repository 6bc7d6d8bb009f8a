#!/usr/bin/env python3
"""MNN's StridedSlice with a negative step can write past the end of its output buffer.

Spec: MNN's Python API, `MNN.expr.strided_slice(x, begin, end, strides, begin_mask, end_mask,
...)`: TensorFlow's StridedSlice, whose strides may be negative. Of [1, ..., 9], begin 8, end
4, stride -1 is the 4 elements [9, 8, 7, 6], written into a 4-element output.
Engine: under valgrind's memcheck, a 4-byte write lands just past the output's buffer
(`MNN4BitcopyWithStride`, called by `MNN::_blit` from `CPURaster`), depending on the addresses
the process gets: under memcheck, in 11 of 33 environment sizes tried (0 to 4,096 bytes, step
128), on MNN 3.6.1, AMD EPYC (memcheck runs MNN's AVX2 kernels). The values read back are
still right. In a long-lived process the overwritten heap later aborts it: "double free or
corruption (out)" or "malloc_consolidate(): invalid chunk size" on the Slice trials of
stride -1 in sweeps/slice/modes.yaml.
Adapter: the MNN adapter gathers such an axis instead (backend.py, `negative_steps_gathered`).

Standalone: calls MNN directly, in child processes run by valgrind, until one shows the write
(at most RUNS). Exit 0 while MNN still writes past the buffer, 1 if no run shows it, 3 if this
machine cannot show it (valgrind is not installed: `apt-get install valgrind`).
"""

import os
import platform
import shutil
import subprocess
import sys
import tempfile

import MNN

RUNS = 24

CHILD = """
import numpy as np
import MNN.expr as F
def ints(v):
    return F.const(np.asarray(v, dtype=np.int32), [len(v)], F.NCHW, F.int)
x = F.const(np.arange(1, 10, dtype=np.float32), [9], F.NCHW, F.float)
y = F.strided_slice(x, ints([8]), ints([4]), ints([-1]), 0, 0)
print("values", list(np.asarray(y.read())), flush=True)
"""


def cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def past_the_output(log):
    """The memcheck record of a write by MNN's copy just past a block, or None."""
    blocks = log.split("Invalid write")
    for block in blocks[1:]:
        record = block.split("\n\n", 1)[0]
        if "MNN4BitcopyWithStride" in record or "_blit" in record:
            return "Invalid write" + record
    return None


print(f"MNN {MNN.version()}, Python {platform.python_version()}, CPU: {cpu()} ({platform.machine()})")
valgrind = shutil.which("valgrind")
if valgrind is None:
    print("valgrind is not installed (apt-get install valgrind): the write cannot be seen here")
    sys.exit(3)
print("MNN.expr.strided_slice([1..9], begin 8, end 4, stride -1); spec: [9, 8, 7, 6] in a 4-element output")
with tempfile.TemporaryDirectory() as scratch:
    log_path = os.path.join(scratch, "memcheck.log")
    for run in range(1, RUNS + 1):
        try:
            # Whether the write lands past the buffer depends on the addresses the process gets
            # (natively, address randomisation changes them run to run; under valgrind, the size
            # of the environment does): each run gets an environment of another size.
            env = dict(os.environ, REPRO_LAYOUT="x" * (run * 97))
            child = subprocess.run([valgrind, "--error-limit=no", f"--log-file={log_path}",
                                    os.path.realpath(sys.executable), "-c", CHILD],
                                   capture_output=True, text=True, timeout=300, env=env)
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"cannot run valgrind: {e}")
            sys.exit(3)
        values = [line for line in child.stdout.splitlines() if line.startswith("values")]
        with open(log_path) as f:
            found = past_the_output(f.read())
        if found:
            print(f"run {run}: {values or 'no output'}; memcheck:")
            lines = found.splitlines()
            print("\n".join(lines[:3] + [line for line in lines if "Address" in line]))
            sys.exit(0)
        print(f"run {run}: {values or 'no output'}; no write past the output")
print(f"no write past the output in {RUNS} runs: the defect looks gone")
sys.exit(1)
