#!/usr/bin/env python3
"""Lists the public items of the reference (crate `opspec`, src/) and of the runner (crate
`opspec-runner`, runner/src/ but its binaries) that nothing outside their crate needs: each one
could be private.

How: in a scratch copy of the working tree (its files git tracks or would track), every `pub`
declaration of those files (functions, methods, types, constants, fields; not modules or
re-exports) becomes `pub(crate)`, then `cargo check --workspace --all-targets` runs, and each
item the compiler reports private at a use outside its crate is made `pub` again; this repeats
until the workspace compiles. The items still `pub(crate)` are used by no other crate, test,
bench or binary (the runner's binaries, runner/src/main.rs and runner/src/bin/, are crates of
their own and count as outside, as do runner/tests/, runner/example-backend and
runner/test-backends). An item re-exported from a crate root is needed by that re-export: the
root's `pub use` lines say the crate's interface. Prints the rest and exits 1 when there is
any, 0 when every public item is needed. A few minutes (one check per round). `--lib` checks
libraries and binaries only: items only tests or benches need show too. `--crate reference` or
`--crate runner` audits one of them. `--write` leaves the narrowed declarations in the
working tree.

Usage: scripts/audits/reference_api_audit.py [--lib] [--crate reference|runner] [--write]
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The audited crates: their library sources, binaries left out.
CRATES = {
    "reference": ("src", lambda relative: True),
    "runner": (
        "runner/src",
        lambda relative: relative.parts[0] != "bin" and relative.name != "main.rs",
    ),
}
DECLARATION = r"(?:unsafe )?(?:const )?(?:fn|struct|enum|trait|type|const|static)"
# E0365: a re-export in lib.rs of an item made crate-private; E0446 ("crate-private type ... in
# public interface"), "private type" errors and the `private_interfaces` lint ("type ... is more
# private than the item") name a type reached through a public signature. Both are found by name.
REEXPORT = re.compile(r"`([^`]+)` is only public within the crate")
PRIVATE_TYPE = re.compile(
    r"type `([^`]+)` is private|crate-private type `([^`]+)` in public interface"
    r"|type `([^`]+)` is more private than"
)
# E0616 (a field read) and E0451 (a struct literal) name the fields and their struct, but give no
# span of the field's declaration.
PRIVATE_FIELDS = re.compile(r"fields? (.*?) of struct `([^`]+)` (?:is|are) private")


def narrow(text):
    """Every `pub` declaration and field of `text` made `pub(crate)`."""
    text = re.sub(rf"^(\s*)pub (?={DECLARATION} )", r"\1pub(crate) ", text, flags=re.M)
    return re.sub(r"^(\s*)pub (?=[a-z_][a-z0-9_]*\s*:)", r"\1pub(crate) ", text, flags=re.M)


def widen_item(files, name):
    """Makes every declaration named `name` public again; whether any was found."""
    found = False
    pattern = re.compile(rf"^(\s*)pub\(crate\) ({DECLARATION} {re.escape(name)}\b)", re.M)
    for path in files:
        text = path.read_text()
        changed = pattern.sub(r"\1pub \2", text)
        if changed != text:
            path.write_text(changed)
            found = True
    return found


def widen_field(files, struct, field):
    """Makes field `field` of struct `struct` public again; whether it was found. Several ops
    have a `Plan`: a path the compiler gives (`as_strided::Plan`) picks the module's file."""
    path = struct.split("<")[0].split("::")
    struct = path[-1]
    body = re.compile(rf"pub(?:\(crate\))? struct {re.escape(struct)}\b[^\n]*\{{\n(.*?)\n\}}", re.S)
    field_line = re.compile(rf"^(\s*)pub\(crate\) ({re.escape(field)}\s*:)", re.M)
    in_module = [f for f in files if len(path) > 1 and f.stem == path[-2]]
    for path in in_module or files:
        text = path.read_text()
        for match in body.finditer(text):
            widened = field_line.sub(r"\1pub \2", match.group(1))
            if widened != match.group(1):
                path.write_text(text[: match.start(1)] + widened + text[match.end(1) :])
                return True
    return False


# Warnings that say an item made crate-private is still named by a public one.
WIDENING_LINTS = {"private_interfaces", "private_bounds"}


def compiler_errors(stdout):
    """The error diagnostics of cargo's JSON messages, and the warnings of WIDENING_LINTS."""
    for line in stdout.splitlines():
        message = json.loads(line) if line.startswith("{") else {}
        if message.get("reason") != "compiler-message":
            continue
        diagnostic = message["message"]
        code = (diagnostic.get("code") or {}).get("code")
        if diagnostic["level"] == "error" or code in WIDENING_LINTS:
            yield diagnostic


def spans(diagnostic):
    """Every span of a diagnostic, its notes' included."""
    yield from diagnostic["spans"]
    for child in diagnostic["children"]:
        yield from spans(child)


def widen(checkout, files, error):
    """Makes the declaration an error reports private public again; whether one was found.
    E0603 and E0624 point at the declaration itself; the others are found by name."""
    widened = False
    for span in spans(error):
        path = checkout / span["file_name"]
        if path in files and error.get("code") and error["code"]["code"] in ("E0603", "E0624"):
            lines = path.read_text().split("\n")
            # The span may begin at the item's attributes: its first `pub(crate)` from there.
            for number in range(span["line_start"] - 1, min(span["line_end"], len(lines))):
                if "pub(crate) " in lines[number]:
                    lines[number] = lines[number].replace("pub(crate) ", "pub ", 1)
                    path.write_text("\n".join(lines))
                    widened = True
                    break
    private_types = ["".join(groups) for groups in PRIVATE_TYPE.findall(error["message"])]
    for name in REEXPORT.findall(error["message"]) + private_types:
        widened |= widen_item(files, name.split("::")[-1])
    for fields, struct in PRIVATE_FIELDS.findall(error["message"]):
        for field in re.findall(r"`([^`]+)`", fields):
            widened |= widen_field(files, struct, field)
    return widened


def audited_files(checkout, crates):
    """The library source files of `crates` under `checkout`."""
    files = []
    for name in crates:
        folder, counted = CRATES[name]
        for path in sorted((checkout / folder).rglob("*.rs")):
            if counted(path.relative_to(checkout / folder)):
                files.append(path)
    return files


def main():
    args = sys.argv[1:]
    targets = ["--lib", "--bins"] if "--lib" in args else ["--all-targets"]
    crates = list(CRATES)
    if "--crate" in args:
        crates = args[args.index("--crate") + 1 :][:1]
        if not crates or crates[0] not in CRATES:
            sys.exit(f"reference_api_audit: --crate is one of {', '.join(CRATES)}")
    scratch = Path(tempfile.mkdtemp(prefix="opspec-api-audit-"))
    checkout = scratch / "tree"
    listed = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True, capture_output=True, text=True,
    ).stdout
    try:
        for name in filter(None, listed.split("\0")):
            if (ROOT / name).is_file():
                (checkout / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, checkout / name)
        files = audited_files(checkout, crates)
        for path in files:
            path.write_text(narrow(path.read_text()))
        env = {**os.environ, "CARGO_TARGET_DIR": str(ROOT / "target" / "api-audit")}
        for _ in range(30):
            check = subprocess.run(
                ["cargo", "check", "--workspace", *targets, "--keep-going", "--message-format", "json"],
                cwd=checkout, env=env, capture_output=True, text=True,
            )
            errors = list(compiler_errors(check.stdout))
            if check.returncode == 0 and not errors:
                break
            widened = False
            for error in errors:
                widened |= widen(checkout, files, error)
            if not widened:
                sys.stderr.write("\n".join(e["rendered"] or "" for e in errors))
                sys.exit("reference_api_audit: the workspace does not compile for another reason")
        else:
            sys.exit("reference_api_audit: no fixed point after 30 rounds")
        unneeded = {name: [] for name in crates}
        for path in files:
            relative = path.relative_to(checkout)
            crate = next(n for n in crates if relative.is_relative_to(CRATES[n][0]))
            original = (ROOT / relative).read_text().splitlines()
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if "pub(crate)" in line and "pub(crate)" not in original[number - 1]:
                    unneeded[crate].append(f"{relative}:{number}: {original[number - 1].strip()}")
            if "--write" in args:
                shutil.copy2(path, ROOT / relative)
        for name, items in unneeded.items():
            for item in items:
                print(item)
            print(f"{len(items)} public item(s) of the {name} that nothing outside it needs")
        sys.exit(1 if any(unneeded.values()) else 0)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
