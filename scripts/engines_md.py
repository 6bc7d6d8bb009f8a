#!/usr/bin/env python3
"""Writes docs/engines.md from the engine adapters' manifests and known-failures files
(runner/backends/*/engine.toml, read by scripts/engines.py; the files' format is in
runner/src/judge/expectations.rs): where each engine differs from TensorRT, per clause, with the number
of trials each entry matches; and the list of engines in README.md, between its `<!-- engines`
markers. Neither is edited by hand; `--check` fails when either is not what this script writes
(runner/tests/engines.rs).
Its section "Across versions" is docs/versions.md, which `scripts/version_matrix.py --docs` writes.

    python3 scripts/engines_md.py [--check] [--runner PATH]

The trials an entry matches are the runner's own answer: the suite is run once per file against
the built-in reference (PATH, or `cargo run -q -p opspec-runner --bin runner`) with the file as
its expectations, where every matched trial passes and is reported as a stale entry naming its
line. So selectors by name, `prefix*`, `clause` and `clause in ...` count as the runner matches
them, trials the engine's hello excludes included.
"""

import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import engines as manifests

ROOT = manifests.ROOT
PAGE = os.path.join(ROOT, "docs", "engines.md")
README = os.path.join(ROOT, "README.md")
README_BEGIN = "<!-- engines: written by scripts/engines_md.py from runner/backends/*/engine.toml -->"
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


def matched_per_line(runner, path):
    """{line number: trials matched} of a known-failures file, as the runner matches them."""
    with tempfile.TemporaryDirectory() as scratch:
        report = os.path.join(scratch, "report.json")
        command = runner_command(runner) + ["-q", "--expectations", path, "--report-json", report, "--backend-log", os.path.join(scratch, "log")]
        run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        if not os.path.exists(report):
            sys.exit(f"{path}: the runner refused the file:\n{run.stderr}")
        trials = json.load(open(report, encoding="utf-8"))["trials"]
    counts = collections.Counter()
    for trial in trials:
        m = re.search(r"remove line (\d+) ", trial["message"])
        if trial["status"] == "failed" and m:
            counts[int(m.group(1))] += 1
    return counts


def entries(path):
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        # A last field starting with `if` is the entry's condition on the run's facts.
        condition = None
        head, _, last = line.rpartition("|")
        if head and last.strip().startswith("if "):
            line, condition = head.strip(), last.strip()[3:].strip()
        fields = [f.strip() for f in line.split("|", 3)]
        if len(fields) != 4:
            sys.exit(f"{path}:{number}: expected `<selector> | <clause> | <class> | <reason>`")
        if condition:
            fields[3] += f" (only where `{condition}`)"
        yield [number] + fields


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


def matches(pattern, name):
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern

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
    rows = [("shuffle", ["shuffle"]), ("scale", ["scale"]), ("as_strided", ["as_strided"])]
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
    """The section "Across versions": docs/versions.md, which `scripts/version_matrix.py --docs`
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


def page(runner):
    rule = rules()
    engines = []
    for engine, manifest in ENGINES.items():
        path = os.path.join(ROOT, manifest["expectations"])
        counts = matched_per_line(runner, path)
        # (clause, class) -> [trial count, reasons in file order]
        rows = collections.OrderedDict()
        for number, _selector, clause, cls, reason in entries(path):
            row = rows.setdefault((clause, cls), [0, []])
            row[0] += counts[number]
            if reason not in row[1]:
                row[1].append(reason)
        engines.append((engine, path, rows))

    out = [
        "# Where the engines differ from TensorRT",
        "",
        "Generated by `scripts/engines_md.py` from the engine adapters' known-failures files; do not",
        "edit by hand (`python3 scripts/engines_md.py` rewrites it, and a test checks it is up to date).",
        "Each row is a clause of `specs/*.clauses.yaml` that the engine breaks, the class of the",
        "difference, the number of trials of the suite its entries match, and the reasons given.",
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
        "python3 scripts/engines.py install xla",
        "python3 scripts/engines.py run xla --runner target/release/runner",
        "```",
        "",
        "The runs side by side (the reference and every engine), as `runner report --html` draws them (a",
        "build-only engine's trials are shape-checked, never passed); `scripts/engines_report.sh` makes",
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
        out += [
            "",
            f"## {ENGINE_NAMES.get(engine, engine)}",
            "",
            f"`{os.path.relpath(path, ROOT)}`: {len(rows)} clauses, {total} trials. Mapping and run command: "
            f"[runner/backends/{engine}/README.md](../runner/backends/{engine}/README.md).",
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
    parser.add_argument("--runner", help="the runner binary that matches the entries")
    args = parser.parse_args()
    for path, text in ((README, readme()), (PAGE, page(args.runner))):
        name = os.path.relpath(path, ROOT)
        if args.check:
            current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            if current != text:
                sys.exit(f"{name} is not up to date: run python3 scripts/engines_md.py")
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
