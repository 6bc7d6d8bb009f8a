"""The claim checks shared by the engine adapters' check_claims.py: each claim of an engine's
known-failures.txt, shown on the engine directly (no adapter) by the smallest program that shows
it. A script registers its checks with `@claims.claim(clause, reason)` and ends with
`sys.exit(claims.run(header))`; `stated` reads the file through the runner, never parsing it here.
"""

import json
import os
import subprocess
import sys


class Claims:
    """The registered (clause, reason, check) of one engine; a check returns whether it holds."""

    def __init__(self):
        self.checks = []

    def claim(self, clause, text):
        def register(check):
            self.checks.append((clause, text, check))
            return check

        return register

    def run(self, header, expectations=None, classes=None):
        """The exit code: 1 when a claim no longer holds, or when `expectations` (a known-failures
        file) states a claim of a class in `classes` (None: every class but `adapter`) that no
        check shows; 0 otherwise. `header()` gives the engine's version line."""
        if expectations is not None:
            unshown = stated(expectations, classes) - {(clause, text) for clause, text, _ in self.checks}
            for clause, text in sorted(unshown):
                print(f"known-failures.txt states a claim this script does not show: {clause} | {text}", file=sys.stderr)
            if unshown:
                return 1
        print(header())
        broken = []
        for clause, text, check in self.checks:
            print(f"{clause}: {text}")
            try:
                holds = bool(check())
            except Exception as e:  # noqa: BLE001 - a claim whose program fails does not hold
                print(f"    error: {type(e).__name__}: {e}")
                holds = False
            print(f"    {'holds' if holds else 'DOES NOT HOLD'}")
            if not holds:
                broken.append((clause, text))
        for clause, text in broken:
            print(f"FAILED: {clause}: {text}", file=sys.stderr)
        return 1 if broken else 0


def shown(what, value):
    print(f"    {what}: {value!r}")
    return value


def stated(expectations, classes=None):
    """(clause, reason) of every entry of the known-failures file `expectations` whose class is in
    `classes` (None: every class but `adapter`), as the runner reads the file (`runner expectations
    --json`: the runner of OPSPEC_RUNNER, or cargo's): a condition is not part of a reason."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
    runner = os.environ.get("OPSPEC_RUNNER")
    command = [runner] if runner else ["cargo", "run", "-q", "-p", "opspec-runner", "--bin", "runner", "--"]
    listed = subprocess.run(command + ["expectations", expectations, "--json"], cwd=root, capture_output=True, text=True)
    if listed.returncode != 0:
        sys.exit(f"the runner could not read {expectations}:\n{listed.stderr}")
    entries = json.loads(listed.stdout)["entries"]
    return {(e["clause"], e["reason"]) for e in entries if (e["class"] in classes if classes else e["class"] != "adapter")}
