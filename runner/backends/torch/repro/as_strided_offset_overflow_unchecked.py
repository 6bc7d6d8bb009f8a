#!/usr/bin/python3
"""torch.as_strided accepts a storage offset far past the end of the storage when the offset in
bytes overflows int64, and the view reads memory outside the storage (here the storage's own
first elements, the byte offset having wrapped around to 0; other offsets read other memory or
crash the process).

Spec: torch.as_strided (1.13 docstring, "warning"): "The constructed view of the storage must only
refer to elements within the storage or a runtime error will be thrown."
Engine: a float32 tensor of 6 elements, size [2], stride [1], storage offset 2**62: no error; the
view holds [0.0, 1.0], elements 0 and 1 of the storage (2**62 · 4 bytes = 2**64 wraps to 0). A
smaller offset past the end (6, 100, 2**40) raises "setStorage: ... out of bounds for storage of
size 24".
Suite: as_strided::bounds::offset_plus_reach_overflows_int64 (offset 2**63 - 1) expects
out_of_bounds (as_strided.bounds.reach).

Standalone: calls torch directly. Exit 0 while torch still returns the view, 1 once it raises.
"""

import platform
import sys

import torch


def cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


x = torch.arange(6, dtype=torch.float32)
print(f"torch {torch.__version__} on {platform.machine()} ({cpu()}), {torch.get_num_threads()} threads")
try:
    torch.as_strided(x, [2], [1], 100)
    print("offset 100: no error (expected one)")
    sys.exit(1)
except RuntimeError as e:
    print(f"offset 100: RuntimeError: {e}")
try:
    view = torch.as_strided(x, [2], [1], 1 << 62)
    answer = view.tolist()
except RuntimeError as e:
    answer = f"RuntimeError: {e}"
print(f"offset 2**62: {answer}")
sys.exit(0 if isinstance(answer, list) else 1)
