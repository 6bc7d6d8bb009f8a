#!/usr/bin/env python3
"""Figures written by the script that measured them: a marked block of a markdown file,

    <!-- measured by scripts/engines/engine_run_stats.py on 2026-12-04, AMD EPYC 9R14 (2 cores, load
         average 11.9): `python3 scripts/engines/engine_run_stats.py --write mnn`; digest 0123456789ab -->
    ...the figures, as the script wrote them...
    <!-- end of measured -->

(the opening comment on one line), which only that script writes: it names the script, the date,
the machine and the command that measured the figures, and a digest of the text between the
markers, so that a figure edited by hand in the block no longer matches. A time, memory or thread
figure of an adapter README or of docs/ outside such a block is a hand-written one, and
scripts/benchmarks/test_figures.py fails on it.

    import measured
    measured.write_block(path, "scripts/engines/engine_run_stats.py", command, text, key="run")

`key` tells apart the blocks one script writes in one file (`... measured by SCRIPT [key] on ...`).
"""

import datetime
import hashlib
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
END = "<!-- end of measured -->"
# The opening marker: script, optional [key], date, machine, command, digest.
OPEN = re.compile(
    r"<!-- measured by (?P<script>scripts/\S+|runner/backends/\S+)(?: \[(?P<key>[^\]]+)\])? on "
    r"(?P<date>\d{4}-\d{2}-\d{2}), (?P<machine>.+?): `(?P<command>[^`]+)`; digest (?P<digest>[0-9a-f]{12}) -->"
)
# Anything that starts like a marker (to find malformed ones).
LOOSE = re.compile(r"<!-- measured by ")


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def machine():
    """`AMD EPYC 9R14 (2 cores, load average 11.9)`: the CPU model, the cores this process may
    use and the 1-minute load average, from /proc (Linux)."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), model)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{model} ({cores} cores, load average {load:.1f})"


def blocks(text):
    """[(start line, end line, match or None, body)] of every block of `text` (0-based lines of
    its markers); a marker that does not parse has match None."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines):
        if LOOSE.search(lines[i]):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == END), None)
            if end is None:
                found.append((i, len(lines) - 1, None, ""))
                break
            body = "\n".join(lines[i + 1:end])
            found.append((i, end, OPEN.search(lines[i]), body))
            i = end
        i += 1
    return found


def problems(text):
    """What is wrong with the blocks of `text`: a marker that does not parse, a block without
    its end, a body whose digest is not the marker's (edited by hand)."""
    out = []
    for start, _end, match, body in blocks(text):
        if match is None:
            out.append((start + 1, "a `measured by` marker without the form `<!-- measured by SCRIPT on DATE, MACHINE: `COMMAND`; digest D -->` or without its end; the script that measured it writes it"))
        elif match["digest"] != digest(body):
            out.append((start + 1, f"the figures of this block are not those {match['script']} wrote (digest {match['digest']}, the text's {digest(body)}): edited by hand; run `{match['command']}` again"))
        elif not os.path.isfile(os.path.join(ROOT, match["script"])):
            out.append((start + 1, f"{match['script']} does not exist"))
    return out


def write_block(path, script, command, body, key=None, when=None, where=None):
    """Writes `body` as the block of `script` (and `key`) in the file `path`, in place of the
    block there, with today's date and this machine. The file must hold the block's markers
    (an empty block, `<!-- measured by SCRIPT [key] -->` then the end marker, marks where)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    name = script + (f" [{key}]" if key else "")
    lines = text.split("\n")
    target = None
    for start, end, _match, _body in blocks(text):
        marker = lines[start]
        if f"measured by {name} " in marker or marker.rstrip().endswith(f"measured by {name} -->"):
            target = (start, end)
    if target is None:
        raise SystemExit(
            f"{os.path.relpath(path, ROOT)}: no block of {name}: put `<!-- measured by {name} -->` and "
            f"`{END}` on lines of their own where the figures go"
        )
    when = when or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    body = body.rstrip("\n")
    marker = f"<!-- measured by {name} on {when}, {where or machine()}: `{command}`; digest {digest(body)} -->"
    start, end = target
    lines[start:end + 1] = [marker, body, END]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
