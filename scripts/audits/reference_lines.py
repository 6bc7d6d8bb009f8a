#!/usr/bin/env python3
"""Counts the lines of the reference interpreter, the crate `opspec` (every file of src/): per
file and in total, its non-blank lines outside tests (comments included), its code lines
(comments not counted either), and its public items; fails (exit 1) when the code lines exceed
the limit, as tests/reference_size.rs does.

The reference is what a reader checks against the vendors' documents: dtypes, floats, tensors,
errors, and the ops' plans and plain evaluations (src/ops/). The spec model, the loader and the
comparison are the suite's (crates/spec/), and the fast engine is a crate of its own
(crates/kernels/). `--crate` is accepted and changes nothing (the crate is the reference).

A test item is an item under `#[cfg(test)]` (a `mod tests { ... }` block, or a single item);
everything else counts, doc comments and comments too. A public item is a line outside tests
that declares something `pub` (not `pub(crate)`): a function or method, a type, a trait, a
constant or static, a module, a re-export, a field; plus each enum variant of a `pub enum` and
each `#[macro_export]` macro. It is a count of declarations, not `cargo public-api`'s listing
(which also counts trait impls).

Usage: scripts/audits/reference_lines.py [--limit N] [--crate] [--root DIR]   (default limit 3000)
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 3000
PUB_ITEM = re.compile(r"^\s*pub\s+(unsafe\s+)?(const\s+)?(fn|struct|enum|trait|type|const|static|mod|use|[a-z_][a-z0-9_]*\s*:)")


def files(root):
    """The counted files, relative to `root`."""
    return sorted(str(p.relative_to(root)) for p in root.glob("src/**/*.rs"))


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


def code_lines(lines):
    """The lines that are not only a comment."""
    return [line for line in lines if not line.strip().startswith("//")]


def public_items(lines):
    """The public declarations among `lines` (see the module doc)."""
    count, in_pub_enum, depth = 0, False, 0
    for line in lines:
        code = line.split("//", 1)[0]
        if line.strip() == "#[macro_export]" or PUB_ITEM.match(code):
            count += 1
        if in_pub_enum:
            # A variant: a name at the enum's own depth.
            if depth == 1 and re.match(r"^\s*[A-Z][A-Za-z0-9_]*\s*[,({]?", code) and code.strip():
                count += 1
            depth += code_braces(line)
            in_pub_enum = depth > 0
        elif re.match(r"^\s*pub\s+enum\b", code) and code.rstrip().endswith("{"):
            in_pub_enum, depth = True, 1
    return count


def main(argv):
    limit, root = LIMIT, ROOT
    args = list(argv)
    while args:
        flag = args.pop(0)
        if flag == "--limit" and args:
            limit = int(args.pop(0))
        elif flag == "--crate":
            pass
        elif flag == "--root" and args:
            root = Path(args.pop(0)).resolve()
        else:
            print(__doc__.strip().splitlines()[-1], file=sys.stderr)
            return 2
    total = code_total = items_total = 0
    print(f"{'lines':>6}  {'code':>6}  {'pub':>5}  file")
    for name in files(root):
        lines = counted_lines((root / name).read_text(encoding="utf-8"))
        code, items = len(code_lines(lines)), public_items(lines)
        total, code_total, items_total = total + len(lines), code_total + code, items_total + items
        print(f"{len(lines):6}  {code:6}  {items:5}  {name}")
    print(f"{total:6}  {code_total:6}  {items_total:5}  total (limit {limit} on the code column)")
    if code_total > limit:
        print(f"error: the reference has {code_total} code lines, more than {limit}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
