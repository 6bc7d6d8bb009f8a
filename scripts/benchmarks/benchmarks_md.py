#!/usr/bin/env python3
"""Merges sections printed by a bench into BENCHMARKS.md: the markdown on stdin (an optional
title and introduction, then `## ` sections) replaces the file's title and introduction when it
has one, and each of the file's sections of the same heading; its other sections are added at
the end, and the file's other sections are kept as they are, in their order. The benches only
print (`cargo bench ... -- --markdown`); scripts/benchmarks/bench.sh runs them and this.

Usage: scripts/benchmarks/benchmarks_md.py FILE < sections.md
"""

import sys


def split_sections(text):
    """The text before the first `## ` heading, and the sections as (heading, text) pairs."""
    parts = ("\n" + text).split("\n## ")
    head = parts[0][1:]
    sections = []
    for part in parts[1:]:
        heading = part.split("\n", 1)[0].strip()
        sections.append((heading, "## " + part.rstrip("\n") + "\n"))
    return head, sections


def merge(old, new):
    old_head, old_sections = split_sections(old)
    new_head, new_sections = split_sections(new)
    replaced = dict(new_sections)
    head = new_head if new_head.strip() else old_head
    kept = [replaced.pop(h, text) for h, text in old_sections]
    added = [text for h, text in new_sections if h in replaced]
    body = "".join("\n" + text for text in kept + added)
    if not head.strip():
        return body.lstrip("\n")
    return head.rstrip("\n") + "\n" + body


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    new = sys.stdin.read()
    if "## " not in new:
        print("error: no `## ` section on stdin", file=sys.stderr)
        return 1
    try:
        with open(argv[0], encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    with open(argv[0], "w", encoding="utf-8") as f:
        f.write(merge(old, new))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
