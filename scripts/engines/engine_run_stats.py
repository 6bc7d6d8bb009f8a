#!/usr/bin/env python3
"""Times each engine's whole run as CI makes it and counts its threads and memory: wall and CPU
time of the runner and its backends, the most threads the run's processes held at once, and the
largest resident set of one of them and of all together (sampled every 0.1 s from /proc; a
process's own peak, VmHWM, counts too). Prints a markdown table for BENCHMARKS.md ("Engine runs:
time and threads", "Batched trials").

Usage: scripts/engines/engine_run_stats.py [--runner target/release/runner] [--batch N] [--as BYTES]
       [--reports DIR] [--write] [ENGINE ...]
(every engine of runner/backends/*/engine.toml when none is named; Linux only). `--batch N` is
passed to the runner (`--batch 1`: every case alone); `--as BYTES` runs it under `prlimit --as`.
`--reports DIR` keeps each run's JSON report as DIR/<engine>.json (what `scripts/engines/engines_md.py
--reports DIR` counts docs/engines.md from). `--write` also writes each engine's figures into its
README, runner/backends/<engine>/README.md, as the block this script measured (scripts/benchmarks/measured.py:
the date, the machine, the command; scripts/benchmarks/test_figures.py fails on a figure outside such a
block), in place of the block's markers `<!-- measured by scripts/engines/engine_run_stats.py -->` and
`<!-- end of measured -->`.
"""

import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time

# measured.py, the marked blocks of figures, is in scripts/benchmarks/.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
import measured  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def memory(pids):
    """(largest resident set of one process, sum of all), in bytes: the larger of each process's
    current and peak (VmHWM) resident set for the first, current for the sum."""
    largest = total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                fields = dict(l.split(":", 1) for l in f if ":" in l)
        except OSError:
            continue
        kb = lambda key: int(fields.get(key, "0 kB").split()[0])  # noqa: E731
        largest = max(largest, 1024 * max(kb("VmRSS"), kb("VmHWM")))
        total += 1024 * kb("VmRSS")
    return largest, total


def engines():
    out = subprocess.run([sys.executable, "scripts/engines/engines.py", "json"], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runner", default="target/release/runner")
    parser.add_argument("--batch", default=None)
    parser.add_argument("--as", dest="address_space", default=None)
    parser.add_argument("--reports", metavar="DIR", default=None, help="keep each run's JSON report as DIR/<engine>.json")
    parser.add_argument("--write", action="store_true", help="write each engine's figures into its README's measured block")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    manifests = engines()
    names = args.names or sorted(manifests)
    print("| engine | batch | wall (s) | CPU (s) | peak RSS, one process (MB) | peak RSS, all (MB) | peak threads | summary |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in names:
        m = manifests[name]
        command = [args.runner, "-q", "--backend", m["backend"], "--expectations", m["expectations"], *m.get("options", [])]
        if args.batch:
            command += ["--batch", args.batch]
        base = list(command)
        report = os.path.join(args.reports, f"{name}.json") if args.reports else os.path.join("target", f"engine-run-stats-{name}.json")
        if args.reports:
            os.makedirs(os.path.join(ROOT, args.reports), exist_ok=True)
        where = measured.machine()
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        command += ["--report-json", report, "--backend-log", os.path.join("target", f"engine-run-stats-{name}.log")]
        if args.address_space:
            command = ["prlimit", f"--as={args.address_space}", "--", *command]
        started = time.monotonic()
        before = os.times()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        peak = largest = total = 0
        while process.poll() is None:
            pids = descendants(process.pid)
            peak = max(peak, threads(pids))
            one, everything = memory(pids)
            largest, total = max(largest, one), max(total, everything)
            time.sleep(0.1)
        output = process.stdout.read()
        wall = time.monotonic() - started
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        summary = next((l for l in output.splitlines() if " passed, " in l and "test result" not in l), "no summary")
        status = "" if process.returncode == 0 else f" (exit {process.returncode})"
        try:
            with open(os.path.join(ROOT, report)) as f:
                batch = json.load(f).get("run", {}).get("batch", 1)
        except (OSError, ValueError):
            batch = "?"
        mb = lambda b: f"{b / 1e6:.0f}"  # noqa: E731
        print(f"| {m.get('display', name)} | {batch} | {wall:.1f} | {cpu:.1f} | {mb(largest)} | {mb(total)} | {peak} | {summary}{status} |", flush=True)
        if args.write:
            shown = shlex.join(base)
            text = (
                f"Measured on {when} on {where} by `scripts/engines/engine_run_stats.py`: "
                f"the whole run as CI makes it (`{shown}`) took {wall:.1f} s of wall time and {cpu:.1f} s of CPU "
                f"(the runner and the adapter's processes); the largest resident set of one process was "
                f"{mb(largest)} MB and of all together {mb(total)} MB, with at most {peak} threads at once "
                f"(sampled every 0.1 s from /proc), in batches of {batch}: {summary}{status}. The wall time "
                f"grows with the machine's load (its load average at the start, above)."
            )
            again = "python3 scripts/engines/engine_run_stats.py --write" + (f" --runner {args.runner}" if args.runner != "target/release/runner" else "") + f" {name}"
            measured.write_block(os.path.join(ROOT, "runner", "backends", name, "README.md"), "scripts/engines/engine_run_stats.py", again, text, when=when, where=where)


if __name__ == "__main__":
    main()
