#!/usr/bin/env python3
"""CPU seconds and peak RSS of the adapter over the suite's requests, sent as single `run` lines
and as `batch` requests of N cases (docs/protocol.md), measured on the backend processes alone.

    python3 runner/backends/tensorrt_rtx/bench_batch.py DUMP [--sizes 1,8,32,128] [--every K]

DUMP is the runner's `--dump-requests` file of a run of this adapter (the manifest's command):

    target/release/runner --backend "python3 runner/backends/tensorrt_rtx/backend.py" --timeout 30 \\
        --expectations runner/backends/tensorrt_rtx/known-failures.txt --dump-requests DUMP -q

`--every K` takes every K-th request (`--write-sample FILE` writes those under 8 KB to FILE, the
sample test_batch.py checks). Requests go in the dump's order, N at a time, as the runner
forms batches (from the trials' order alone). A backend copy that dies (a builder crash) is
replaced, and the cases it left unanswered are sent again singly to the new copy, as the runner
does; their CPU counts. The table: per size, CPU (user + system) and peak RSS of the copies
(`os.wait4`), their most threads between requests, copies started, and the replies' types.
`--same` also compares every case's reply with its reply in the first size's run (exit 1 if any
differs; test_batch.py does this on a sample).
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND = [sys.executable, os.path.join(HERE, "backend.py")]


class Copy:
    """One backend process, its hello answered."""

    def __init__(self):
        self.proc = subprocess.Popen(BACKEND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1 << 16)
        self.hello = self.ask({"type": "hello", "protocol": 1}, 1)[0]

    def ask(self, message, count):
        """Sends one request line and reads up to `count` reply lines (fewer when it dies)."""
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return []
        replies = []
        while len(replies) < count:
            line = self.proc.stdout.readline()
            if not line:
                break
            replies.append(json.loads(line))
        return replies

    def threads(self):
        """The copy's thread count now (0 once it has ended)."""
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
        except (OSError, StopIteration):
            return 0

    def close(self):
        """Ends the copy; its (cpu seconds, peak rss bytes)."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        _, _, usage = os.wait4(self.proc.pid, 0)
        self.proc.stdout.close()
        return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def serve(requests, size):
    """The replies by id of `requests` sent `size` at a time (1: single `run` lines), and the
    copies' total CPU seconds, highest peak RSS, count, and their most threads between requests."""
    replies, cpu, rss, copies, threads = {}, 0.0, 0, 1, 0
    copy = Copy()

    def ended(c):
        nonlocal cpu, rss
        seconds, peak = c.close()
        cpu += seconds
        rss = max(rss, peak)

    def send(group):
        nonlocal copy, copies
        message = group[0] if len(group) == 1 else {"type": "batch", "cases": group}
        got = copy.ask(message, len(group))
        for reply in got:
            replies[reply["id"]] = reply
        if len(got) < len(group):
            # The copy died: a fresh one, and the unanswered cases of a batch singly (a crash is a
            # case's own).
            ended(copy)
            copy, copies = Copy(), copies + 1
            if len(group) == 1:
                replies[group[0]["id"]] = {"type": "crash", "id": group[0]["id"]}
                return
            for case in group:
                if case["id"] not in replies:
                    one = copy.ask(case, 1)
                    if one:
                        replies[case["id"]] = one[0]
                    else:
                        replies[case["id"]] = {"type": "crash", "id": case["id"]}
                        ended(copy)
                        copy, copies = Copy(), copies + 1

    for start in range(0, len(requests), size):
        send(requests[start:start + size])
        threads = max(threads, copy.threads())
    ended(copy)
    return replies, cpu, rss, copies, threads


def load(path, every=1):
    with open(path) as f:
        requests = [json.loads(line) for line in f if line.strip()]
    return [r for r in requests if r.get("type") == "run"][::every]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("--sizes", default="1,8,32,128")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--same", action="store_true", help="assert each case's reply equals its single reply")
    parser.add_argument("--write-sample", metavar="FILE", help="write every K-th request under 8 KB there (test_batch.py's sample), and stop")
    args = parser.parse_args()
    requests = load(args.dump, args.every)
    if args.write_sample:
        with open(args.write_sample, "w") as f:
            for request in requests:
                line = json.dumps(request, separators=(",", ":"), sort_keys=True)
                if len(line) < 8192:
                    f.write(line + "\n")
        return
    print(f"{len(requests)} requests of {args.dump}, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
          f"{platform_line()}")
    print("| batch | CPU s | per case ms | peak RSS MB | threads | copies | replies |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    single, differ = None, 0
    for size in [int(s) for s in args.sizes.split(",")]:
        replies, cpu, rss, copies, threads = serve(requests, size)
        types = collections.Counter(r["type"] for r in replies.values())
        print(f"| {size} | {cpu:.1f} | {1000 * cpu / len(requests):.1f} | {rss / 2**20:.0f} | {threads} | {copies} | "
              f"{', '.join(f'{k} {v}' for k, v in sorted(types.items()))} |", flush=True)
        if args.same:
            if single is None:
                single = replies
            else:
                ids = [i for i in single if single[i] != replies.get(i)]
                differ += len(ids)
                print(f"  replies that differ from batch {args.sizes.split(',')[0]}'s: {len(ids)} {ids[:5]}", flush=True)
    return 1 if differ else 0


def platform_line():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    return model


if __name__ == "__main__":
    sys.exit(main())
