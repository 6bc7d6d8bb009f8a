#!/usr/bin/env python3
"""Writes docs/engines.md from the engine adapters' manifests, their known-failures files and the
JSON reports of their runs (runner/backends/*/engine.toml, read by scripts/engines/engines.py): where each
engine differs from TensorRT, per clause, with the number of trials of its run each entry
matched; and the list of engines in README.md, between its `<!-- engines` markers. Neither is
edited by hand; `--check` fails when either is not what this script writes (runner/tests/engines.rs).
Its section "Across versions" is docs/versions.md, which `scripts/engines/version_matrix.py --docs` writes.

    python3 scripts/engines/engines_md.py --reports DIR [--runner PATH]    counts from the runs' reports
    python3 scripts/engines/engines_md.py [--check] [--runner PATH]        from docs/engine-runs.json

The known-failures files are read through the runner (`runner expectations FILE --facts REPORT
--json`: PATH, or `cargo run -q -p opspec-runner --bin runner`), never parsed here. The counts are
the runs' own: DIR holds `<engine>.json` for every engine, the JSON report of its run as CI makes
it (`python3 scripts/engines/engines.py run ENGINE --ci -- -q --report-json DIR/ENGINE.json`, or
scripts/engines/engines_report.sh, which writes target/engines-report/), and a trial counts for the entry
that made it a known failure in that run (the report's `known_failure_entries`); trials the
engine's hello excludes are never counted. A missing report, a report of a part of a run, or one
made with another version of the known-failures file stops the script. What it takes from the
reports is kept in docs/engine-runs.json, from which the page is written again without them: a
known-failures file whose entries differ from those of its run stops the script, since its
counts would then be another file's.
"""

import argparse
import collections
import datetime
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import engines as manifests

ROOT = manifests.ROOT
PAGE = os.path.join(ROOT, "docs", "engines.md")
README = os.path.join(ROOT, "README.md")
README_BEGIN = "<!-- engines: written by scripts/engines/engines_md.py from runner/backends/*/engine.toml -->"
README_END = "<!-- end of engines -->"
CLASSES = {
    "semantics": "the engine's semantics differ from TensorRT's",
    "defect": "a defect of the engine",
    "adapter": "the adapter's own limit",
}
try:
    ENGINES = manifests.manifests()
except manifests.ManifestError as e:
    sys.exit(str(e))
ENGINE_NAMES = {name: manifests.label(manifest) for name, manifest in ENGINES.items()}


def runner_command(runner):
    return [runner] if runner else list(manifests.RUNNER)


RUNS = os.path.join(ROOT, "docs", "engine-runs.json")
REPORT_COMMAND = "python3 scripts/engines/engines.py run {engine} --ci -- -q --report-json {folder}/{engine}.json"


def listing(runner, path, report=None):
    """The runner's listing of a known-failures file (`runner expectations --json`): its
    fingerprint and every entry, with whether its condition held on the report's facts."""
    command = runner_command(runner) + ["expectations", path, "--json"]
    if report:
        command += ["--facts", report]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{os.path.relpath(path, ROOT)}: the runner refused the file:\n{run.stderr}")
    return json.loads(run.stdout)


def key(entry):
    """What an entry claims, as one string: a run's count of it holds while these stay."""
    return " | ".join([entry["selector"], entry["clause"], entry["class"], "if " + entry["condition"] if entry.get("condition") else ""])


def date_of(path):
    return datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc).strftime("%Y-%m-%d")


def from_report(runner, engine, manifest, folder):
    """What the page needs of one engine's run: each entry's trials, the run's known failures,
    and its trials per op, native and composed. Stops on a report that is missing, partial, or
    made with another known-failures file or adapter."""
    path = os.path.join(folder, f"{engine}.json")
    again = REPORT_COMMAND.format(engine=engine, folder=os.path.relpath(folder, ROOT) if os.path.isabs(folder) else folder)
    if not os.path.isfile(path):
        sys.exit(f"{path}: no report of {engine}'s run; make it with `{again}` (or scripts/engines/engines_report.sh for every engine)")
    try:
        report = json.load(open(path, encoding="utf-8"))
    except ValueError as e:
        sys.exit(f"{path}: not a JSON report ({e}); make it again with `{again}`")
    run = report.get("run", {})
    expectations = os.path.join(ROOT, manifest["expectations"])
    listed = listing(runner, expectations, path)
    problem = None
    if run.get("partition"):
        problem = f"it is part {run['partition']} of a run (join the parts with `runner merge`)"
    elif run.get("backend_command") != manifest["backend"]:
        problem = f"its backend is `{run.get('backend_command')}`, not the manifest's `{manifest['backend']}`"
    elif run.get("expectations") != listed["fingerprint"]:
        problem = f"it was made with another version of {manifest['expectations']} (fingerprint {run.get('expectations') or 'none'}, the file's now {listed['fingerprint']})"
    trials = report.get("trials", [])
    known = [t for t in trials if t.get("status") == "known_failure"]
    per_line = {m["line"]: len(m["trials"]) for m in report.get("known_failure_entries", [])}
    if problem is None and not (len(known) == report.get("known_failures") == sum(per_line.values())):
        problem = f"its known failures do not add up ({len(known)} trials of that status, `known_failures` {report.get('known_failures')}, {sum(per_line.values())} under `known_failure_entries`)"
    if problem:
        sys.exit(f"{path}: {problem}; run it again: `{again}`")
    lines = {entry["line"] for entry in listed["entries"]}
    if set(per_line) - lines:
        sys.exit(f"{path}: known failures under lines {sorted(set(per_line) - lines)}, which are no entries of {manifest['expectations']}; run it again: `{again}`")
    ops = collections.OrderedDict()
    for trial in trials:
        if trial.get("status") in ("excluded", "not_run"):
            continue
        op = ops.setdefault(trial["op"], {"trials": 0, "composed": 0})
        op["trials"] += 1
        op["composed"] += bool(trial.get("composed"))
    facts = report.get("facts", {})
    return {
        "report": f"{engine}.json of {date_of(path)}",
        "command": shlex.join(manifests.run_command(manifest, "runner", ci=True)),
        "runner": run.get("runner", ""),
        "engine": " ".join(filter(None, [facts.get("engine"), facts.get("version")])),
        "machine": " ".join(filter(None, [facts.get("cpu_model"), facts.get("os"), facts.get("arch")])),
        "selected": run.get("selected", len(trials)),
        "excluded": report.get("excluded", 0),
        "known_failures": report.get("known_failures", 0),
        "ops": dict(sorted(ops.items())),
        "entries": [
            {"key": key(entry), "trials": per_line.get(entry["line"], 0), "held": entry.get("held", True)}
            for entry in listed["entries"]
        ],
    }


def read_runs(runner, folder):
    """{engine: its run} from the reports in `folder` (written to docs/engine-runs.json), or
    from docs/engine-runs.json without a folder; the engines' current entries must be the ones
    their runs counted."""
    if folder:
        runs = {engine: from_report(runner, engine, manifest, folder) for engine, manifest in ENGINES.items()}
    else:
        if not os.path.exists(RUNS):
            sys.exit(f"{os.path.relpath(RUNS, ROOT)} is missing: run the engines and `python3 scripts/engines/engines_md.py --reports DIR`")
        runs = json.load(open(RUNS, encoding="utf-8"))
        absent = [engine for engine in ENGINES if engine not in runs]
        if absent:
            sys.exit(f"{os.path.relpath(RUNS, ROOT)} has no run of {', '.join(absent)}: make the reports ({REPORT_COMMAND.format(engine='ENGINE', folder='DIR')}) and run `python3 scripts/engines/engines_md.py --reports DIR`")
    return runs


def entries(runner, engine, manifest, run):
    """[(entry, trials its run counted, held on that run)] of the engine's known-failures file
    as the runner reads it, paired with its run's counts entry by entry."""
    path = os.path.join(ROOT, manifest["expectations"])
    listed = listing(runner, path)["entries"]
    counted = run["entries"]
    if [key(e) for e in listed] != [c["key"] for c in counted]:
        now = {key(e) for e in listed}
        then = {c["key"] for c in counted}
        changed = sorted(now - then)[:3] + sorted(then - now)[:3]
        sys.exit(
            f"{manifest['expectations']}: its entries are not those its run counted ({'; '.join(changed) or 'their order changed'}): "
            f"make {engine}'s report again (`{REPORT_COMMAND.format(engine=engine, folder='DIR')}`) and run `python3 scripts/engines/engines_md.py --reports DIR`"
        )
    return [(e, c["trials"], c["held"]) for e, c in zip(listed, counted)]


def rules():
    """clause id -> rule text, read from specs/*.clauses.yaml (`- id:` then `rule:`)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "specs", "*.clauses.yaml"))):
        current = None
        for line in open(path, encoding="utf-8"):
            m = re.match(r"\s*- id:\s*(\S+)", line)
            if m:
                current = m.group(1)
                continue
            m = re.match(r'\s*rule:\s*"?(.*?)"?\s*$', line)
            if m and current:
                found[current] = m.group(1)
                current = None
    return found


def builder_settled():
    """[(clause, status, rule, source)] of the clauses whose source cites TensorRT-RTX's builder
    (`runner/backends/tensorrt_rtx`): the rules its evidence settled or changed."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "specs", "*.clauses.yaml"))):
        clause = {}
        for line in open(path, encoding="utf-8").read().split("\n") + ["  - id: end"]:
            m = re.match(r'\s*(?:- )?(id|rule|source|status):\s*"?(.*?)"?\s*$', line)
            if not m:
                continue
            if m.group(1) == "id":
                if "runner/backends/tensorrt_rtx" in clause.get("source", ""):
                    found.append((clause["id"], clause["status"], clause["rule"], clause["source"]))
                clause = {}
            clause[m.group(1)] = m.group(2)
    return found


def reproducers():
    """[(engine, path, title, spec, engine's answer)] from runner/backends/*/repro/*.py: each
    reproducer's docstring has a title, then `Spec:` and `Engine:` paragraphs."""
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "runner", "backends", "*", "repro", "*.py"))):
        text = open(path, encoding="utf-8").read()
        m = re.search(r'"""(.*?)"""', text, re.S)
        doc = m.group(1).strip() if m else ""
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n|\n(?=[A-Z][a-z]+: )", doc)]
        fields = {}
        for p in paragraphs[1:]:
            key, _, value = p.partition(": ")
            fields[key] = value
        engine = os.path.basename(os.path.dirname(os.path.dirname(path)))
        found.append((engine, os.path.relpath(path, ROOT), paragraphs[0], fields.get("Spec", ""), fields.get("Engine", "")))
    return found




def native_and_composed():
    """Per op, mode and format, whether each engine implements it or its adapter composes it from
    other operations (the manifests' `[composed]`, which the adapters' hellos declare)."""
    rows = [(op, [op]) for op in manifests.OPS if op not in ("slice", "reformat")]
    rows += [(f"slice {m}", ["slice", f"slice:{m}"]) for m in manifests.SLICE_MODES]
    rows += [(f"reformat {f}", ["reformat", f"reformat:{f}"]) for f in manifests.FORMATS]
    out = [
        "",
        "## Native and composed",
        "",
        "Whether each engine's own operation is judged (native), or an operation the adapter builds from",
        "other operations of the engine: a Gather of indices it computes, a pad-reshape-transpose",
        "chain (composed, which judges those other operations, not the engine's own of this rule). From",
        "the manifests' `[composed]` tables, which the adapters' hellos declare; a run's report counts",
        "the trials of each apart (console, JSON, HTML). Not run: the adapter's hello leaves it out (its",
        "manifest's `not_declared`, checked against the hello), so its trials are excluded, not judged.",
        "",
        "| op, mode or format | " + " | ".join(ENGINE_NAMES.get(e, e) for e in ENGINES) + " |",
        "|---|" + "---|" * len(ENGINES),
    ]
    for label, keys in rows:
        cells = []
        for manifest in ENGINES.values():
            composed = {k.lower(): v for k, v in manifest.get("composed", {}).items()}
            undeclared = {k.lower() for k in manifest.get("not_declared", [])}
            if any(k.lower() in undeclared for k in keys):
                cells.append("not run")
            elif any(k.lower() in composed for k in keys):
                cells.append("composed")
            else:
                cells.append("native")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return out


def across_versions():
    """The section "Across versions": docs/versions.md, which `scripts/engines/version_matrix.py --docs`
    writes (its first line, a comment naming the writer, left out)."""
    path = os.path.join(ROOT, "docs", "versions.md")
    if not os.path.exists(path):
        return []
    lines = open(path, encoding="utf-8").read().rstrip("\n").split("\n")
    if lines and lines[0].startswith("<!--"):
        lines = lines[1:]
    while lines and not lines[0].strip():
        lines = lines[1:]
    return ["", "## Across versions", "", "What changes when an engine is upgraded (docs/versions.md, written by the matrix):", ""] + lines


def composed_counts(runs):
    """Per op, each engine's trials its run judged, and how many of them the adapter composed
    from other operations of the engine (as the replies said: the report's `composed`)."""
    ops = sorted({op for run in runs.values() for op in run["ops"]})
    out = [
        "",
        "Per op, the trials each engine's run judged (sent, not excluded by the hello), and of them",
        "those whose reply named a composed path (docs/protocol.md, \"Composed as it happened\"): the",
        "rest are the engine's own operation.",
        "",
        "| op | " + " | ".join(ENGINE_NAMES.get(e, e) for e in ENGINES) + " |",
        "|---|" + "---:|" * len(ENGINES),
    ]
    for op in ops:
        cells = []
        for engine in ENGINES:
            count = runs[engine]["ops"].get(op)
            cells.append(f"{count['trials']} ({count['composed']} composed)" if count else "")
        out.append(f"| {op} | " + " | ".join(cells) + " |")
    return out


def page(runner, runs):
    rule = rules()
    engines = []
    for engine, manifest in ENGINES.items():
        path = os.path.join(ROOT, manifest["expectations"])
        # (clause, class) -> [trial count, reasons in file order]
        rows = collections.OrderedDict()
        for entry, count, held in entries(runner, engine, manifest, runs[engine]):
            reason = entry["reason"]
            if entry.get("condition"):
                reason += f" (only where `{entry['condition']}`{'' if held else '; it did not hold on the run'})"
            row = rows.setdefault((entry["clause"], entry["class"]), [0, []])
            row[0] += count
            if reason not in row[1]:
                row[1].append(reason)
        engines.append((engine, path, rows))

    out = [
        "# Where the engines differ from TensorRT",
        "",
        "Generated by `scripts/engines/engines_md.py` from the engine adapters' known-failures files and the JSON",
        "reports of their runs; do not edit by hand (a test checks it is up to date). Each row is a clause",
        "of `specs/*.clauses.yaml` that the engine breaks, the class of the difference, the number of",
        "trials its run made known failures under its entries (trials the engine's hello excludes are",
        "not counted: they are not run), and the reasons given. Each engine's column adds up to its run's",
        "known failures; its section below names the run. To count again after the runs:",
        "",
        "```sh",
        "for engine in $(python3 scripts/engines/engines.py list); do",
        "    " + REPORT_COMMAND.format(engine="$engine", folder="target/engines-report"),
        "done",
        "python3 scripts/engines/engines_md.py --reports target/engines-report",
        "```",
        "",
        "Classes: " + "; ".join(f"`{c}`: {text}" for c, text in CLASSES.items()) + ".",
        "Each engine runs in its default configuration (a setting an adapter makes has its reason in the",
        "adapter's README and a reproducer below); each run before and after the adapters expressed",
        "TensorRT's rules with the engines' own ops is in BENCHMARKS.md, \"Engine adapters\".",
        "",
        "Every engine runs in CI (`.ci/run`), green with its known failures (README.md, \"Real engines\",",
        "lists them with the runner flags of their runs; each adapter's README says why). A build-only",
        "engine judges rejections and output dtypes and shapes, no values. One engine's run, from the",
        "repository root: the runner with the adapter, its known failures and its flags (`--ci`: only",
        "the trials its manifest names for CI, when not all):",
        "",
        "```sh",
        "python3 scripts/engines/engines.py install xla",
        "python3 scripts/engines/engines.py run xla --runner target/release/runner",
        "```",
        "",
        "The runs side by side (the reference and every engine), as `runner report --html` draws them (a",
        "build-only engine's trials are shape-checked, never passed); `scripts/engines/engines_report.sh` makes",
        "the runs, the page and this screenshot:",
        "",
        "![The cross-engine conformance page](images/engines-report.png)",
        "",
        "## Summary",
        "",
        "| clause | rule | " + " | ".join(ENGINE_NAMES.get(e, e) for e, _, _ in engines) + " |",
        "|---|---|" + "---:|" * len(engines),
    ]
    clauses = sorted({clause for _, _, rows in engines for clause, _ in rows})
    for clause in clauses:
        cells = []
        for _, _, rows in engines:
            counts = [(cls, row[0]) for (c, cls), row in rows.items() if c == clause]
            cells.append(", ".join(f"{n} {cls}" for cls, n in counts) if counts else "")
        out.append(f"| `{clause}` | {rule.get(clause, '')} | " + " | ".join(cells) + " |")
    out += native_and_composed()
    out += composed_counts(runs)
    out += [
        "",
        "## Clauses the TensorRT-RTX builder settled",
        "",
        "TensorRT-RTX's builder runs without a GPU, so its adapter judges every case by building it",
        "(`build_only`: rejections and output dtypes and shapes, no values; runner/backends/tensorrt_rtx/README.md).",
        "Where the documents were silent or the suite's reading was inferred and the builder settles it, the",
        "clause cites the builder's message; these are those clauses, each reproducible with the adapter:",
        "",
        "| clause | status | rule | the builder's evidence |",
        "|---|---|---|---|",
    ]
    for clause, status, text, source in builder_settled():
        out.append(f"| `{clause}` | {status} | {text} | {source} |")
    out += [
        "",
        "## Engine defects found",
        "",
        "Where an engine contradicts its own specification, each shown by a standalone script that calls",
        "the engine directly (no adapter) and prints its answer beside the specification's; it exits 0",
        "while the defect is there, and `runner/tests/engines.rs` runs every one, so a fixed engine is",
        "noticed. Where the adapter can write the case another way with the engine's own ops, it does,",
        "and no trial fails for the defect; a `defect` entry in the tables below names its script.",
        "",
    ]
    found = reproducers()
    # `config_*.py`: what a configuration setting changes (why an adapter uses one, or not).
    defects = [r for r in found if not os.path.basename(r[1]).startswith("config_")]
    settings = [r for r in found if os.path.basename(r[1]).startswith("config_")]
    for heading, group in ((None, defects), ("### Configuration findings", settings)):
        if heading and group:
            out += [
                "",
                heading,
                "",
                "What a setting of the engine changes, shown the same way: why an adapter sets it, or does not.",
                "",
            ]
        for engine, script, title, spec, answer in group:
            out += [
                f"- **{ENGINE_NAMES.get(engine, engine)}**: {title} [`{script}`](../{script})",
                f"  - specification: {spec}",
                f"  - engine: {answer}",
            ]
    out += across_versions()
    for engine, path, rows in engines:
        total = sum(row[0] for row in rows.values())
        run = runs[engine]
        out += [
            "",
            f"## {ENGINE_NAMES.get(engine, engine)}",
            "",
            f"`{os.path.relpath(path, ROOT)}`: {len(rows)} clauses, {total} trials. Mapping and run command: "
            f"[runner/backends/{engine}/README.md](../runner/backends/{engine}/README.md).",
            f"Counted from the report {run['report']}: `{run['command']}` ({run['engine']} on {run['machine']}, "
            f"runner {run['runner']}); {run['selected']} trials selected, {run['excluded']} excluded by the hello, "
            f"{run['known_failures']} known failures.",
            "",
            "| clause | class | trials | reason |",
            "|---|---|---:|---|",
        ]
        for (clause, cls), (count, reasons) in sorted(rows.items()):
            out.append(f"| `{clause}` | {cls} | {count} | {'; '.join(reasons)} |")
    return "\n".join(out) + "\n"


def readme():
    """README.md with its list of engines (between the markers) as the manifests give it."""
    text = open(README, encoding="utf-8").read()
    if text.count(README_BEGIN) != 1 or text.count(README_END) != 1:
        sys.exit(f"README.md: expected one line `{README_BEGIN}` and one `{README_END}`")
    head, rest = text.split(README_BEGIN)
    _, tail = rest.split(README_END)
    rows = [
        "| engine | adapter | runner flags | CI runs |",
        "|---|---|---|---|",
    ]
    for name, manifest in ENGINES.items():
        flags = f"`{' '.join(manifest['options'])}`" if manifest["options"] else ""
        ci = "every trial" if manifest["ci"] == "whole" else f"the trials `{manifest['ci']}`"
        rows.append(f"| {ENGINE_NAMES[name]} | [`runner/backends/{name}/`](runner/backends/{name}/) | {flags} | {ci} |")
    return head + README_BEGIN + "\n" + "\n".join(rows) + "\n" + README_END + tail


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if docs/engines.md or README.md is not up to date")
    parser.add_argument("--runner", help="the runner binary that reads the known-failures files")
    parser.add_argument("--reports", metavar="DIR", help="count from the JSON reports DIR/<engine>.json of the engines' runs (and write docs/engine-runs.json)")
    args = parser.parse_args()
    runs = read_runs(args.runner, args.reports)
    for engine, run in runs.items():
        counted = sum(e["trials"] for e in run["entries"])
        if counted != run["known_failures"]:
            sys.exit(f"{os.path.relpath(RUNS, ROOT)}: {engine}'s entries count {counted} trials, its run {run['known_failures']} known failures")
    outputs = [(README, readme()), (PAGE, page(args.runner, runs))]
    if args.reports:
        outputs.append((RUNS, json.dumps(runs, indent=1, sort_keys=True) + "\n"))
    for path, text in outputs:
        name = os.path.relpath(path, ROOT)
        if args.check:
            current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if current != text:
                how = f"python3 scripts/engines/engines_md.py --reports {args.reports}" if args.reports else "python3 scripts/engines/engines_md.py"
                sys.exit(f"{name} is not up to date: run {how}")
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
