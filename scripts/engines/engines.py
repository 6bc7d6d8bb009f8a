#!/usr/bin/env python3
"""The engine adapters, read from their manifests `runner/backends/<name>/engine.toml`: the only
list of engines. `.ci/run`, `scripts/engines/engines_md.py`, `scripts/engines/engines_report.sh` and
`runner/tests/engines.rs` read the manifests through this script.

    python3 scripts/engines/engines.py list                  the engines' names, one a line
    python3 scripts/engines/engines.py show NAME FIELD       one field (a list: one item a line; a table: JSON)
    python3 scripts/engines/engines.py json                  every manifest, as one JSON object by name
    python3 scripts/engines/engines.py install NAME          runs the engine's install command
    python3 scripts/engines/engines.py run NAME [--ci] [--runner PATH] [--] [RUNNER ARG ...]
    python3 scripts/engines/engines.py check-hello NAME      the hello leaves out what `not_declared` says
    python3 scripts/engines/engines.py check NAME [--runner PATH]
                                                     what runner/tests/engines.rs checks of the
                                                     folder, without the engine's suite

An engine is a folder of `runner/backends/` with an `engine.toml` (hidden folders are not
engines). `run` runs the suite against the engine, from the repository root: the runner (PATH, or `cargo run
-q -p opspec-runner --bin runner --`) with the engine's backend, its expectations, its options,
then the RUNNER ARGs; with `--ci`, only the trials of its `ci` filter when that is not "whole".
It exits with the runner's exit code. Every command first reads every manifest, and stops (exit
code 2) naming the file and the key of the first that is not valid (or that is no regular file, is
not UTF-8 TOML, or sits in a folder whose name is no engine name). A command of a manifest that
cannot be run (`install`, `run`, `check-hello`: no such program, an unclosed quote, a backend
that answers no hello) is a message and exit code 2, never a traceback.

`check` takes seconds, not the engine's whole suite: the manifest (read above) and the files it
names; the known-failures file as the runner reads it (`runner --expectations FILE --list`: each
line's fields, class and clause id, and that every trial an entry names cites its clause); every
`defect` entry naming a `repro/<file>.py` that exists; the run without the engine's packages
stopping with the install command; the hello against `not_declared` (when the engine is
installed); docs/engines.md and README.md's list as scripts/engines/engines_md.py writes them. It prints a
line per check and exits 1 when one fails. Left to `cargo test --test engines`, which run the
engine: its reproducers, its `test_*.py` and `check_*.py`, and its batched run.

A manifest (CONTRIBUTING.md, "Adding an engine"), every key required but `build_only`:

    display = "OpenVINO"             # the name the pages show
    python = "python3"               # the interpreter of backend.py, repro/ and test_errors.py
    modules = "openvino"             # what `import` proves the engine installed ("numpy, jax")
    install = "python3 -m pip install -r runner/backends/openvino/requirements.txt"
    backend = "python3 runner/backends/openvino/backend.py"
    expectations = "runner/backends/openvino/known-failures.txt"
    options = ["--timeout", "10"]    # the runner's flags for its run
    ci = "whole"                     # or a trial-name filter: the sample CI runs
    build_only = true                # optional (default false): the adapter builds, never runs

    not_declared = ["as_strided"]    # optional: ops, `slice:MODE`s, `reformat:FORMAT`s its hello
                                     # leaves out (`check-hello` checks it against the hello)
    [composed]                       # optional: what the adapter builds from other engine ops
    as_strided = "Gather of indices the adapter computes"
    "reformat:CHW4" = "pad, reshape and transpose chosen by the adapter"
"""

import json
import os
import re
import shlex
import stat
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BACKENDS = os.path.join(ROOT, "runner", "backends")
# key -> (type, required)
KEYS = {
    "display": (str, True),
    "python": (str, True),
    "modules": (str, True),
    "install": (str, True),
    "backend": (str, True),
    "expectations": (str, True),
    "options": (list, True),
    "ci": (str, True),
    "build_only": (bool, False),
    "composed": (dict, False),
    "not_declared": (list, False),
    "version_matrix": (dict, False),
}
# The table `version_matrix` (scripts/engines/version_matrix.py): its keys -> (what, required).
VERSION_MATRIX_KEYS = {
    "package": ("the engine's pip package, a string", True),
    "versions": ("the released versions to run, a list of strings", True),
    "overrides": ("per version, a table of the pins that replace requirements.txt's (package = version)", False),
    "notes": ("per version, a string: what its row of docs/versions.md needs said", False),
}
RUNNER = ["cargo", "run", "-q", "-p", "opspec-runner", "--bin", "runner", "--"]
# What an optional key means when a manifest leaves it out.
DEFAULTS = {"build_only": False, "composed": {}, "not_declared": [], "version_matrix": {}}
# An engine's name, its folder's: what `list` prints one a line and CI loops over.
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
# The largest manifest read: a real one is under 2 KiB.
MANIFEST_LIMIT = 1 << 20


class ManifestError(Exception):
    pass


def load(path):
    """The manifest at `path` as a dict (`build_only` filled in), or ManifestError naming the
    file and the key."""
    name = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
    # Only a regular file is opened (a FIFO would wait for a writer, /dev/zero never end), and
    # only so much of it.
    try:
        found = os.stat(path)
    except OSError as e:
        raise ManifestError(f"{name}: cannot be read ({e.strerror}{', a link to nothing' if os.path.islink(path) else ''})") from None
    if not stat.S_ISREG(found.st_mode):
        kind = ("a folder" if stat.S_ISDIR(found.st_mode) else "a FIFO" if stat.S_ISFIFO(found.st_mode)
                else "a device" if stat.S_ISCHR(found.st_mode) or stat.S_ISBLK(found.st_mode)
                else "a socket" if stat.S_ISSOCK(found.st_mode) else "not a regular file")
        raise ManifestError(f"{name}: is {kind}, not a file: a manifest is a regular TOML file")
    if found.st_size > MANIFEST_LIMIT:
        raise ManifestError(f"{name}: is {found.st_size} bytes, over the {MANIFEST_LIMIT} a manifest may have")
    try:
        with open(path, "rb") as f:
            data = f.read(MANIFEST_LIMIT + 1)
        manifest = tomllib.loads(data.decode("utf-8"))
    except OSError as e:
        raise ManifestError(f"{name}: cannot be read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise ManifestError(f"{name}: not UTF-8 text (byte {e.start}): TOML is UTF-8") from None
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{name}: not TOML: {e}") from None
    except RecursionError:
        raise ManifestError(f"{name}: values nested too deep to read") from None
    for key in manifest:
        if key not in KEYS:
            raise ManifestError(f"{name}: unknown key `{key}` (the keys: {', '.join(KEYS)})")
    for key, (kind, required) in KEYS.items():
        if key not in manifest:
            if required:
                raise ManifestError(f"{name}: missing key `{key}`")
            continue
        value = manifest[key]
        if key == "version_matrix":
            problem = version_matrix_problem(value)
            if problem:
                raise ManifestError(f"{name}: {problem}")
            continue
        strings = value.values() if kind is dict and isinstance(value, dict) else value
        if not isinstance(value, kind) or (kind in (list, dict) and not all(isinstance(v, str) for v in strings)):
            wanted = {str: "a string", list: "a list of strings", bool: "true or false", dict: "a table of strings"}[kind]
            raise ManifestError(f"{name}: key `{key}` must be {wanted}, not {value!r}")
        if kind is str and not value.strip():
            raise ManifestError(f"{name}: key `{key}` is empty")
    manifest.setdefault("build_only", False)
    return manifest


def version_matrix_problem(table):
    """What is wrong with a manifest's `version_matrix` table (naming the key), or None."""
    def strings(value):
        return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)

    if not isinstance(table, dict):
        return f"key `version_matrix` must be a table ({', '.join(VERSION_MATRIX_KEYS)}), not {table!r}"
    for key in table:
        if key not in VERSION_MATRIX_KEYS:
            return f"unknown key `version_matrix.{key}` (the keys: {', '.join(VERSION_MATRIX_KEYS)})"
    for key, (what, required) in VERSION_MATRIX_KEYS.items():
        if required and key not in table:
            return f"missing key `version_matrix.{key}` ({what})"
    if not isinstance(table["package"], str) or not table["package"].strip():
        return f"key `version_matrix.package` must be {VERSION_MATRIX_KEYS['package'][0]}, not {table['package']!r}"
    if not strings(table["versions"]) or not table["versions"]:
        return f"key `version_matrix.versions` must be {VERSION_MATRIX_KEYS['versions'][0]}, not {table['versions']!r}"
    for key in ("overrides", "notes"):
        per_version = table.get(key, {})
        if not isinstance(per_version, dict):
            return f"key `version_matrix.{key}` must be {VERSION_MATRIX_KEYS[key][0]}, not {per_version!r}"
        for version, value in per_version.items():
            if version not in table["versions"]:
                return f"key `version_matrix.{key}.\"{version}\"`: {version!r} is not one of `version_matrix.versions`"
            right = (isinstance(value, dict) and strings(list(value.values()))) if key == "overrides" else (isinstance(value, str) and value.strip())
            if not right:
                return f"key `version_matrix.{key}.\"{version}\"` must be {'a table of strings (package = version)' if key == 'overrides' else 'a string, not empty'}, not {value!r}"
    return None


def manifests(backends=BACKENDS):
    """{name: manifest} of every `<backends>/<name>/engine.toml`, by name. A hidden folder
    (`.name`) is no engine; an `engine.toml` that is there but no regular file, or in a folder
    whose name is no engine name (letters, digits, `_`, `-`, `.`; a space, say), is a
    ManifestError: an engine never drops out of `list` and CI without a word."""
    found = {}
    for name in sorted(os.listdir(backends)):
        path = os.path.join(backends, name, "engine.toml")
        if name.startswith(".") or not os.path.lexists(path):
            continue
        if not NAME.fullmatch(name):
            shown = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
            raise ManifestError(
                f"{shown}: the folder's name {name!r} is no engine name (letters, digits, `_`, `-` and `.`, "
                "not first): it is the engine's name on the command line and in CI; rename the folder")
        found[name] = load(path)
    return found


def label(manifest):
    """The display name, marked when the adapter is build-only."""
    return manifest["display"] + (" (build-only)" if manifest["build_only"] else "")


def run_command(manifest, runner=None, ci=False, extra=()):
    """The runner's command line of a run against the engine."""
    command = [runner] if runner else list(RUNNER)
    command += ["--backend", manifest["backend"], "--expectations", manifest["expectations"]]
    command += manifest["options"] + list(extra)
    if ci and manifest["ci"] != "whole":
        command.append(manifest["ci"])
    return command


# The op vocabulary, generated from the Rust definitions (crates/spec/src/vocabulary.rs).
with open(os.path.join(ROOT, "schema", "vocabulary.json"), encoding="utf-8") as _f:
    VOCABULARY = json.load(_f)
OPS = [op["name"] for op in VOCABULARY["ops"]]
SLICE_MODES = [m.upper() for m in VOCABULARY["slice_modes"]]
# The packed formats (LINEAR, the logical tensor, is every engine's).
FORMATS = [f for f in VOCABULARY["formats"] if f != "LINEAR"]


def undeclared(hello):
    """The ops, Slice modes and packed formats a hello leaves out, as `not_declared` names them."""
    ops = set(hello.get("ops", []))
    found = {op for op in OPS if op not in ops}
    attributes = hello.get("attributes", {})
    modes = attributes.get("slice", {}).get("mode")
    if "slice" in ops and modes is not None:
        found |= {f"slice:{m}" for m in SLICE_MODES if m.lower() not in modes}
    formats = attributes.get("reformat", {}).get("format")
    if "reformat" in ops and formats is not None:
        found |= {f"reformat:{f}" for f in FORMATS if f not in formats}
    return found


class CommandError(Exception):
    """A manifest's command that cannot be run, or whose answer is not what it should be."""


def command_words(manifest, key):
    """The manifest's command `key` as its words, or CommandError saying why it has none."""
    try:
        words = shlex.split(manifest[key])
    except ValueError as e:
        raise CommandError(f"its {key} command {manifest[key]!r} cannot be read as words: {e}") from None
    if not words:
        raise CommandError(f"its {key} command is empty")
    return words


def execute(words, **options):
    """subprocess.run of `words`, or CommandError when the program cannot be started."""
    try:
        return subprocess.run(words, **options)
    except FileNotFoundError:
        raise CommandError(f"no program {words[0]!r} (not found on PATH or at that path)") from None
    except PermissionError:
        raise CommandError(f"{words[0]!r} may not be run (permission denied)") from None
    except subprocess.TimeoutExpired as e:
        raise CommandError(f"{shlex.join(words)} gave no answer within {e.timeout:g} s") from None


def hello_of(manifest):
    """The adapter's hello, asked as the runner asks it; CommandError when the backend cannot
    be started or answers no hello."""
    process = execute(command_words(manifest, "backend"), cwd=ROOT, input='{"type": "hello", "protocol": 1}\n',
                      capture_output=True, text=True, errors="replace", timeout=300)
    lines = process.stdout.splitlines()
    tail = "\n".join(process.stderr.splitlines()[-5:])
    stderr = f"; its stderr ends with:\n{tail}" if tail else ""
    if not lines:
        raise CommandError(f"the backend wrote nothing to stdout (exit code {process.returncode}){stderr}")
    try:
        hello = json.loads(lines[0])
    except ValueError as e:
        raise CommandError(f"the backend's first line is not JSON ({e}): {lines[0][:200]!r}{stderr}") from None
    if not isinstance(hello, dict) or hello.get("type") != "hello":
        raise CommandError(f"the backend's first line is not a hello: {lines[0][:200]!r}")
    return hello


def defect_problems(name, expectations, folder):
    """(problems, reproducers): each `defect` entry of the known-failures file `expectations`
    that names no `repro/<file>.py`, or one that is not in `folder`; and those it names."""
    problems, named = [], []
    with open(expectations, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("#") or not line.strip():
            continue
        fields = [field.strip() for field in line.split("|", 3)]
        if len(fields) != 4 or fields[2] != "defect":
            continue
        words = re.split(r"[\s;,()]+", fields[3])
        scripts = [w for w in words if w.startswith("repro/") and w.endswith(".py")]
        if not scripts:
            problems.append(f"{expectations}: line {number}: a defect entry names no reproducer (repro/<file>.py in its reason)")
        for script in scripts:
            named.append(script)
            if not os.path.isfile(os.path.join(folder, script)):
                problems.append(f"{expectations}: line {number}: names {script}, which is not in {folder}")
    return problems, named


def check(name, manifest, runner=None, backends=BACKENDS):
    """[(passed, what, detail)] of the checks `check NAME` makes (the module's doc); `passed` is
    True, False, or None for a check that cannot be made here (its detail says why)."""
    root = os.path.dirname(os.path.dirname(backends))
    folder = os.path.join(backends, name)
    runner = [os.path.abspath(runner) if os.sep in runner else runner] if runner else list(RUNNER)
    results = []
    script = manifest["backend"].split()[-1]
    files = [("backend", script), ("expectations", manifest["expectations"])]
    missing = [f"`{key}` names {path}, which does not exist" for key, path in files if not os.path.isfile(os.path.join(root, path))]
    starts = manifest["backend"].startswith(manifest["python"] + " ")
    if not starts:
        missing.append(f"`backend` does not begin with `python` ({manifest['python']!r}): {manifest['backend']!r}")
    results.append((not missing, f"manifest {os.path.join(folder, 'engine.toml')}", "; ".join(missing)))
    expectations = os.path.join(root, manifest["expectations"])
    if not os.path.isfile(expectations):
        return results
    listed = subprocess.run(runner + ["--list", "--expectations", expectations], cwd=root, capture_output=True, text=True)
    results.append((listed.returncode == 0, f"known failures {manifest['expectations']}, as the runner reads them", listed.stderr.strip()))
    problems, named = defect_problems(name, expectations, folder)
    results.append((not problems, f"defect entries name their reproducers ({len(named)})", "\n".join(problems)))
    with tempfile.TemporaryDirectory(prefix="opspec-check-") as scratch:
        bare = f"{manifest['python']} -S {script}"  # -S: no site-packages, so no engine
        run = subprocess.run(runner + ["--backend", bare, "--backend-log", os.path.join(scratch, "log")],
                             cwd=root, capture_output=True, text=True, env={**os.environ, "TMPDIR": scratch})
        said = f"install them with: {manifest['install']}" in run.stderr
        results.append((run.returncode == 2 and said, "without its packages, the run stops with the install command",
                        "" if said else f"exit {run.returncode}: {run.stderr.strip()[-2000:]}"))
        probe = subprocess.run([manifest["python"], "-c", f"import {manifest['modules']}"], cwd=root,
                               capture_output=True, env={**os.environ, "TMPDIR": scratch})
        if probe.returncode != 0:
            results.append((None, "the hello leaves out what `not_declared` says", f"not checked: {name} is not installed ({manifest['install']})"))
        else:
            said, declared = undeclared(hello_of(manifest)), set(manifest.get("not_declared", []))
            results.append((said == declared, "the hello leaves out what `not_declared` says",
                            "" if said == declared else f"not_declared {sorted(declared)} but the hello leaves out {sorted(said)}"))
    page = subprocess.run([sys.executable, os.path.join(root, "scripts", "engines", "engines_md.py"), "--check", "--runner", runner[0]]
                          if len(runner) == 1 else [sys.executable, os.path.join(root, "scripts", "engines", "engines_md.py"), "--check"],
                          cwd=root, capture_output=True, text=True)
    results.append((page.returncode == 0, "docs/engines.md and README.md's list are what scripts/engines/engines_md.py writes",
                    (page.stdout + page.stderr).strip() + ("\nrun: python3 scripts/engines/engines_md.py" if page.returncode else "")))
    return results


USAGE = __doc__.split("\n\n")[1]


def main(argv, backends=BACKENDS):
    if not argv:
        print("usage:\n" + USAGE, file=sys.stderr)
        return 2
    try:
        engines = manifests(backends)
    except ManifestError as e:
        print(e, file=sys.stderr)
        return 2
    command, args = argv[0], argv[1:]

    def engine(name):
        if name not in engines:
            print(f"no engine {name!r}: the engines are {', '.join(engines)}", file=sys.stderr)
            sys.exit(2)
        return engines[name]

    if command == "list" and not args:
        print("\n".join(engines))
    elif command == "json" and not args:
        print(json.dumps(engines, indent=1))
    elif command == "show" and len(args) == 2:
        manifest, field = engine(args[0]), args[1]
        if field not in KEYS:
            print(f"no field {field!r}: the fields are {', '.join(KEYS)}", file=sys.stderr)
            return 2
        value = manifest.get(field, DEFAULTS.get(field))
        if isinstance(value, list):
            sys.stdout.write("".join(item + "\n" for item in value))
        else:
            print(json.dumps(value) if isinstance(value, (bool, dict)) else value)
    elif command == "install" and len(args) == 1:
        try:
            return execute(command_words(engine(args[0]), "install"), cwd=ROOT).returncode
        except CommandError as e:
            print(f"install {args[0]}: {e}", file=sys.stderr)
            return 2
    elif command == "check-hello" and len(args) == 1:
        manifest = engine(args[0])
        try:
            said = undeclared(hello_of(manifest))
        except CommandError as e:
            print(f"check-hello {args[0]}: {e}", file=sys.stderr)
            return 2
        declared = set(manifest.get("not_declared", []))
        if said != declared:
            print(f"{args[0]}: engine.toml's not_declared {sorted(declared)} but the hello leaves out {sorted(said)}", file=sys.stderr)
            return 1
    elif command == "check" and args and args[0] in engines:
        name, rest = args[0], args[1:]
        runner = None
        if rest[:1] == ["--runner"] and len(rest) == 2:
            runner = rest[1]
        elif rest:
            print("usage:\n" + USAGE, file=sys.stderr)
            return 2
        failed = False
        for passed, what, detail in check(name, engine(name), runner, backends):
            mark = {True: "ok", False: "FAILED", None: "skipped"}[passed]
            print(f"{name}: {what}: {mark}" + (f"\n  " + detail.replace("\n", "\n  ") if detail and passed is not True else ""))
            failed |= passed is False
        print(f"{name}: left to `cargo test --test engines`, which run the engine: repro/*.py, test_*.py, check_*.py, batched against single requests")
        return 1 if failed else 0
    elif command == "check" and args:
        engine(args[0])
    elif command == "run" and args:
        manifest, rest = engine(args[0]), args[1:]
        runner, ci = None, False
        while rest and rest[0] in ("--ci", "--runner", "--"):
            flag, rest = rest[0], rest[1:]
            if flag == "--":
                break
            if flag == "--ci":
                ci = True
            elif not rest:
                print("run: --runner needs the runner's path", file=sys.stderr)
                return 2
            else:
                # A path is the caller's; the run is made from the repository root.
                runner, rest = os.path.abspath(rest[0]) if os.sep in rest[0] else rest[0], rest[1:]
        try:
            return execute(run_command(manifest, runner, ci, rest), cwd=ROOT).returncode
        except CommandError as e:
            print(f"run {args[0]}: {e}", file=sys.stderr)
            return 2
    else:
        print("usage:\n" + USAGE, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
