#!/usr/bin/env python3
"""MNN's Reshape of a one-element tensor to shape [] (a scalar) kills the process with SIGSEGV.

Spec: MNN's Python API, `MNN.expr.reshape(x, shape)`: "reshape the var `x` by `shape`. Returns:
Var with `shape`" (the docstring of MNN/expr/__init__.py). MNN has rank-0 Vars (`expr.const`
of shape [] makes one, and reads back its value), and [1] -> [] keeps the element count.
Engine: the process ends with signal 11 before the reshaped Var's shape can be read.
Adapter: none (a shuffle whose reshape dims are [] reaches this call as it is).

Standalone: calls MNN directly, in a child process (the crash would end this one). Exit 0 while
MNN still crashes, 1 once it returns the scalar 5.0, 3 if this machine cannot run the child.
"""

import platform
import subprocess
import sys

import MNN

CHILD = """
import numpy as np
import MNN.expr as F
x = F.const(np.array([5.0], dtype=np.float32), [1], F.NCHW)
y = F.reshape(x, [])
print("shape", y.shape, "value", float(y.read()), flush=True)
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


print(f"MNN {MNN.version()}, Python {platform.python_version()}, CPU: {cpu()} ({platform.machine()})")
try:
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
except (OSError, subprocess.TimeoutExpired) as e:
    print(f"cannot run the child process: {e}")
    sys.exit(3)
lines = [line for line in child.stdout.splitlines() if line.startswith("shape")]
print(f"MNN.expr.reshape([5.0] of shape [1], []): exit status {child.returncode}; {lines or 'no output'}")
print("spec: a Var of shape [] holding 5.0")
if child.returncode == -11:
    sys.exit(0)
if child.returncode == 0 and lines == ["shape [] value 5.0"]:
    sys.exit(1)
print(child.stderr[-2000:])
sys.exit(3)
