#!/usr/bin/env python3
"""The speed-up of a pool of backend processes on a slow, sleep-bound backend.

Runs the reformat trials (about 1,300, some sending two requests) through the test fixture
`faulty_backend --sleep-ms 20` (20 ms per request, as a slow engine would take) with
`--jobs 1` and `--jobs 4`, each run REPEAT times, and checks that

- both give the same JSON report trial for trial (status and message), and
- the fastest `--jobs 4` run is at least MIN_SPEEDUP times as fast as the fastest `--jobs 1`.

Exit 0 when both hold, 1 otherwise; prints the figures BENCHMARKS.md records.

    scripts/benchmarks/pool_speedup.py [--repeat N] [--filter PREFIX] [--sleep-ms MS]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIN_SPEEDUP = 3.5


def build():
    subprocess.run(
        ["cargo", "build", "-q", "--release", "-p", "opspec-runner", "--bin", "runner",
         "-p", "opspec-test-backends", "--bin", "faulty_backend"],
        cwd=ROOT, check=True)
    return (os.path.join(ROOT, "target", "release", "runner"),
            os.path.join(ROOT, "target", "release", "faulty_backend"))


def run(runner, backend, jobs, prefix, folder):
    report = os.path.join(folder, f"jobs-{jobs}.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPSPEC_")}
    started = time.monotonic()
    done = subprocess.run(
        [runner, "-q", "--backend", backend, "--jobs", str(jobs),
         "--backend-log", os.path.join(folder, f"jobs-{jobs}.log"),
         "--report-json", report, prefix],
        cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"--jobs {jobs} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    with open(report) as f:
        trials = json.load(f)["trials"]
    return seconds, [(t["name"], t["status"], t["message"]) for t in trials]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--filter", default="reformat::")
    parser.add_argument("--sleep-ms", type=int, default=20)
    args = parser.parse_args()
    runner, faulty = build()
    backend = f"{faulty} --sleep-ms {args.sleep_ms}"
    times = {1: [], 4: []}
    results = {}
    with tempfile.TemporaryDirectory(prefix="opspec-pool-speedup-") as folder:
        for _ in range(args.repeat):
            for jobs in (1, 4):
                seconds, trials = run(runner, backend, jobs, args.filter, folder)
                times[jobs].append(seconds)
                results.setdefault(jobs, trials)
                if trials != results[jobs]:
                    sys.exit(f"--jobs {jobs} gave different reports on two runs")
    count = len(results[1])
    same = results[1] == results[4]
    speedup = min(times[1]) / min(times[4])
    for jobs in (1, 4):
        print(f"--jobs {jobs}: {count} trials, best {min(times[jobs]):.2f} s "
              f"(runs: {', '.join(f'{t:.2f}' for t in times[jobs])})")
    print(f"speed-up: {speedup:.2f} (at least {MIN_SPEEDUP} required)")
    print(f"reports identical trial for trial: {'yes' if same else 'NO'}")
    if not same:
        differ = [(a, b) for a, b in zip(results[1], results[4]) if a != b]
        print(f"first difference: {differ[:1]}")
    load = os.getloadavg()[0]
    print(f"load average at the end: {load:.1f} on {os.cpu_count()} cores")
    return 0 if same and speedup >= MIN_SPEEDUP else 1


if __name__ == "__main__":
    sys.exit(main())
