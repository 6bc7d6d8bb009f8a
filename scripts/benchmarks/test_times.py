#!/usr/bin/env python3
"""How long `cargo test` takes after its build: every test binary cargo would run, run as cargo
runs it (from its package's folder, one after another, with the environment given), its wall
time and the CPU time of it and its children. The tests' time is the sum of the walls; the build
is timed apart (`cargo test --no-run`).

    python3 scripts/benchmarks/test_times.py [--ignored] [--env NAME=VALUE ...] [--path-first DIR] [--write [--key KEY]] [-- CARGO_TEST_ARGS]

`--ignored` runs the tests `cargo test` leaves out (the engine checks: pass their `-p ... --test
...` after `--`). `--write` writes the table into BENCHMARKS.md ("The tests' time") with the date,
the machine and the command. Doc tests are left out (none of the crates has one that runs).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import measured  # noqa: E402

ROOT = measured.ROOT


def binaries(cargo_args):
    """[(package folder, target name, executable)] of `cargo test` with `cargo_args`, in cargo's
    order; builds them (the build's wall time is returned apart)."""
    started = time.monotonic()
    build = subprocess.run(
        ["cargo", "test", "--no-run", "--message-format=json", *cargo_args],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True,
    )
    built = time.monotonic() - started
    found = []
    for line in build.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") and message["profile"]["test"]:
            folder = os.path.dirname(message["manifest_path"])
            found.append((folder, message["target"]["name"], message["executable"]))
    return found, built


def run(folder, executable, args, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([executable, *args], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode, done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ignored", action="store_true", help="run only the tests cargo test leaves out")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the tests")
    parser.add_argument("--path-first", help="a folder put first on PATH (a virtual environment's bin, whose python3 the tests then run)")
    parser.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    parser.add_argument("--key", help="which block of BENCHMARKS.md's to write (its `[key]`)")
    parser.add_argument("cargo_args", nargs="*", help="cargo test's own arguments (after --)")
    options = parser.parse_args()
    env = dict(os.environ)
    for pair in options.env:
        name, _, value = pair.partition("=")
        env[name] = value
    if options.path_first:
        env["PATH"] = os.path.abspath(options.path_first) + os.pathsep + env["PATH"]
    found, built = binaries(options.cargo_args)
    args = ["--ignored"] if options.ignored else []
    rows, failed = [], []
    for folder, name, executable in found:
        wall, cpu, code, output = run(folder, executable, args, env)
        rows.append((wall, cpu, name))
        if code != 0:
            failed.append(f"{name} (exit {code}):\n{output[-3000:]}")
        print(f"{wall:7.1f} s {cpu:7.1f} s CPU  {name}", file=sys.stderr)
    total_wall = sum(r[0] for r in rows)
    total_cpu = sum(r[1] for r in rows)
    rows.sort(reverse=True)
    lines = ["| test binary | wall s | CPU s |", "|---|---:|---:|"]
    lines += [f"| {name} | {wall:.1f} | {cpu:.1f} |" for wall, cpu, name in rows[:8]]
    rest = rows[8:]
    if rest:
        lines.append(f"| {len(rest)} others | {sum(r[0] for r in rest):.1f} | {sum(r[1] for r in rest):.1f} |")
    lines.append(f"| **all {len(rows)}** | **{total_wall:.1f}** | **{total_cpu:.1f}** |")
    body = "\n".join(lines)
    print(body)
    print(f"build (cargo test --no-run, incremental): {built:.1f} s wall", file=sys.stderr)
    if failed:
        print("failed:\n" + "\n".join(failed), file=sys.stderr)
        return 1
    if options.write:
        command = "python3 scripts/benchmarks/test_times.py " + " ".join(sys.argv[1:])
        key = options.key
        measured.write_block(os.path.join(ROOT, "BENCHMARKS.md"), "scripts/benchmarks/test_times.py", command.strip(), body, key=key)
    return 0


if __name__ == "__main__":
    sys.exit(main())
