#!/usr/bin/env python3
"""CPU time and peak memory of the XLA adapter answering the suite's requests in batches of 1, 8,
32 and 128 cases: the measurement behind the hello's `batch` (backend.BATCH). For each size the
adapter runs as the runner runs it, a process of its own fed the hello and then every request
of DUMP, as `run` lines (size 1) or `batch` lines of that many cases in the dump's order; its CPU
seconds (user and system, start-up and hello included) and peak RSS are what `/usr/bin/time -v`
reports of it (`os.wait4`). One size after another, so that they do not share the CPU.

    python3 runner/backends/xla/bench_batch.py DUMP [--sizes 1,8,32,128] [--write]

DUMP is a file of the suite's requests, one JSON line each (the runner's `--dump-requests`, run
with the manifest's backend and options; a batch's line stands for its cases). The table goes to standard output; `--write` also puts
it in README.md as the block this script measured (scripts/benchmarks/measured.py: the date, the machine and
the command in its marker). The machine may be shared: CPU time, not wall time, is the figure."""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # leave no __pycache__ beside the sources
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "benchmarks"))
import measured  # noqa: E402

README = os.path.join(HERE, "README.md")
SCRIPT = "runner/backends/xla/bench_batch.py"


def cases_of(msg):
    """The run requests of a dumped line: itself, or a batch's cases (a dump of a batched run)."""
    return msg["cases"] if msg.get("type") == "batch" else [msg]


def feed(requests, size, path):
    """Writes what the runner would send: the hello, then the requests by `size`."""
    with open(path, "w") as f:
        f.write(json.dumps({"type": "hello", "protocol": 1}) + "\n")
        if size == 1:
            f.writelines(line + "\n" for line in requests)
        else:
            for i in range(0, len(requests), size):
                f.write('{"type":"batch","cases":[' + ",".join(requests[i:i + size]) + "]}\n")


def measure(requests, size):
    """(CPU seconds, peak RSS in MB, replies) of the adapter over `requests` in batches of `size`."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "requests.jsonl")
        feed(requests, size, path)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        with open(path) as stdin, open(os.devnull, "w") as devnull:
            proc = subprocess.Popen([sys.executable, os.path.join(HERE, "backend.py")], stdin=stdin, stdout=subprocess.PIPE,
                                    stderr=devnull, env=env)
            replies = sum(1 for _ in proc.stdout) - 1
            _, status, usage = os.wait4(proc.pid, 0)
    if status != 0 or replies != len(requests):
        sys.exit(f"batches of {size}: the adapter exited with status {status} after {replies} of {len(requests)} replies")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def table(requests, rows):
    import jax

    lines = [
        f"JAX {jax.__version__}, the suite's {len(requests):,} requests (the runner's `--dump-requests` with the "
        "manifest's options), one adapter process each, start-up and hello included:",
        "",
        "| batch | CPU s | ms per case | peak RSS |",
        "|---:|---:|---:|---:|",
    ]
    lines += [f"| {size} | {cpu:.1f} | {1000 * cpu / len(requests):.2f} | {rss:.0f} MB |" for size, cpu, rss in rows]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dump")
    p.add_argument("--sizes", default="1,8,32,128")
    p.add_argument("--write", action="store_true", help="also write the table into README.md")
    args = p.parse_args()
    with open(args.dump) as f:
        requests = [json.dumps(r) for line in f if line.strip() for r in cases_of(json.loads(line))]
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        cpu, rss = measure(requests, size)
        rows.append((size, cpu, rss))
        print(f"batch {size}: {cpu:.1f} CPU s, {rss:.0f} MB", file=sys.stderr, flush=True)
    text = table(requests, rows)
    print(text)
    if args.write:
        command = f"python3 {SCRIPT} DUMP --sizes {args.sizes} --write"
        measured.write_block(README, SCRIPT, command, text)


if __name__ == "__main__":
    main()
