"""The answer of an engine adapter whose packages are not installed: the hello gets an error that
names the missing module and the install command (the adapter's manifest's, engine.toml), so the
runner stops (exit code 2) with that message instead of reporting a run. Standard library only,
so that it works without numpy too.
"""

import json
import os
import sys
import tomllib


def serve_missing(adapter, error):
    """Answers the hello of the adapter whose script is `adapter` (its `__file__`) with `error`,
    the ImportError, then exits."""
    folder = os.path.dirname(os.path.abspath(adapter))
    with open(os.path.join(folder, "engine.toml"), "rb") as f:
        install = tomllib.load(f)["install"]
    message = (
        f"the {os.path.basename(folder)} adapter's packages are not installed ({type(error).__name__}: {error}); "
        f"install them with: {install}"
    )
    print(message, file=sys.stderr)
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps({"type": "error", "id": None, "message": message}) + "\n")
            sys.stdout.flush()
            break
    sys.exit(0)
