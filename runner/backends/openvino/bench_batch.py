#!/usr/bin/env python3
"""What batching costs and saves: the suite's requests (a `runner --dump-requests` file) fed to a
fresh adapter process in batches of each size asked, printing per size the process's CPU seconds
(user + system, every thread; getrusage of the child), its peak RSS, the most threads it had and
its largest address space (sampled from /proc every 0.2 s), and the CPU per request.

    /work/bin/runner --backend "python3 runner/backends/openvino/backend.py" --dump-requests /tmp/ov.jsonl -q
    python3 runner/backends/openvino/bench_batch.py /tmp/ov.jsonl --sizes 1 8 32 128

`--round-trips-single` sends the steps of round trips (`::metamorphic::` ids) as single requests
and batches the rest, as a runner that cannot batch a step whose request depends on the previous
reply would; `--as BYTES` runs the adapter under `prlimit --as=BYTES` (an address-space cap).
CPU seconds, not wall time: other work may share the machine."""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

BACKEND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "backend.py")


def status(pid):
    """(threads, VmSize kB) of a process, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        return int(fields["Threads"]), int(fields["VmSize"].split()[0])
    except (OSError, KeyError, ValueError):
        return None


def feed(requests, size, singles=lambda r: False, cap=None):
    """Runs one adapter process over `requests` in batches of `size` (the requests `singles`
    picks alone); returns its figures and replies."""
    command = [sys.executable, BACKEND]
    if cap:
        command = ["prlimit", f"--as={cap}"] + command
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    peak = {"threads": 0, "vm": 0, "samples": []}

    def watch():
        while process.poll() is None:
            seen = status(process.pid)
            if seen:
                peak["threads"] = max(peak["threads"], seen[0])
                peak["vm"] = max(peak["vm"], seen[1])
                peak["samples"].append(seen[0])
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    process.stdin.write(json.dumps({"type": "hello", "protocol": 1}) + "\n")
    process.stdin.flush()
    json.loads(process.stdout.readline())
    replies, pending = {}, []

    def send(group):
        line = group[0] if len(group) == 1 and size == 1 or singles(group[0]) else {"type": "batch", "cases": group}
        process.stdin.write(json.dumps(line) + "\n")
        process.stdin.flush()
        for _ in group:
            reply = json.loads(process.stdout.readline())
            replies[reply["id"]] = reply

    for request in requests:
        if singles(request):
            if pending:
                send(pending)
                pending = []
            send([request])
            continue
        pending.append(request)
        if len(pending) == size:
            send(pending)
            pending = []
    if pending:
        send(pending)
    process.stdin.close()
    _, code, usage = os.wait4(process.pid, 0)
    process.returncode = code
    watcher.join()
    return {
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / 1024,
        "threads": peak["threads"],
        "threads_last": peak["samples"][-1] if peak["samples"] else 0,
        "vm_mb": peak["vm"] / 1024,
        "exit": os.waitstatus_to_exitcode(code),
    }, replies


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 32, 128])
    parser.add_argument("--round-trips-single", action="store_true")
    parser.add_argument("--as", dest="cap", help="address-space cap of the adapter, bytes (prlimit --as)")
    args = parser.parse_args()
    requests = [json.loads(line) for line in open(args.dump)]
    singles = (lambda r: "::metamorphic::" in r["id"]) if args.round_trips_single else (lambda r: False)
    print(f"{len(requests)} requests of {args.dump}" + (", round-trip steps single" if args.round_trips_single else "")
          + (f", address space capped at {args.cap} bytes" if args.cap else ""))
    print("| batch | CPU s | CPU ms per request | peak RSS MB | peak threads | threads at end | peak address space MB | errors | exit |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        figures, replies = feed(requests, size, singles, args.cap)
        errors = sum(r["type"] == "error" for r in replies.values())
        print(f"| {size} | {figures['cpu']:.1f} | {figures['cpu'] / len(requests) * 1000:.2f} | {figures['rss_mb']:.0f} | "
              f"{figures['threads']} | {figures['threads_last']} | {figures['vm_mb']:.0f} | {errors} | {figures['exit']} |", flush=True)


if __name__ == "__main__":
    main()
