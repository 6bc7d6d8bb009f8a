#!/usr/bin/env python3
"""Counts the lines of the reference interpreter: its non-blank lines outside tests, comments
included, per file and in total, and fails (exit 1) above the limit.

The reference is what a reader checks against the vendors' documents: dtypes, floats, tensors,
errors, the ops' plans and plain paths (src/ops/), the plain layout loops (src/layout.rs) and
the engine seam (src/engine.rs). The spec model, the loader and the comparison are the suite's,
not the interpreter's, and the fast engine is a crate of its own (crates/kernels/).

A test item is an item under `#[cfg(test)]` (a `mod tests { ... }` block, or a single item);
everything else counts, doc comments and comments too.

Usage: scripts/reference_lines.py [--limit N]   (default limit 3000)
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = [
    "src/dtype.rs",
    "src/float.rs",
    "src/tensor.rs",
    "src/error.rs",
    "src/engine.rs",
    "src/layout.rs",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/ops").glob("*.rs")),
]
LIMIT = 3000


def code_braces(line):
    """The net `{` minus `}` of a line, outside strings, chars and `//` comments."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)  # string literals
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)  # char literals
    line = line.split("//", 1)[0]
    return line.count("{") - line.count("}")


def counted_lines(text):
    """The non-blank lines outside `#[cfg(test)]` items."""
    lines = text.splitlines()
    counted, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "#[cfg(test)]":
            # Skip the attribute and the item after it: to its closing brace, or its `;`.
            i += 1
            depth, opened = 0, False
            while i < len(lines):
                depth += code_braces(lines[i])
                opened = opened or "{" in lines[i].split("//", 1)[0]
                ended = (opened and depth <= 0) or (not opened and lines[i].rstrip().endswith(";"))
                i += 1
                if ended:
                    break
            continue
        if lines[i].strip():
            counted.append(lines[i])
        i += 1
    return counted


def main(argv):
    limit = LIMIT
    if len(argv) == 2 and argv[0] == "--limit":
        limit = int(argv[1])
    elif argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    total = 0
    for name in FILES:
        n = len(counted_lines((ROOT / name).read_text(encoding="utf-8")))
        total += n
        print(f"{n:6}  {name}")
    print(f"{total:6}  total (limit {limit})")
    if total > limit:
        print(f"error: the reference has {total} lines, more than {limit}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
