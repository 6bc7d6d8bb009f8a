"""The answer of an engine adapter whose packages are not installed: the hello gets an error that
names the missing module and the install command, so the runner stops (exit code 2) with that
message instead of reporting a run. Standard library only, so that it works without numpy too.
"""

import json
import sys


def serve_missing(engine, error, requirements=None, command=None):
    """`requirements`: the adapter's pip requirements file; `command`: the install command, for an
    engine installed otherwise (a system package)."""
    if command is None:
        command = f"python3 -m pip install -r {requirements}"
    message = (
        f"the {engine} adapter's packages are not installed ({type(error).__name__}: {error}); "
        f"install them with: {command}"
    )
    print(message, file=sys.stderr)
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps({"type": "error", "id": None, "message": message}) + "\n")
            sys.stdout.flush()
            return
