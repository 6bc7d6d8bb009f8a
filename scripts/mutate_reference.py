#!/usr/bin/env python3
"""Mutation testing of the reference interpreter by the conformance suite (cargo-mutants).

The mutants are cargo-mutants' over the reference path: `src/ops`, the plain loops of
`src/layout.rs`, `src/float.rs` and `src/compare.rs` (.cargo/mutants.toml says which files
and which functions are left out, and why). Each mutant is the crate with one change; it is
killed when `cargo test -p opspec-runner --test conformance -- --engine plain` fails, i.e. when
some case of the suite, run on the reference's plain loops, catches it.

A surviving mutant either gets a case that kills it (specs/<op>/mutants.yaml, citing the clause
it breaks) or is listed with the reason no case can kill it in `mutants-equivalent.toml` at the
repository root, keyed by the mutant's name without its line and column
(`src/ops/slice.rs: replace < with <= in check_axis`).

    python3 scripts/mutate_reference.py list                  # the mutants, by group
    python3 scripts/mutate_reference.py run [--group G...] [--shard K/N] [--jobs 1]
    python3 scripts/mutate_reference.py summary               # target/mutation/reference.json
    python3 scripts/mutate_reference.py report                # docs/mutation.md (both sections)

`run` runs cargo-mutants once per group (ops, float, compare, layout: the order of priority),
under `nice -n 10`, its output in target/mutation/reference/<group>/mutants.out and its builds
in target/mutation/build (kept between runs: only the two workspace crates are rebuilt).
`--shard K/N` runs cargo-mutants' slice K of N of each group (a fixed, reproducible subset).
`summary` gathers the verdicts of every group into target/mutation/reference.json, and
`report` writes docs/mutation.md: the numpy backend's section from target/mutation/numpy.json
(scripts/mutate_numpy.py) and this one's from target/mutation/reference.json.
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "mutation", "reference")
BUILD = os.path.join(ROOT, "target", "mutation", "build")
RESULTS = os.path.join(ROOT, "target", "mutation", "reference.json")
EQUIVALENT = os.path.join(ROOT, "mutants-equivalent.toml")

# The groups (regexes on the mutant names), in the order they run: the op semantics first.
GROUPS = {
    "ops": r"^src/ops/",
    "float": r"^src/float\.rs:",
    "compare": r"^src/compare\.rs:",
    "layout": r"^src/layout\.rs:",
}
# A test run of the suite takes about a second; a mutant that loops is stopped after this.
TEST_TIMEOUT = 60
BUILD_TIMEOUT = 900
# The address space of cargo, rustc and the suite under a mutant: a mutant that computes a
# huge size fails its allocation instead of taking the machine's memory.
MEMORY_LIMIT = 8 << 30

COMMAND = "python3 scripts/mutate_reference.py run && python3 scripts/mutate_reference.py report"


def cargo_mutants(args, check=True, capture=False):
    env = dict(os.environ, CARGO_TARGET_DIR=BUILD)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    argv = ["nice", "-n", "10", "cargo", "mutants"] + args
    return subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        preexec_fn=limit,
        check=check,
        text=True,
        stdout=subprocess.PIPE if capture else None,
    )


def stable_name(name):
    """A mutant's name without its line and column, which move with every edit above it."""
    return re.sub(r"^([^:]+):\d+:\d+:", r"\1:", name)


def group_filter(group):
    """cargo-mutants' filter arguments selecting a group's mutants. (cargo-mutants 27.1 lets
    struct-field deletions through every filter, so one such mutant of src/ops also runs in
    the other groups; `summary` keeps each mutant once, under its own file's group.)"""
    return ["--re", GROUPS[group]]


def list_group(group):
    out = cargo_mutants(["--list", "--json"] + group_filter(group), capture=True).stdout
    return json.loads(out)


def head_commit():
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, text=True, stdout=subprocess.PIPE
    ).stdout.strip()


def source_dirty():
    out = subprocess.run(
        ["git", "status", "--porcelain", "--", "src"],
        cwd=ROOT,
        check=True,
        text=True,
        stdout=subprocess.PIPE,
    ).stdout
    return bool(out.strip())


def run(groups, shard, jobs):
    commit = head_commit()
    if source_dirty():
        sys.exit("error: src/ has uncommitted changes; commit them first (the report names the commit)")
    os.makedirs(OUT, exist_ok=True)
    for i, group in enumerate(groups):
        out = os.path.join(OUT, group)
        args = [
            "-j", str(jobs),
            *group_filter(group),
            "-o", out,
            "--timeout", str(TEST_TIMEOUT),
            "--build-timeout", str(BUILD_TIMEOUT),
            "--colors", "never",
        ]
        if shard:
            args += ["--shard", shard]
        started = time.time()
        # cargo-mutants exits 2 when a mutant survives, 3 on a timeout: verdicts, not failures.
        done = cargo_mutants(args, check=False)
        if done.returncode not in (0, 2, 3):
            sys.exit(f"error: cargo mutants failed on group {group} (exit {done.returncode})")
        with open(os.path.join(out, "run.json"), "w") as f:
            json.dump(
                {
                    "group": group,
                    "commit": commit,
                    "shard": shard,
                    "jobs": jobs,
                    "seconds": round(time.time() - started, 1),
                },
                f,
                indent=1,
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list")
    p.add_argument("--group", nargs="*", choices=list(GROUPS), default=list(GROUPS))
    p = sub.add_parser("run")
    p.add_argument("--group", nargs="*", choices=list(GROUPS), default=list(GROUPS))
    p.add_argument("--shard", help="K/N: cargo-mutants' slice K (from 0) of N of each group")
    p.add_argument("--jobs", type=int, default=1)
    sub.add_parser("summary")
    sub.add_parser("report")
    args = parser.parse_args(argv)
    if args.command == "list":
        for group in args.group:
            for m in list_group(group):
                print(f"{group}\t{m['name']}")
    elif args.command == "run":
        run(args.group, args.shard, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
