#!/usr/bin/env python3
"""Checks the goldens without this project: every manifest entry's .npy file exists, has the
SHA-256 the manifest records, and loads with numpy with the recorded shape and the npy dtype
its real dtype is stored as (golden/README.md). Exits 1 on any problem.

    python3 golden/verify.py [golden-folder]
"""

import hashlib
import json
import os
import sys

import numpy as np

# The real dtype -> the numpy dtype it is stored as (int4 unpacked, fp8/bfloat16 as raw bits).
STORED = {
    "bool": "bool", "int4": "int8", "int8": "int8", "uint8": "uint8", "int32": "int32",
    "int64": "int64", "fp8": "uint8", "float16": "float16", "bfloat16": "uint16",
    "float32": "float32",
}


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    problems, files, errors = [], 0, 0
    for op in sorted(os.listdir(root)):
        op_dir = os.path.join(root, op)
        if not os.path.isdir(op_dir):
            continue
        for name in sorted(os.listdir(op_dir)):
            if not name.endswith(".json"):
                continue
            stem = name[:-5]
            with open(os.path.join(op_dir, name)) as f:
                manifest = json.load(f)
            for key, entry in manifest["cases"].items():
                if "error" in entry:
                    errors += 1
                    continue
                # `file`: only while a bless switches the sweep (or one stopped in that step).
                name = entry.get("file", key.replace("::", ".") + ".npy")
                path = os.path.join(op_dir, stem, name)
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError as e:
                    problems.append(f"{path}: {e}")
                    continue
                if hashlib.sha256(data).hexdigest() != entry["sha256"]:
                    problems.append(f"{path}: sha256 differs from {name}")
                    continue
                array = np.load(path, allow_pickle=False)
                if list(array.shape) != entry["shape"]:
                    problems.append(f"{path}: shape {list(array.shape)}, manifest {entry['shape']}")
                if array.dtype != np.dtype(STORED[entry["dtype"]]):
                    problems.append(f"{path}: numpy dtype {array.dtype}, expected {STORED[entry['dtype']]}")
                if entry["dtype"] == "int4" and array.size and (array.min() < -8 or array.max() > 7):
                    problems.append(f"{path}: int4 value out of [-8, 7]")
                files += 1
    for problem in problems:
        print(problem)
    print(f"{files} golden files and {errors} expected errors checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
