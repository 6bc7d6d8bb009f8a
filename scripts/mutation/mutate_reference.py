#!/usr/bin/env python3
"""Mutation testing of the reference interpreter by the conformance suite (cargo-mutants).

The mutants are cargo-mutants' over the reference path: `src/ops` (the plans and their plain
evaluations), the tensor helpers those evaluations use (`src/tensor.rs`), `src/float.rs` and
`crates/spec/src/compare.rs` (.cargo/mutants.toml says which files and which functions are left out, and
why). Each mutant is the crate with one change; it is killed when `cargo test -p opspec-runner
--test conformance -- --engine plain` fails, i.e. when some case of the suite, run on the
reference's plain evaluations, catches it (the mutants of compare.rs also face its own tests:
see `test_args`).

A surviving mutant either gets a case that kills it (specs/<op>/mutants.yaml, citing the clause
it breaks) or is listed with the reason no case can kill it in `mutants-equivalent.toml` at the
repository root, keyed by the mutant's name without its line and column
(`src/ops/slice.rs: replace < with <= in check_axis`).

    python3 scripts/mutation/mutate_reference.py list                  # the mutants, by group
    python3 scripts/mutation/mutate_reference.py run [--group G...] [--shard K/N] [--only REGEX] [--jobs 1] [--build NAME]
    python3 scripts/mutation/mutate_reference.py summary               # target/mutation/reference.json
    python3 scripts/mutation/mutate_reference.py report                # docs/mutation.md (its section)
    python3 scripts/mutation/mutate_reference.py check                 # the configuration is consistent

`run` runs cargo-mutants once per group (ops, float, compare, tensor: the order of priority),
under `nice -n 10`, its output in target/mutation/reference/<group>/mutants.out and its builds
in target/mutation/build (kept between runs: only the workspace crates are rebuilt). One run
builds one mutant at a time, since its builds share that folder; two runs at once (different
groups) need two folders, e.g. `--group ops` beside `--group float compare tensor --build b2`
(target/mutation/b2).
`--shard K/N` runs cargo-mutants' slice K of N of each group (a fixed, reproducible subset).
`summary` gathers the verdicts of every group into target/mutation/reference.json, and
`report` writes this campaign's section of docs/mutation.md from it (the numpy backend's
sections are scripts/mutation/mutate_numpy.py's; both go through scripts/mutation/mutation_page.py). `check`
needs no cargo-mutants: every file .cargo/mutants.toml examines exists and belongs to one group,
every function its `exclude_re` names and every function an entry of mutants-equivalent.toml
names is still in the examined source.
"""

import argparse
import glob as globlib
import json
import os
import re
import resource
import subprocess
import sys
import time
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutation_page import KINDS, ORDER, header_lines, md_cell, replace_sections  # noqa: E402,F401

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "target", "mutation", "reference")
BUILD = os.path.join(ROOT, "target", "mutation", "build")
RESULTS = os.path.join(ROOT, "target", "mutation", "reference.json")
EQUIVALENT = os.path.join(ROOT, "mutants-equivalent.toml")
CONFIG = os.path.join(ROOT, ".cargo", "mutants.toml")

# The groups, in the order they run (the op semantics first): a regex on the mutant names
# (cargo-mutants' `--list`), and one for the names of the group's file that belong to another
# group. `compare` is the judge, compare.rs and the Scale attribute that picks its tolerance.
GROUPS = {
    "ops": (r"^src/ops/", r"Attrs::has_power"),
    "float": (r"^src/float\.rs:", None),
    "compare": (r"^crates/spec/src/compare\.rs:|^src/ops/scale\.rs:.*Attrs::has_power\b", None),
    "tensor": (r"^src/tensor\.rs:", None),
}
# A test run of the suite takes a second or two; a mutant that loops (or builds a huge output) is
# stopped after this, and counts as killed.
TEST_TIMEOUT = 20
BUILD_TIMEOUT = 900
# The address space of cargo, rustc and the suite under a mutant: a mutant that computes a
# huge size fails its allocation instead of taking the machine's memory.
MEMORY_LIMIT = 8 << 30

COMMAND = "python3 scripts/mutation/mutate_reference.py run && python3 scripts/mutation/mutate_reference.py report"


def cargo_mutants(args, check=True, capture=False):
    # The suite on the reference's plain loops alone (the runner's --engine).
    env = dict(os.environ, CARGO_TARGET_DIR=BUILD, OPSPEC_ENGINE="plain")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    # The examined files are in two packages (opspec, and opspec-spec for compare.rs), and
    # cargo-mutants mutates only the package at the root unless told otherwise; examine_globs
    # keeps the other members' files out.
    argv = ["nice", "-n", "10", "cargo", "mutants", "--workspace"] + args
    return subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        preexec_fn=limit,
        check=check,
        text=True,
        stdout=subprocess.PIPE if capture else None,
    )


def unit_test_modules(crate="crates/spec/src"):
    """The `<module>::tests::` prefix of every unit test module of a crate (by default
    opspec-spec's, whose compare.rs is the judge)."""
    prefixes = []
    for folder, _, files in os.walk(os.path.join(ROOT, crate)):
        for name in sorted(files):
            if not name.endswith(".rs"):
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                if not re.search(r"^\s*mod tests\b", f.read(), re.M):
                    continue
            module = os.path.relpath(path, os.path.join(ROOT, crate))[: -len(".rs")].split(os.sep)
            if module[-1] in ("mod", "lib"):
                module = module[:-1]
            if not module:
                # `--skip tests::` would match every test name, compare.rs's own included.
                sys.exit(f"{path}: a `mod tests` at the crate root cannot be skipped apart from "
                         "compare::tests; put the tests in a module of their own or a doc test")
            prefixes.append("::".join(module + ["tests", ""]))
    return sorted(prefixes)


def test_args(group):
    """cargo-mutants' arguments choosing the tests of a group's mutants: the conformance suite
    (.cargo/mutants.toml); for compare.rs, also its own unit tests. A judge that passes too much
    is seen only against a wrong output, which the reference never gives, so the suite alone
    cannot kill those mutants; compare.rs's tests give it wrong outputs. The crate's other unit
    tests are skipped (no conformance trial's name contains `tests::`)."""
    if group != "compare":
        return []
    # cargo-mutants hands what follows its own `--` to `cargo test`, so a second `--` passes the
    # skips to the test binaries.
    args = ["--cargo-arg=--lib", "--", "--"]
    for prefix in unit_test_modules():
        if prefix != "compare::tests::":
            args += ["--skip", prefix]
    return args


def stable_name(name):
    """A mutant's name without its line and column, which move with every edit above it."""
    return re.sub(r"^([^:]+):\d+:\d+:", r"\1:", name)


def group_filter(group, only=None):
    """cargo-mutants' filter arguments selecting a group's mutants, or those matching `only`
    among them. (cargo-mutants 27.1 lets struct-field deletions through every filter, so one
    such mutant of src/ops also runs in the other groups; `summary` counts each mutant once,
    in its own group.)"""
    include, exclude = GROUPS[group]
    args = ["--re", only or include]
    if exclude:
        args += ["--exclude-re", exclude]
    return args


def list_group(group):
    out = cargo_mutants(["--list", "--json"] + group_filter(group), capture=True).stdout
    return json.loads(out)


def head_commit():
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, text=True, stdout=subprocess.PIPE
    ).stdout.strip()


def tree_dirty():
    """Whether the work tree differs from HEAD (cargo-mutants copies the work tree, and the
    report names the commit)."""
    out = subprocess.run(
        ["git", "status", "--porcelain"],
        cwd=ROOT,
        check=True,
        text=True,
        stdout=subprocess.PIPE,
    ).stdout
    return bool(out.strip())


def run(groups, shard, jobs, only=None):
    commit = head_commit()
    if tree_dirty():
        sys.exit("error: the work tree has uncommitted changes; commit them first (the report names the commit)")
    for group in groups:
        out = os.path.join(OUT, group, time.strftime("%Y%m%dT%H%M%S", time.gmtime()))
        os.makedirs(out, exist_ok=True)
        # The group's whole list at this commit: the keys of the mutants (ordinals of repeats).
        listed = [m["name"] for m in list_group(group)]
        # A file of the group that gives no mutant is one cargo-mutants did not examine (a
        # package it does not mutate), not one without mutants.
        missing = [p for p in examined_files() if group_of(p + ":") == group and not any(n.startswith(p + ":") for n in listed)]
        if missing:
            sys.exit(f"error: cargo-mutants lists no mutant of {', '.join(missing)} (group {group})")
        with open(os.path.join(out, "list.json"), "w") as f:
            json.dump(listed, f, indent=1)
        args = [
            "-j", str(jobs),
            *group_filter(group, only),
            "-o", out,
            "--timeout", str(TEST_TIMEOUT),
            "--build-timeout", str(BUILD_TIMEOUT),
            "--colors", "never",
        ]
        if shard:
            args += ["--shard", shard, "--sharding", "round-robin"]
        args += test_args(group)
        started = time.time()
        info = {"group": group, "commit": commit, "shard": shard, "only": only, "jobs": jobs, "tests": test_args(group)}
        with open(os.path.join(out, "run.json"), "w") as f:
            json.dump(info, f, indent=1)
        # cargo-mutants exits 2 when a mutant survives, 3 on a timeout: verdicts, not failures.
        done = cargo_mutants(args, check=False)
        if done.returncode not in (0, 2, 3):
            sys.exit(f"error: cargo mutants failed on group {group} (exit {done.returncode})")
        info["seconds"] = round(time.time() - started, 1)
        with open(os.path.join(out, "run.json"), "w") as f:
            json.dump(info, f, indent=1)


# ----------------------------------------------------------------------------------------------
# Verdicts


def load_equivalent():
    if not os.path.exists(EQUIVALENT):
        return {}
    with open(EQUIVALENT, "rb") as f:
        data = tomllib.load(f)
    out = {}
    prefixes = tuple(k + ":" for k in KINDS)
    for key, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            sys.exit(f"{EQUIVALENT}: [{key!r}] needs a non-empty `reason` string")
        reason = " ".join(entry["reason"].split())
        if not reason.startswith(prefixes):
            sys.exit(f"{EQUIVALENT}: [{key!r}] reason must start with one of {', '.join(prefixes)}")
        out[key] = reason
    return out


def keyed(names):
    """Stable keys for mutant names in order: the name without line and column, with ` #2`,
    ` #3`... on repeats of the same change in the same function."""
    seen = {}
    keys = []
    for name in names:
        key = stable_name(name)
        seen[key] = seen.get(key, 0) + 1
        keys.append(key if seen[key] == 1 else f"{key} #{seen[key]}")
    return keys


STATUS = {
    "CaughtMutant": "killed",
    "MissedMutant": "survived",
    "Timeout": "timeout",
    "Unviable": "unviable",
}


def group_of(name):
    for group, (include, exclude) in GROUPS.items():
        if re.search(include, name) and not (exclude and re.search(exclude, name)):
            return group
    return None


def summary():
    """Gathers the verdicts of every run into target/mutation/reference.json and returns it.

    A group's mutants are those its latest run listed (the tree at that run's commit; the
    current tree for a group never run). Each keeps the verdict of the last run that tested it,
    matched by its key (its name without line and column); the mutants of the current tree
    that are not among them (code changed since the runs) are counted apart."""
    verdicts, runs, lists = {}, [], {}
    folders = []
    for group in GROUPS:
        base = os.path.join(OUT, group)
        if os.path.isdir(base):
            folders += [(os.path.basename(d), group, os.path.join(base, d)) for d in os.listdir(base)]
    for _, group, folder in sorted(folders):
        outcomes_path = os.path.join(folder, "mutants.out", "outcomes.json")
        if not os.path.exists(outcomes_path):
            continue
        with open(outcomes_path) as f:
            outcomes = json.load(f)
        with open(os.path.join(folder, "list.json")) as f:
            listed = json.load(f)
        with open(os.path.join(folder, "run.json")) as f:
            run_info = json.load(f)
        lists[group] = [n for n in listed if group_of(n) == group]
        key_of = {}
        for g in GROUPS:
            names = [n for n in listed if group_of(n) == g]
            key_of.update(zip(names, keyed(names)))
        ran = 0
        for o in outcomes["outcomes"]:
            scenario = o["scenario"]
            if not isinstance(scenario, dict) or "Mutant" not in scenario:
                continue
            name = scenario["Mutant"]["name"]
            if name not in key_of:
                continue
            ran += 1
            verdicts[key_of[name]] = {
                "status": STATUS.get(o["summary"], o["summary"]),
                "seconds": round(sum(p["duration"] for p in o["phase_results"]), 1),
                "run": os.path.basename(folder),
            }
        runs.append(dict(run_info, folder=os.path.relpath(folder, ROOT), ran=ran))
    mutants, changed = {}, []
    for group in GROUPS:
        current = [m["name"] for m in list_group(group) if group_of(m["name"]) == group]
        names = lists.get(group, current)
        for key, name in zip(keyed(names), names):
            entry = {"group": group, "name": name, "key": key}
            entry.update(verdicts.get(key, {"status": "not run"}))
            mutants[key] = entry
        listed_keys = set(keyed(names))
        changed += [key for key in keyed(current) if key not in listed_keys]
    data = {"runs": runs, "mutants": mutants, "changed_since": changed}
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as f:
        json.dump(data, f, indent=1)
    return data


# ----------------------------------------------------------------------------------------------
# Report


def reference_section():
    """The lines of docs/mutation.md's section on the reference, from target/mutation/reference.json."""
    lines = [
        "## The reference",
        "",
        "Each mutant is the reference interpreter with one change by",
        "[cargo-mutants](https://mutants.rs) (an operator replaced, a function's body replaced by a",
        "constant, a match arm or a `!` deleted) in its reference path: `src/ops` (the plans and",
        "their plain evaluations), `src/tensor.rs`, `src/float.rs` and `crates/spec/src/compare.rs`.",
        "`.cargo/mutants.toml` leaves out the serde, JSON Schema and `Debug` impls and the spec",
        "loader's checks (which no evaluation calls); the fast kernels (`crates/kernels`, layout maps",
        "in `crates/kernels/src/maps.rs`) are a crate of their own, tested against the plain",
        "evaluations, and not mutated here. A",
        "mutant is killed when the conformance suite, run on the reference's plain evaluations",
        "(`OPSPEC_ENGINE=plain cargo test -p opspec-runner --test conformance`), fails or hangs; one",
        "that does not compile (unviable) is not counted. `crates/spec/src/compare.rs` is the judge: a mutant",
        "that lets a wrong output pass shows only against a wrong output, which the reference never",
        "gives, so its mutants also face its own unit tests, which give it wrong outputs. A surviving",
        "mutant that no case can kill is listed with its reason in `mutants-equivalent.toml`.",
        "Regenerated by",
        "",
        "```",
        COMMAND,
        "```",
        "",
    ]
    if not os.path.exists(RESULTS):
        return lines + ["No campaign has run yet.", ""]
    with open(RESULTS) as f:
        data = json.load(f)
    equivalent = load_equivalent()
    ms = list(data["mutants"].values())
    ran = [m for m in ms if m["status"] != "not run"]
    viable = [m for m in ran if m["status"] != "unviable"]
    killed = [m for m in viable if m["status"] in ("killed", "timeout")]
    survived = [m for m in viable if m["status"] == "survived"]
    eq = [m for m in survived if m["key"] in equivalent]
    live = [m for m in survived if m["key"] not in equivalent]
    score = len(killed) / (len(viable) - len(eq)) if len(viable) > len(eq) else 1.0
    used = {m.get("run") for m in ms}
    used_runs = [r for r in data["runs"] if os.path.basename(r["folder"]) in used]
    per_mutant = sum(m["seconds"] for m in ran) / len(ran) if ran else 0.0
    print(f"one mutant took {per_mutant:.1f} s on average, build and suite", file=sys.stderr)
    described = []
    for r in used_runs:
        subset = f"mutants matching `{r['only']}`" if r.get("only") else f"round-robin shard {r['shard']}" if r.get("shard") else "all"
        described.append(f"`{r['group']}` {subset} on `{r['commit'][:12]}`")
    commits = sorted({r["commit"] for r in used_runs})
    examined = examined_files()
    same_src = len(commits) > 1 and all(
        subprocess.run(["git", "diff", "--quiet", commits[0], c, "--", *examined], cwd=ROOT).returncode == 0
        for c in commits[1:]
    )
    lines += [
        "The runs whose verdicts these are (group, subset, commit): " + ("; ".join(described) or "none") + "."
        + (" The examined files are the same in all of these commits." if same_src else ""),
        "",
    ]
    if len(ran) < len(ms):
        # Only these runs' verdicts count: a campaign on older code (before a file moved or a
        # function changed) says nothing of the current mutants, so none is carried over.
        untouched = [g for g in GROUPS if any(m["group"] == g for m in ms) and not any(m["group"] == g for m in ran)]
        partial = [g for g in GROUPS if any(m["group"] == g for m in ran) and any(m["group"] == g and m not in ran for m in ms)]
        lines += [
            f"This is a partial campaign: {len(ms) - len(ran)} of the {len(ms)} mutants have not been run"
            " on this code"
            + (" (" + "; ".join(
                [f"group `{g}` not at all" for g in untouched]
                + [f"group `{g}` only in part" for g in partial]) + ")" if untouched or partial else "")
            + ", and have no verdict: the figures below say nothing of them, and no verdict of a run on"
            " older code is carried over to them.",
            "",
        ]
    lines += [
        "| | mutants |",
        "|---|---|",
        f"| total | {len(ms)}" + (f" ({len(ran)} run, {len(ms) - len(ran)} not run yet: the figures below cover the run ones)" if len(ran) < len(ms) else "") + " |",
        f"| unviable (do not compile) | {len(ran) - len(viable)} |",
        f"| viable, run | {len(viable)} |",
        f"| killed (of which by a timeout) | {len(killed)} ({sum(m['status'] == 'timeout' for m in killed)}) |",
        f"| survived, listed as not killable | {len(eq)} ({100 * len(eq) / len(viable) if viable else 0:.1f} % of the viable) |",
    ] + [
        f"| - {kind.lower()} | {sum(equivalent[m['key']].startswith(kind + ':') for m in eq)} |" for kind in KINDS
    ] + [
        f"| survived, not equivalent | {len(live)} |",
        f"| **score** (killed / non-equivalent) | **{100 * score:.1f} %** |",
        "",
        # The time per mutant goes to stderr, not to the page: it has no date or machine with it
        # (scripts/benchmarks/test_figures.py).
        "",
        "Per group:",
        "",
        "| group | mutants | run | unviable | killed | equivalent | survived |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in GROUPS:
        g = [m for m in ms if m["group"] == group]
        if not g:
            continue
        lines.append(
            f"| `{group}` | {len(g)} | {sum(m in ran for m in g)} | {sum(m['status'] == 'unviable' for m in g)} "
            f"| {sum(m in killed for m in g)} | {sum(m in eq for m in g)} | {sum(m in live for m in g)} |"
        )
    changed = data.get("changed_since", [])
    if changed:
        lines += [
            "",
            f"The reference has changed since these runs: {len(changed)} mutants of the current tree",
            "are not among those above (new or moved code; `run` again to test them).",
        ]
    if live:
        lines += ["", "### Surviving mutants of the reference", "", "| mutant |", "|---|"]
        for m in live:
            lines.append(f"| `{md_cell(m['key'])}` |")
    lines += ["", "### Equivalent mutants of the reference", ""]
    if eq:
        lines += ["| mutant | why no case can kill it |", "|---|---|"]
        for m in eq:
            lines.append(f"| `{md_cell(m['key'])}` | {md_cell(equivalent[m['key']])} |")
    else:
        lines.append("None.")
    stale = sorted(set(equivalent) - set(data["mutants"]))
    killed_eq = sorted(m["key"] for m in killed if m["key"] in equivalent)
    if stale or killed_eq:
        lines += ["", "### Stale entries of mutants-equivalent.toml", ""]
        lines += [f"- `{md_cell(k)}`: no such mutant any more" for k in stale]
        lines += [f"- `{md_cell(k)}`: listed as equivalent, but killed" for k in killed_eq]
    return lines + [""]


def examined_files():
    """The files .cargo/mutants.toml's examine_globs match, relative to the checkout."""
    with open(CONFIG, "rb") as f:
        config = tomllib.load(f)
    return sorted(
        {os.path.relpath(p, ROOT) for pattern in config.get("examine_globs", []) for p in globlib.glob(os.path.join(ROOT, pattern), recursive=True)}
    )


def check():
    """The configuration's consistency, without cargo-mutants (see the module doc): the
    problems found, one line each."""
    with open(CONFIG, "rb") as f:
        config = tomllib.load(f)
    problems = []
    examined = []
    for pattern in config.get("examine_globs", []):
        found = sorted(os.path.relpath(p, ROOT) for p in globlib.glob(os.path.join(ROOT, pattern), recursive=True))
        if not found:
            problems.append(f"{CONFIG}: examine_globs {pattern!r} matches no file")
        examined += found
    for path in examined:
        groups = [g for g, (include, _) in GROUPS.items() if re.search(include, path + ":")]
        if not groups and not re.search(GROUPS["ops"][0], path):
            problems.append(f"{path}: examined, but in no group of scripts/mutation/mutate_reference.py")
    source = {}
    for path in examined:
        with open(os.path.join(ROOT, path)) as f:
            source[path] = f.read()
    everything = "\n".join(source.values())
    # A function named `Type::name`, `name` or `mod::` in an exclusion: its last identifier.
    for pattern in config.get("exclude_re", []):
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", pattern.replace("replace ", "").replace(" in ", " "))
        words = [w for w in words if w not in ("impl", "for", "fmt")]
        if words and not all(re.search(r"\b" + re.escape(w) + r"\b", everything) for w in words):
            problems.append(f"{CONFIG}: exclude_re {pattern!r} names something no examined file has")
    for key in load_equivalent():
        path, _, change = key.partition(": ")
        if path not in source:
            problems.append(f"{EQUIVALENT}: [{key!r}] is in no examined file")
            continue
        function = re.sub(r" #\d+$", "", change).rpartition(" in ")[2] if " in " in change else None
        if function is None:
            # `replace Type::name -> T with value`
            named = re.match(r"replace ([A-Za-z_:]+) ->", change)
            function = named.group(1) if named else None
        if function:
            name = function.split("::")[-1]
            if not re.search(r"\bfn " + re.escape(name) + r"\b", source[path]):
                problems.append(f"{EQUIVALENT}: [{key!r}] names `{function}`, which {path} no longer has")
    return problems


def folder_name(text):
    if not re.fullmatch(r"[A-Za-z0-9_-]+", text) or text == "reference":
        raise argparse.ArgumentTypeError(f"{text!r}: a plain folder name (letters, digits, - and _), not `reference`")
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list")
    p.add_argument("--group", nargs="*", choices=list(GROUPS), default=list(GROUPS))
    p = sub.add_parser("run")
    p.add_argument("--group", nargs="*", choices=list(GROUPS), default=list(GROUPS))
    p.add_argument("--shard", help="K/N: cargo-mutants' round-robin shard K (from 0) of N of each group")
    p.add_argument("--only", help="instead of the whole group, the mutants whose names match this regex (tested as the group's)")
    p.add_argument("--jobs", type=int, default=1, choices=[1],
                   help="1 only: the builds share one target folder (CARGO_TARGET_DIR), so two jobs "
                   "would test each other's binaries")
    p.add_argument("--build", default="build", type=folder_name,
                   help="the target folder of the builds, under target/mutation (default build): "
                   "two runs at once need two folders")
    sub.add_parser("summary")
    sub.add_parser("report")
    sub.add_parser("check")
    args = parser.parse_args(argv)
    if args.command == "list":
        for group in args.group:
            for m in list_group(group):
                print(f"{group}\t{m['name']}")
    elif args.command == "run":
        global BUILD
        BUILD = os.path.join(ROOT, "target", "mutation", args.build)
        run(args.group, args.shard, args.jobs, args.only)
        summary()
    elif args.command == "summary":
        data = summary()
        ran = [m for m in data["mutants"].values() if m["status"] != "not run"]
        print(f"{len(data['mutants'])} mutants, {len(ran)} run; wrote {os.path.relpath(RESULTS, ROOT)}", file=sys.stderr)
        equivalent = load_equivalent()
        for m in ran:
            if m["status"] == "survived" and m["key"] not in equivalent:
                print(f"survived: {m['key']}")
    elif args.command == "report":
        summary()
        replace_sections({"The reference": reference_section()}, ORDER)
        print("wrote the reference's section of docs/mutation.md", file=sys.stderr)
    elif args.command == "check":
        problems = check()
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
