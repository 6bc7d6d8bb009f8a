#!/usr/bin/env python3
"""CPU time of the adapter answering a dump of the suite's requests (`runner --dump-requests`)
case by case and in batches: for each batch size N, a fresh process answers every request, in
`batch` requests of N cases (N = 1: single `run` requests, as the runner sends them with
`--batch 1`), and prints its CPU seconds (`time.process_time()`, import and hello left out), the
sessions it built and its peak resident memory. The batch size of the hello is chosen from this
table (README.md, "Batches").

    python3 runner/backends/onnxruntime/bench_batch.py /tmp/onnxruntime.jsonl [--sizes 1,8,32,128]
        [--repeat N] [--write]

`--write` also writes the table, with the date, the machine and the command, into README.md's
block of this script (scripts/benchmarks/measured.py), where scripts/benchmarks/test_figures.py requires such figures.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(dump, size):
    """In this process: answer the dump in batches of `size`; a JSON line of the figures."""
    sys.path[:0] = [HERE, os.path.join(HERE, "..", "common")]
    sys.argv = [os.path.join(HERE, "backend.py")]
    import importlib.util

    spec = importlib.util.spec_from_file_location("backend", sys.argv[0])
    backend = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(backend)
    import wire

    sessions = [0]
    new_session = backend.new_session

    def counted(*args):
        sessions[0] += 1
        return new_session(*args)

    backend.new_session = counted
    with open(dump) as f:
        requests = [json.loads(line) for line in f if line.strip()]
    backend.hello()
    sessions[0] = 0
    start = time.process_time()
    replies = 0
    for i in range(0, len(requests), size):
        cases = requests[i : i + size]
        if size == 1:
            replies += len([wire.answer_run(cases[0], backend.run)])
        else:
            replies += len(wire.answer_batch(cases, backend.run, backend.run_batch))
    cpu = time.process_time() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"size": size, "cases": replies, "cpu": cpu, "sessions": sessions[0], "rss_mb": rss}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dump", help="a file of run requests, one JSON line each (runner --dump-requests)")
    parser.add_argument("--sizes", default="1,8,32,128", help="batch sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size; the least CPU time is shown")
    parser.add_argument("--write", action="store_true", help="write the table into README.md's measured block")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child: measure this size
    args = parser.parse_args()
    if args.one is not None:
        measure(args.dump, args.one)
        return
    sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts", "benchmarks"))
    import measured

    where, when = measured.machine(), time.strftime("%Y-%m-%d", time.gmtime())
    rows = ["| batch size | CPU s | ms per case | sessions built | peak RSS MB |", "|---:|---:|---:|---:|---:|"]
    print("\n".join(rows))
    for size in [int(s) for s in args.sizes.split(",")]:
        runs = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, __file__, args.dump, "--one", str(size)], capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        best = min(runs, key=lambda r: r["cpu"])
        rows.append(f"| {size} | {best['cpu']:.2f} | {1000 * best['cpu'] / best['cases']:.3f} | {best['sessions']} | {best['rss_mb']:.0f} |")
        print(rows[-1], flush=True)
    if args.write:
        import onnxruntime

        command = "python3 runner/backends/onnxruntime/bench_batch.py " + " ".join(sys.argv[1:])
        cases = sum(1 for line in open(args.dump) if line.strip())
        text = "\n".join(
            [f"Measured on {when} on {where} by `{command}`: ONNX Runtime {onnxruntime.__version__}, {cases} requests, the least of {args.repeat} runs per size.", ""] + rows
        )
        measured.write_block(os.path.join(HERE, "README.md"), "runner/backends/onnxruntime/bench_batch.py", command, text, when=when, where=where)


if __name__ == "__main__":
    main()
