#!/usr/bin/env bash
# The cross-engine conformance page and its screenshot (docs/engines.md links it): runs the suite
# on the reference and on every engine of runner/backends/*/engine.toml, as scripts/engines/engines.py
# runs it (its known failures and flags; a build-only engine's trials are shape-checked, never
# passed), writes one `runner report` page of the JSON reports, and takes a screenshot of it in
# headless Chromium (the Debian package).
#
#   scripts/engines/engines_report.sh [--reuse]
#
# Writes target/engines-report/reference.json, <engine>.json for each engine, and engines.html,
# and docs/images/engines-report.png. --reuse keeps the JSON reports already there (an engine's
# run can take minutes: BENCHMARKS.md). The engines must be installed (`python3
# scripts/engines/engines.py install NAME`).
set -euo pipefail
cd "$(dirname "$0")/../.."

reuse=false
case "${1:-}" in
    --reuse) reuse=true ;;
    "") ;;
    *) echo "usage: $0 [--reuse]" >&2; exit 2 ;;
esac
command -v chromium >/dev/null || {
    echo "chromium is not installed; as root: apt-get update && apt-get install -y chromium" >&2
    exit 2
}

out=target/engines-report
mkdir -p "$out" docs/images
cargo build -q -p opspec-runner --bin runner
runner=target/debug/runner

# `run NAME COMMAND...`: COMMAND with the runner's flags of a quiet run and its JSON report. A run
# is kept even when it fails (exit code 1): the page shows its failures.
run() {
    local name=$1
    shift
    reports+=("$out/$name.json")
    if $reuse && [ -s "$out/$name.json" ]; then
        return
    fi
    echo "running the suite on $name" >&2
    "$@" -q --report-json "$out/$name.json" >"$out/$name.log" 2>&1 || [ $? -eq 1 ] || {
        echo "the $name run could not be made: see $out/$name.log" >&2
        exit 2
    }
}
reports=()
run reference "$runner"
# An assignment, so that a manifest scripts/engines/engines.py refuses stops the script; then one name a
# line into an array, so that no name is split or globbed.
engine_list=$(python3 scripts/engines/engines.py list)
mapfile -t engines <<< "$engine_list"
for engine in "${engines[@]}"; do
    run "$engine" python3 scripts/engines/engines.py run "$engine" --runner "$runner" --
done
"$runner" report "${reports[@]}" --html "$out/engines.html"

# Headless Chromium with a profile, home and XDG folders of its own (removed after), so that it
# writes nothing elsewhere.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
HOME=$profile XDG_CONFIG_HOME=$profile/config XDG_CACHE_HOME=$profile/cache \
    chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile/profile" \
    --hide-scrollbars --window-size=1440,1400 --screenshot="$PWD/docs/images/engines-report.png" \
    "file://$PWD/$out/engines.html" 2>/dev/null
echo "wrote $out/engines.html and docs/images/engines-report.png" >&2
