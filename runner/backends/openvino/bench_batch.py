#!/usr/bin/env python3
"""What batching costs and saves: the suite's requests (a `runner --dump-requests` file) fed to a
fresh adapter process in batches of each size asked, printing per size the process's CPU seconds
(user + system, every thread; getrusage of the child), its peak RSS, the most threads it had and
its largest address space (sampled from /proc every 0.2 s), and the CPU per request.

    runner --backend "python3 runner/backends/openvino/backend.py" --dump-requests /tmp/ov.jsonl -q
    python3 runner/backends/openvino/bench_batch.py /tmp/ov.jsonl --sizes 1 8 32 128

`--round-trips single` sends the steps of round trips (`::metamorphic::` ids) as single requests
and batches the rest, as a runner that cannot batch a step whose request depends on the previous
reply would (`both`: a row each way); `--as BYTES` runs the adapter under `prlimit --as=BYTES`
(an address-space cap); `--readme` also writes the table, with the date, machine and command, into README.md between its
`<!-- bench_batch.py` markers. CPU seconds, not wall time: other work may share the machine."""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND = os.path.join(HERE, "backend.py")
README = os.path.join(HERE, "README.md")
BEGIN, END = "<!-- bench_batch.py: written by bench_batch.py --readme -->", "<!-- end of bench_batch.py -->"


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
    picks sent alone, as single `run` lines); returns its figures and replies."""
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
        alone = len(group) == 1 and (size == 1 or singles(group[0]))
        line = group[0] if alone else {"type": "batch", "cases": group}
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


def is_step(request):
    """Whether the request is a step of a round trip (docs/protocol.md, "Round trips")."""
    return "::metamorphic::" in request["id"]


def machine():
    """The CPU model and count, and the engine's version, as the table's heading says them."""
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.partition(":")[2].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    version = subprocess.run([sys.executable, "-c", "import openvino; print(openvino.get_version().split('-')[0])"],
                             capture_output=True, text=True).stdout.strip()
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.machine()}, openvino {version}"


def write_readme(lines):
    """Puts `lines` between the README's markers."""
    text = open(README).read()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    with open(README, "w") as f:
        f.write(text[:start] + "\n" + "\n".join(lines) + "\n" + text[end:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 8, 32, 128])
    parser.add_argument("--round-trips", choices=["batched", "single", "both"], default="batched")
    parser.add_argument("--as", dest="cap", help="address-space cap of the adapter, bytes (prlimit --as)")
    parser.add_argument("--readme", action="store_true", help="write the table into README.md")
    args = parser.parse_args()
    requests = [json.loads(line) for line in open(args.dump)]
    modes = ["batched", "single"] if args.round_trips == "both" else [args.round_trips]
    command = "python3 runner/backends/openvino/bench_batch.py DUMP " + " ".join(sys.argv[2:])
    lines = [
        f"{datetime.date.today().isoformat()}, {machine()}: `{command.replace(' --readme', '')}`, DUMP the "
        f"{len(requests)} requests of `runner --dump-requests` ({sum(is_step(r) for r in requests)} of them steps of round trips)"
        + (f", the adapter under `prlimit --as={args.cap}`" if args.cap else "") + ".",
        "",
        "| batch | round trips | CPU s | CPU ms per request | peak RSS MB | peak threads | threads at end | peak address space MB | errors | exit |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for line in lines:
        print(line, flush=True)
    for size, mode in [(size, mode) for size in args.sizes for mode in modes if size > 1 or mode == "batched"]:
        figures, replies = feed(requests, size, is_step if mode == "single" else (lambda r: False), args.cap)
        errors = sum(r["type"] == "error" for r in replies.values())
        lines.append(f"| {size} | {mode if size > 1 else 'single'} | {figures['cpu']:.1f} | {figures['cpu'] / len(requests) * 1000:.2f} | {figures['rss_mb']:.0f} | "
                     f"{figures['threads']} | {figures['threads_last']} | {figures['vm_mb']:.0f} | {errors} | {figures['exit']} |")
        print(lines[-1], flush=True)
    if args.readme:
        write_readme(lines)


if __name__ == "__main__":
    main()
