"""Writes the two large spec folders BENCHMARKS.md measures the spec reader's peak memory on:

    python3 scripts/benchmarks/big_specs.py DIR block 66000000   # data as block-style rows, `- [..]`
    python3 scripts/benchmarks/big_specs.py DIR line 200000000   # the whole spec on one line

Each is one shuffle identity case (DIR/shuffle/load.yaml) whose input and expected output hold
the same float32 values, written with 4 significant digits; the byte count is the file's
target size. Then: OPSPEC_SPECS=DIR /usr/bin/time -v target/release/runner -q
"""

import os
import random
import sys


def values(n):
    return ["%.4g" % (random.random() * 4 - 2) for _ in range(n)]


def main():
    root, kind, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(f"{root}/shuffle", exist_ok=True)
    path = f"{root}/shuffle/load.yaml"
    random.seed(7)
    per = sum(len(v) + 2 for v in values(1000)) / 1000
    with open(path, "w") as f:
        if kind == "block":
            cols = 16
            rows = int(target / 2 / (per * cols + 8))
            f.write(
                "cases:\n  - name: identity\n    source: bench\n"
                "    clauses: [shuffle.transpose.numpy-semantics]\n"
                "    attrs: {first_transpose: [0, 1]}\n"
            )
            for section, name in (("inputs", "input"), ("expected", "output")):
                random.seed(7)
                f.write(
                    f"    {section}:\n      {name}:\n        dtype: float32\n"
                    f"        shape: [{rows}, {cols}]\n        data:\n"
                )
                for _ in range(rows):
                    f.write("          - [" + ", ".join(values(cols)) + "]\n")
        else:
            n = int(target / 2 / per)
            random.seed(7)
            data = "[" + ", ".join(values(n)) + "]"
            f.write(
                "{cases: [{name: identity, source: bench, "
                "clauses: [shuffle.transpose.numpy-semantics], attrs: {first_transpose: [0]}, "
                f"inputs: {{input: {{dtype: float32, shape: [{n}], data: {data}}}}}, "
                f"expected: {{output: {{dtype: float32, shape: [{n}], data: {data}}}}}}}]}}\n"
            )
    print(path, os.path.getsize(path))


if __name__ == "__main__":
    main()
