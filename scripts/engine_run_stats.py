#!/usr/bin/env python3
"""Times each engine's whole run as CI makes it and counts its threads: wall and CPU time of the
runner and its backends, and the most threads the run's processes held at once (sampled every
0.1 s from /proc). Prints a markdown table for BENCHMARKS.md ("Engine runs: time and threads").

Usage: scripts/engine_run_stats.py [--runner target/release/runner] [ENGINE ...]
(every engine of runner/backends/*/engine.toml when none is named; Linux only)
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def descendants(pid):
    """pid and every process under it, from /proc's parent links."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, []))
    return found


def threads(pids):
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith("Threads:"))
        except (OSError, StopIteration):
            pass
    return total


def engines():
    out = subprocess.run([sys.executable, "scripts/engines.py", "json"], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runner", default="target/release/runner")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    manifests = engines()
    names = args.names or sorted(manifests)
    print("| engine | wall (s) | CPU (s) | peak threads | summary |")
    print("|---|---:|---:|---:|---|")
    for name in names:
        m = manifests[name]
        command = [args.runner, "-q", "--backend", m["backend"], "--expectations", m["expectations"], *m.get("options", [])]
        started = time.monotonic()
        before = os.times()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        peak = 0
        while process.poll() is None:
            peak = max(peak, threads(descendants(process.pid)))
            time.sleep(0.1)
        output = process.stdout.read()
        wall = time.monotonic() - started
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        summary = next((l for l in output.splitlines() if " passed, " in l and "test result" not in l), "no summary")
        status = "" if process.returncode == 0 else f" (exit {process.returncode})"
        print(f"| {m.get('display', name)} | {wall:.1f} | {cpu:.1f} | {peak} | {summary}{status} |", flush=True)


if __name__ == "__main__":
    main()
