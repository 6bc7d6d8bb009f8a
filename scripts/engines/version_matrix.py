#!/usr/bin/env python3
"""Runs an engine adapter at several released versions of its engine, each in a virtual
environment of its own, and shows what changed from one version to the next, clause by clause.

    python3 scripts/engines/version_matrix.py [ENGINE ...] [--runner PATH] [--docs] [--no-run]

ENGINE is an engine whose manifest, runner/backends/<engine>/engine.toml, has a table
`version_matrix` (default: all of them): its pip package, the versions to run besides the pinned
one, per version the pins that replace the adapter's, and notes for docs/versions.md
(CONTRIBUTING.md, "Adding an engine"). For each version, `python3 -m venv
target/version-matrix/<engine>-<version>/` gets that version of the engine and the adapter's
other pins (runner/backends/<engine>/requirements.txt, with the version's overrides); an environment whose `.requirements` file lists the same packages is
reused. Each version then runs the whole suite with the adapter as it is in the work tree
(`nice`, one backend process) and writes target/version-matrix/<engine>-<version>.json.

The runs take no expectations file: the pinned known-failures file describes the pinned version
only, and with it an older version's differences would show as a mix of failures and stale
entries. Without it each report holds the engine's raw statuses (passed, failed, unsupported,
...), so the diff of two consecutive versions is what an upgrade changes, whatever the file says.

Then, per engine and per pair of consecutive versions, `runner diff OLD NEW` (its "by clause"
section is the change table: README.md, "Reports across engines") goes to
target/version-matrix/<engine>-<old>-to-<new>.diff.txt, and `runner report` draws every report
on target/version-matrix/index.html, whose "Across versions" section has a per-clause change
table per engine. With --docs the summary is written to docs/versions.md, which
scripts/engines/engines_md.py includes in docs/engines.md under "Across versions". With --no-run the
reports (and times, target/version-matrix/times.json) of the last run are taken as they are, to
redraw the page and the summary. Every report must be of the version it is filed under (its
`facts.version`, from the adapter's hello, compared as versions): a report copied under another
version, or a run where pip installed another, stops the script (exit code 2), as does a report or
a times.json that is not what it should be (the times are measured again when the matrix runs).

The runner is PATH, or target/release/runner (built with `cargo build --release -p
opspec-runner` when missing). Needs network for pip the first time; not part of `cargo test`.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engines as manifests  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "target", "version-matrix")
DOC = os.path.join(ROOT, "docs", "versions.md")



def matrix():
    """{engine: its manifest's `version_matrix` table, `overrides` and `notes` filled in} of
    every engine that has one, by name; a manifest engines.py refuses stops the script."""
    try:
        found = manifests.manifests()
    except manifests.ManifestError as e:
        fail(str(e))
    return {
        name: {"overrides": {}, "notes": {}, **manifest["version_matrix"], "display": manifest["display"]}
        for name, manifest in found.items()
        if "version_matrix" in manifest
    }


def pins(engine):
    """[(package, version)] of the adapter's requirements.txt, in order."""
    found = []
    path = os.path.join(ROOT, "runner", "backends", engine, "requirements.txt")
    for line in open(path, encoding="utf-8"):
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            found.append((name.strip(), version.strip()))
    return found


def versions(engine, spec):
    """The versions to run, oldest first, the pinned one last."""
    pinned = dict(pins(engine)).get(spec["package"])
    if pinned is None:
        fail(f"runner/backends/{engine}/requirements.txt pins no {spec['package']} (`version_matrix.package` of its engine.toml)")
    return [v for v in spec["versions"] if v != pinned] + [pinned]


def requirements(engine, spec, version):
    """The pip requirements of `version`: the adapter's pins with the engine's and the
    overrides replaced."""
    overrides = dict(spec["overrides"].get(version, {}))
    overrides[spec["package"]] = version
    found = [f"{name}=={overrides.pop(name, pinned)}" for name, pinned in pins(engine)]
    return found + [f"{name}=={v}" for name, v in overrides.items()]


def environment(engine, spec, version, log):
    """The python of `version`'s environment, made if missing or not of these requirements."""
    folder = os.path.join(OUT, f"{engine}-{version}")
    python = os.path.join(folder, "bin", "python")
    wanted = "\n".join(requirements(engine, spec, version)) + "\n"
    marker = os.path.join(folder, ".requirements")
    if os.path.exists(marker) and open(marker, encoding="utf-8").read() == wanted:
        return python
    log(f"{engine} {version}: making {os.path.relpath(folder, ROOT)} ({', '.join(wanted.split())})")
    subprocess.run([sys.executable, "-m", "venv", "--clear", folder], check=True)
    subprocess.run(["nice", python, "-m", "pip", "install", "-q", "--disable-pip-version-check"] + wanted.split(), check=True)
    with open(marker, "w", encoding="utf-8") as f:
        f.write(wanted)
    return python


def run(runner, engine, version, python, log):
    """Runs the suite; gives the report's path and the run's seconds."""
    report = os.path.join(OUT, f"{engine}-{version}.json")
    backend = f"{python} runner/backends/{engine}/backend.py"
    command = ["nice", runner, "-q", "--backend", backend, "--report-json", report, "--backend-log", os.path.join(OUT, f"{engine}-{version}.log")]
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if not os.path.exists(report):
        sys.exit(f"{engine} {version}: no report ({' '.join(command)}):\n{done.stderr[-3000:]}")
    log(f"{engine} {version}: {summary(report)} ({seconds:.1f} s)")
    return report, seconds


def fail(message):
    """Stops the script with `message` (exit code 2)."""
    print(f"version_matrix.py: {message}", file=sys.stderr)
    sys.exit(2)


def same_version(a, b):
    """Whether two version strings name one version, as the runner compares them: build metadata
    (`+cpu`) left out, a missing release part 0 (`1.2 == 1.2.0`), the rest as written."""
    def parts(text):
        text = text.strip().split("+")[0]
        found = re.match(r"v?(\d+(?:\.\d+)*)(.*)", text)
        if not found:
            return (), text
        numbers = [int(n) for n in found.group(1).split(".")]
        while numbers and numbers[-1] == 0:
            numbers.pop()
        return tuple(numbers), found.group(2).lstrip("-._")
    return parts(a) == parts(b)


def read_report(path):
    """A JSON report as a dict, or a stop naming the file."""
    shown = os.path.relpath(path, ROOT)
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except OSError as e:
        fail(f"cannot read the report {shown}: {e.strerror}")
    except (UnicodeDecodeError, ValueError) as e:
        fail(f"the report {shown} is not a JSON report: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("trials"), list):
        fail(f"the report {shown} is not a JSON report of `runner --report-json` (no list of trials)")
    return data


def check_version(engine, version, path):
    """Stops unless the report at `path` is of `engine` at `version`, as its hello says (`facts`):
    a report filed under another version (copied, or a pip that installed another) would make
    the diff of two versions that of one."""
    facts = read_report(path).get("facts")
    facts = facts if isinstance(facts, dict) else {}
    said = facts.get("version")
    shown = os.path.relpath(path, ROOT)
    if not isinstance(said, str):
        fail(f"{shown} is filed under {engine} {version}, but its run names no engine version (no `facts.version`): it cannot be told apart from another version's")
    if not same_version(said, version):
        fail(f"{shown} is filed under {engine} {version}, but its run was of version {said} (`facts.version`): run the matrix again without --no-run, or put the report where it belongs")


def read_times(path, taken):
    """The times of the last run ({"<engine>-<version>": seconds, "total": seconds}); {} when
    there are none. A file that is not such a JSON object stops the script when its times are
    `taken` as they are (--no-run), and is measured again otherwise."""
    if not os.path.exists(path):
        return {}
    shown = os.path.relpath(path, ROOT)
    try:
        with open(path, "rb") as f:
            times = json.loads(f.read().decode("utf-8"))
        if not isinstance(times, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in times.values()):
            raise ValueError("not an object of seconds by run")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        if taken:
            fail(f"{shown} is not the times of a run ({e}); run the matrix again without --no-run to measure them")
        print(f"version_matrix.py: {shown} is not the times of a run ({e}); they are measured again", file=sys.stderr)
        return {}
    return times


STATUSES = ["passed", "failed", "known_failures", "unsupported", "implementation_defined", "excluded", "not_run", "shape_checked", "rejected_unclassified"]


def counts(report):
    data = read_report(report)
    return {s: data.get(s, 0) for s in STATUSES}, len(data["trials"]), data.get("version") or ""


def summary(report):
    found, total, _ = counts(report)
    return f"{total} trials: " + ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in found.items() if n)


def by_clause(diff_text):
    """The lines of `runner diff`'s "by clause" section, and its last line."""
    lines = diff_text.splitlines()
    section = []
    if "by clause:" in lines:
        for line in lines[lines.index("by clause:") + 1 :]:
            if not line.startswith("  "):
                break
            section.append(line.strip())
    return section, lines[-1] if lines else ""


def main(argv=None):
    specs = matrix()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engines", nargs="*", metavar="ENGINE", help="of: " + ", ".join(specs))
    parser.add_argument("--runner", help="the runner binary (default: target/release/runner)")
    parser.add_argument("--docs", action="store_true", help="write docs/versions.md")
    parser.add_argument("--no-run", action="store_true", help="take the last run's reports")
    args = parser.parse_args(argv)
    for engine in args.engines:
        if engine not in specs:
            parser.error(f"no engine {engine!r} with a `version_matrix` in its engine.toml (those that have one: {', '.join(specs)})")
    args.engines = args.engines or list(specs)
    os.makedirs(OUT, exist_ok=True)
    runner = args.runner or os.path.join(ROOT, "target", "release", "runner")
    if not os.path.exists(runner):
        subprocess.run(["nice", "cargo", "build", "--release", "-p", "opspec-runner"], cwd=ROOT, check=True)

    def log(line):
        print(line, flush=True)

    started = time.monotonic()
    results = {}
    reports = []
    times_path = os.path.join(OUT, "times.json")
    times = read_times(times_path, args.no_run)
    for engine in args.engines:
        results[engine] = []
        for version in versions(engine, specs[engine]):
            key = f"{engine}-{version}"
            if args.no_run:
                report, seconds = os.path.join(OUT, f"{key}.json"), times.get(key, 0.0)
                if not os.path.exists(report):
                    fail(f"--no-run: no report {os.path.relpath(report, ROOT)}")
            else:
                python = environment(engine, specs[engine], version, log)
                report, seconds = run(runner, engine, version, python, log)
                times[key] = seconds
            check_version(engine, version, report)
            reports.append(report)
            results[engine].append((version, report, seconds))
    steps = {}
    for engine, runs in results.items():
        steps[engine] = []
        for (old, old_report, _), (new, new_report, _) in zip(runs, runs[1:]):
            diff = subprocess.run([runner, "diff", old_report, new_report], cwd=ROOT, capture_output=True, text=True)
            if diff.returncode not in (0, 1):
                sys.exit(f"runner diff failed:\n{diff.stderr}")
            path = os.path.join(OUT, f"{engine}-{old}-to-{new}.diff.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(diff.stdout)
            section, last = by_clause(diff.stdout)
            log(f"{engine} {old} → {new}: {last}")
            for line in section:
                log(f"  {line}")
            steps[engine].append((old, new, section, last))
    page = os.path.join(OUT, "index.html")
    subprocess.run([runner, "report"] + reports + ["--html", page], cwd=ROOT, check=True, capture_output=True)
    total = time.monotonic() - started
    if args.no_run:
        total = times.get("total", 0.0)
    else:
        times["total"] = total
        with open(times_path, "w", encoding="utf-8") as f:
            json.dump(times, f, indent=1)
    log(f"page: {os.path.relpath(page, ROOT)}; the whole matrix: {total:.0f} s")
    if args.docs:
        write_doc(specs, results, steps, total)
        log(f"wrote {os.path.relpath(DOC, ROOT)}")


def write_doc(specs, results, steps, total):
    out = [
        "<!-- Written by `python3 scripts/engines/version_matrix.py --docs`; docs/engines.md includes it. -->",
        "",
        "`python3 scripts/engines/version_matrix.py` runs each adapter below at several released versions of",
        "its engine, each in a virtual environment of its own under `target/version-matrix/`, without",
        "an expectations file (the pinned known-failures file describes the pinned version only), so",
        "each report holds the engine's raw statuses. Between consecutive versions, `runner diff`'s",
        "\"by clause\" section is the change table below: each changed trial counted once, under the",
        "clause of its case that the most changed trials cite. `runner report` draws every report on",
        "`target/version-matrix/index.html`, whose \"Across versions\" section has the same table per",
        "engine, a column per upgrade, each trial listed. The adapters ran as they are in the",
        "repository; the pins besides the engine's are the adapter's (the `version_matrix` table of",
        "its engine.toml gives the versions and the exceptions). The whole matrix's time, with the machine and `/usr/bin/time -v`, is in",
        "BENCHMARKS.md, \"Version matrix\" (the script prints it; the page keeps no figure without its date",
        "and machine).",
        "",
        "![The version matrix's page](images/version-matrix.png)",
        "",
    ]
    for engine, runs in results.items():
        found = {version: counts(report) for version, report, _ in runs}
        # The statuses no version of the engine has are left out.
        shown = [s for s in STATUSES if any(c[s] for c, _, _ in found.values())]
        out += [f"### {specs[engine]['display']}", "", "| version | trials | " + " | ".join(s.replace("_", " ") for s in shown) + " | run (s) |", "|---|---:|" + "---:|" * (len(shown) + 1)]
        for version, report, seconds in runs:
            statuses, total_trials, _ = found[version]
            out.append(f"| {version} | {total_trials} | " + " | ".join(str(statuses[s]) for s in shown) + f" | {seconds:.1f} |")
        out.append("")
        for version, note in specs[engine]["notes"].items():
            out += [note, ""]
        for old, new, section, last in steps[engine]:
            out.append(f"{old} → {new}: {last}.")
            out.append("")
            if section:
                out += ["| clause | trials | change |", "|---|---:|---|"]
                for line in section:
                    m = re.match(r"(.+?): (\d+) (.*)", line)
                    if m:
                        out.append(f"| `{m.group(1)}` | {m.group(2)} | {m.group(3)} |")
                out.append("")
    with open(DOC, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
