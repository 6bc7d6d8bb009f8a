#!/usr/bin/env bash
# Runs `cargo test` (with any arguments given) in a private TMPDIR, then fails if anything is
# left in it or if a process of the run survives: one whose command line names this build's
# target folder or that TMPDIR (CONTRIBUTING.md, "Tests leave nothing behind").
set -euo pipefail
cd "$(dirname "$0")/../.."

scratch=$(mktemp -d)
# Failing tests are checked too: what they leave is the point.
status=0
TMPDIR="$scratch" cargo test "$@" || status=$?
left=$(find "$scratch" -mindepth 1 -maxdepth 1)
if [ -n "$left" ]; then
    echo "error: cargo test left these in its TMPDIR ($scratch):" >&2
    echo "$left" >&2
    status=1
fi

target=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
# A stopped process takes a moment to disappear: look again for a few seconds. The paths go
# through the environment so that no command line here contains them.
survivors=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
    survivors=$(ps -eo pid=,args= | TARGET="$target/" SCRATCH="$scratch/" \
        awk 'index($0, ENVIRON["TARGET"]) || index($0, ENVIRON["SCRATCH"])')
    [ -z "$survivors" ] && break
    sleep 0.5
done
if [ -n "$survivors" ]; then
    echo "error: processes of cargo test still run:" >&2
    echo "$survivors" >&2
    status=1
fi

[ "$status" -eq 0 ] && rmdir "$scratch"
exit "$status"
