"""Error kinds from an engine's messages, shared by the adapters whose errors.py lists message
patterns: where the message names the rule it enforces, the kind of docs/protocol.md that rule
is; anything else has no kind. The patterns are each engine's data, in
its errors.py as `PATTERNS`, a list of (op or None for any, regular expression, kind); its
test_errors.py checks each against the engine's own message with `check`.

TensorRT-RTX's adapter reads its builder's log with patterns of its own form (KIND_PATTERNS in its
backend.py, an internal error apart) and checks them with a test of its own.
"""

import re
import sys


def classifier(patterns):
    """`error_kind(text, op)`: the kind of the first pattern of `patterns` in scope for `op` that
    `text` matches, or None."""

    def error_kind(text, op):
        for scope, pattern, kind in patterns:
            if (scope is None or scope == op) and re.search(pattern, text):
                return kind
        return None

    return error_kind


def check(patterns, cases):
    """The exit code of an engine's test_errors.py: each case (op, the engine's message, expected
    kind or None) must get its kind from `patterns`, and each pattern must match a case in its
    scope (no kind rests on a message never seen). Prints a line a case, the failures to stderr."""
    error_kind = classifier(patterns)
    failures = []
    for op, text, kind in cases:
        got = error_kind(text, op)
        print(f"{'ok  ' if got == kind else 'FAIL'} {op}: {kind} <- {text[:200]}")
        if got != kind:
            failures.append((op, kind, got, text))
    matched = {p for op, text, _ in cases for scope, p, _ in patterns if scope in (None, op) and re.search(p, text)}
    unused = [p for _, p, _ in patterns if p not in matched]
    if unused:
        failures.append(("patterns no case matches", unused, None, ""))
    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failures else 0
