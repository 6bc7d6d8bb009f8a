#!/usr/bin/env python3
"""JSON reports of the same runs before and after a change that must change no behaviour.

    python3 scripts/audits/same_reports.py make DIR [--runner PATH]   four runs, their reports in DIR
    python3 scripts/audits/same_reports.py compare BEFORE AFTER       exit 1 unless they are the same
    python3 scripts/audits/same_reports.py pair A.json B.json [--except FIELD ...]
                                                               two reports of one run's trials
    python3 scripts/audits/same_reports.py batched ENGINE [ARGS...]   the engine batched and with --batch 1

The four runs: the built-in reference, the numpy backend, a failing backend (the test backend
whose REFLECT is wrong, runner/test-backends) and ONNX Runtime with its known failures. A run
whose engine is not installed is left out, and `compare` says so.

`pair` compares two reports the same way, leaving out the batch size too (`run.batch`: batching
never changes a verdict, docs/protocol.md "Batches"), the end of a backend's stderr that a
failure quotes (what a crashing process wrote, read as it came: two runs may quote more or less),
and each FIELD named by `--except`: a field of every trial (`replay`), or of the run
(`run.backend_command`). A live run and the judge of its offline cases (`runner judge`,
docs/protocol.md "Offline cases") differ in those two only, which name how the answers were had.
`batched` runs an engine of
runner/backends/ (its manifest's flags, then ARGS, e.g. a name filter or `--partition 1/20`)
twice, with its hello's batch and with `--batch 1`, and pairs the reports; the two reports and
the runs' CPU seconds and peak memory are printed.

`compare` reads every field of both reports but each trial's time (TIMES), with the checkout's
path (each folder's root.txt) written <root>, and compares them trial for trial: a trial in one
report only, or a field that differs, is printed.
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Fields whose values are measured, not decided: they differ between two runs of one commit.
TIMES = {"seconds"}  # a trial's time; the report has no other

RUNS = {
    "reference": [],
    "numpy": ["--backend", "python3 runner/backends/numpy/backend.py"],
    "failing": ["--backend", "target/release/broken_reflect_backend"],
    "onnxruntime": None,  # from runner/backends/onnxruntime/engine.toml
}


def engine_args(name):
    sys.path.insert(0, os.path.join(ROOT, "scripts", "engines"))
    import engines  # noqa: E402

    manifest = engines.manifests()[name]
    return ["--backend", manifest["backend"], "--expectations", manifest["expectations"], *manifest["options"]]


def installed(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def make(out, runner):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "root.txt"), "w") as f:
        f.write(ROOT)  # messages name spec files by absolute path: compare reads them from here
    subprocess.run(["cargo", "build", "-q", "--release", "-p", "opspec-runner", "-p", "opspec-test-backends"],
                   cwd=ROOT, check=True)
    for name, args in RUNS.items():
        if name == "numpy" and not installed("numpy"):
            print(f"{name}: left out (numpy is not installed)")
            continue
        if name == "onnxruntime":
            if not installed("onnxruntime"):
                print(f"{name}: left out (onnxruntime is not installed)")
                continue
            args = engine_args(name)
        path = os.path.join(out, f"{name}.json")
        run = subprocess.run([runner, *args, "-q", "--report-json", path], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        print(f"{name}: exit {run.returncode}, {path}")


def strip(value, root):
    """`value` without its TIMES fields, the checkout's path in its strings written <root>."""
    if isinstance(value, dict):
        return {k: strip(v, root) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [strip(v, root) for v in value]
    if isinstance(value, str) and root:
        return value.replace(root, "<root>")
    return value


def root_of(folder):
    path = os.path.join(folder, "root.txt")
    return open(path).read().strip() if os.path.exists(path) else None


def trials(report, root):
    return {t["name"]: strip(t, root) for t in report.get("trials", [])}


# The end of a backend's stderr that a failure quotes: what the process wrote, read as it came,
# so two runs of one commit may quote more or less of it.
STDERR_TAIL = re.compile(r"; its stderr ended with:(\n    [^\n]*)*")


def without_stderr(value):
    """`value` with the stderr tails of its messages left out."""
    if isinstance(value, dict):
        return {k: without_stderr(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_stderr(v) for v in value]
    if isinstance(value, str):
        return STDERR_TAIL.sub("", value)
    return value


def pair(a, b, label="", root=None, leave_out=()):
    """The differences of reports `a` and `b` (paths), trial for trial, batch size, the stderr
    tails quoted in messages and the fields `leave_out` (`replay`, `run.backend_command`) left
    out."""
    ra, rb = without_stderr(json.load(open(a))), without_stderr(json.load(open(b)))
    for report in (ra, rb):
        report.get("run", {}).pop("batch", None)
        for field in leave_out:
            if field.startswith("run."):
                report.get("run", {}).pop(field[len("run."):], None)
            else:
                for trial in report.get("trials", []):
                    value = trial.pop(field, None)
                    # A failure's message ends with its replay command.
                    if field == "replay" and value and "message" in trial:
                        trial["message"] = trial["message"].replace(value, "<replay>")
    ta, tb = trials(ra, root), trials(rb, root)
    here = 0
    for trial in sorted(set(ta) | set(tb)):
        if trial not in tb or trial not in ta:
            print(f"{label}{trial} only in {a if trial in ta else b}")
            here += 1
        elif ta[trial] != tb[trial]:
            print(f"{label}{trial} differs:\n  {a}: {ta[trial]}\n  {b}: {tb[trial]}")
            here += 1
    rest_a = strip({k: v for k, v in ra.items() if k != "trials"}, root)
    rest_b = strip({k: v for k, v in rb.items() if k != "trials"}, root)
    for key in sorted(set(rest_a) | set(rest_b)):
        if rest_a.get(key) != rest_b.get(key):
            print(f"{label}field {key!r} differs:\n  {a}: {rest_a.get(key)}\n  {b}: {rest_b.get(key)}")
            here += 1
    print(f"{label}{len(ta)} trials, {here} differences")
    return here


def batched(engine, extra, runner):
    """Runs `engine` batched and alone; the differences of the two reports."""
    import resource
    import tempfile

    sys.path.insert(0, os.path.join(ROOT, "scripts", "engines"))
    import engines  # noqa: E402

    manifest = engines.manifests()[engine]
    args = ["--backend", manifest["backend"], "--expectations", manifest["expectations"], *manifest["options"], *extra]
    with tempfile.TemporaryDirectory(prefix="opspec-batched-") as out:
        paths = []
        for label, cap in (("batched", []), ("single", ["--batch", "1"])):
            path = os.path.join(out, f"{label}.json")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            run = subprocess.run([runner, *args, *cap, "-q", "--report-json", path,
                                  "--backend-log", os.path.join(out, "backend.log")],
                                 cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            batch = json.load(open(path)).get("run", {}).get("batch") if os.path.exists(path) else None
            print(f"{engine} {label}: exit {run.returncode}, batch {batch}, {cpu:.1f} CPU s")
            if not os.path.exists(path):
                print(run.stderr[-2000:])
                return 1
            paths.append(path)
        return pair(*paths, label=f"{engine}: ", root=ROOT)


def compare(before_dir, after_dir):
    differences = 0
    for name in RUNS:
        a, b = os.path.join(before_dir, f"{name}.json"), os.path.join(after_dir, f"{name}.json")
        if not os.path.exists(a) or not os.path.exists(b):
            print(f"{name}: not compared (a report is missing)")
            continue
        ra, rb = json.load(open(a)), json.load(open(b))
        ta, tb = trials(ra, root_of(before_dir)), trials(rb, root_of(after_dir))
        here = 0
        for trial in sorted(set(ta) | set(tb)):
            if trial not in tb or trial not in ta:
                print(f"{name}: {trial} only {'before' if trial in ta else 'after'}")
                here += 1
            elif ta[trial] != tb[trial]:
                print(f"{name}: {trial} differs:\n  before {ta[trial]}\n  after  {tb[trial]}")
                here += 1
        rest_a = strip({k: v for k, v in ra.items() if k != "trials"}, root_of(before_dir))
        rest_b = strip({k: v for k, v in rb.items() if k != "trials"}, root_of(after_dir))
        for key in sorted(set(rest_a) | set(rest_b)):
            if rest_a.get(key) != rest_b.get(key):
                print(f"{name}: field {key!r} differs:\n  before {rest_a.get(key)}\n  after  {rest_b.get(key)}")
                here += 1
        print(f"{name}: {len(ta)} trials, {here} differences")
        differences += here
    return differences


def main(argv):
    if len(argv) >= 2 and argv[0] == "make":
        runner = argv[argv.index("--runner") + 1] if "--runner" in argv else "target/release/runner"
        make(argv[1], runner)
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return 1 if compare(argv[1], argv[2]) else 0
    if len(argv) >= 3 and argv[0] == "pair" and len(argv) % 2 == 1 and set(argv[3::2]) <= {"--except"}:
        return 1 if pair(argv[1], argv[2], leave_out=argv[4::2]) else 0
    if len(argv) >= 2 and argv[0] == "batched":
        runner = os.environ.get("OPSPEC_RUNNER", os.path.join(ROOT, "target", "release", "runner"))
        return 1 if batched(argv[1], argv[2:], runner) else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
