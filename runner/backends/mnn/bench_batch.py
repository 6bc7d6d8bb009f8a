#!/usr/bin/env python3
"""CPU seconds, peak RSS and peak thread count of the MNN adapter answering a dump of the suite's
requests (`runner --dump-requests FILE`) as single `run` lines (N = 1) and as `batch` lines of N
cases, for each N given (default 1 8 32 128). Prints a Markdown table.

Each N gets fresh adapter processes, fed as the runner feeds them: one request line at a time,
the replies of a line read before the next is sent. A process that dies (MNN's Reshape to []
kills it: repro/reshape_to_rank0_crashes.py) is replaced, and the cases of its line left
unanswered are sent again singly to the new one, as docs/protocol.md says the runner does; a case
that kills the process when sent alone is counted as crashed. CPU is user + system time of every
adapter process of that N (getrusage of the children), startups and restarts included; RSS and
threads are read from /proc while the process runs (the high-water mark, VmHWM) and after each
line.

    python3 runner/backends/mnn/bench_batch.py /tmp/mnn.jsonl [N ...]
"""

import json
import os
import platform
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND = [sys.executable, os.path.join(HERE, "backend.py")]


class Adapter:
    """One adapter process, its hello answered."""

    def __init__(self):
        self.proc = subprocess.Popen(BACKEND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        self.hwm_kb, self.threads = 0, 0
        self.send({"type": "hello", "protocol": 1}, 1)

    def status(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            self.hwm_kb = max(self.hwm_kb, int(fields["VmHWM"].split()[0]))
            self.threads = max(self.threads, int(fields["Threads"]))
        except (OSError, KeyError, ValueError):
            pass

    def send(self, message, replies):
        """The reply lines of `message` (`replies` of them), or None when the process died."""
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
            lines = [self.proc.stdout.readline() for _ in range(replies)]
        except BrokenPipeError:
            lines = [""]
        self.status()
        if not all(lines):
            self.proc.wait()
            return None
        return [json.loads(line) for line in lines]

    def close(self):
        self.status()
        self.proc.stdin.close()
        self.proc.wait()


def answer(requests, n):
    """{id: reply} of `requests` sent in lines of `n`, with the figures of that run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    adapter, replies, crashed, starts = Adapter(), {}, [], 1
    hwm, threads = 0, 0
    for i in range(0, len(requests), n):
        chunk = requests[i:i + n]
        got = adapter.send(chunk[0] if n == 1 else {"type": "batch", "cases": chunk}, len(chunk))
        if got is None:
            hwm, threads = max(hwm, adapter.hwm_kb), max(threads, adapter.threads)
            adapter, starts = Adapter(), starts + 1
            if n == 1:
                crashed.append(chunk[0]["id"])
                continue
            for case in chunk:  # every case of a batch that died, sent again singly
                one = adapter.send(case, 1)
                if one is None:
                    crashed.append(case["id"])
                    hwm, threads = max(hwm, adapter.hwm_kb), max(threads, adapter.threads)
                    adapter, starts = Adapter(), starts + 1
                else:
                    got_one = one[0]
                    replies[got_one["id"]] = got_one
            continue
        for reply in got:
            replies[reply["id"]] = reply
    adapter.close()
    hwm, threads = max(hwm, adapter.hwm_kb), max(threads, adapter.threads)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    figures = {"n": n, "cases": len(requests), "replies": len(replies), "crashed": len(crashed),
               "processes": starts, "cpu": cpu, "wall": time.time() - start,
               "rss_mb": hwm / 1024, "threads": threads}
    return replies, figures


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        requests = [json.loads(line) for line in f if line.strip()]
    sizes = [int(a) for a in argv[1:]] or [1, 8, 32, 128]
    print(f"{len(requests)} requests of {argv[0]}; {platform.node()}, {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}")
    print()
    print("| N | CPU s | per case ms | wall s | peak RSS MB | peak threads | processes | crashed |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        _, f = answer(requests, n)
        print(f"| {n} | {f['cpu']:.2f} | {1000 * f['cpu'] / f['cases']:.3f} | {f['wall']:.1f} | "
              f"{f['rss_mb']:.0f} | {f['threads']} | {f['processes']} | {f['crashed']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
