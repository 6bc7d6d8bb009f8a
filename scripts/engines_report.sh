#!/usr/bin/env bash
# The cross-engine conformance page and its screenshot (docs/engines.md links it): runs the suite
# on the reference, ONNX Runtime, OpenVINO, TensorRT-RTX (build-only: its trials are
# shape-checked, never passed) and XLA with their known-failures files, writes one `runner
# report` page of the five JSON reports, and takes a screenshot of it in headless Chromium (the
# Debian package).
#
#   scripts/engines_report.sh [--reuse]
#
# Writes target/engines-report/{reference,onnxruntime,openvino,tensorrt_rtx,xla}.json and
# engines.html, and docs/images/engines-report.png. --reuse keeps the JSON reports already there
# (the XLA run takes minutes: BENCHMARKS.md). The engines' packages must be installed (each adapter's README).
set -euo pipefail
cd "$(dirname "$0")/.."

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

# A run is kept even when it fails (exit code 1): the page shows its failures.
run() {
    local name=$1
    shift
    if $reuse && [ -s "$out/$name.json" ]; then
        return
    fi
    echo "running the suite on $name" >&2
    "$runner" -q --report-json "$out/$name.json" "$@" >"$out/$name.log" 2>&1 || [ $? -eq 1 ] || {
        echo "the $name run could not be made: see $out/$name.log" >&2
        exit 2
    }
}
run reference
for engine in onnxruntime openvino xla; do
    run "$engine" --timeout 60 --backend "python3 runner/backends/$engine/backend.py" \
        --expectations "runner/backends/$engine/known-failures.txt"
done
# The builder's run as CI makes it (runner/backends/tensorrt_rtx/README.md).
run tensorrt_rtx --timeout 30 --backend "python3 runner/backends/tensorrt_rtx/backend.py" \
    --expectations runner/backends/tensorrt_rtx/known-failures.txt
"$runner" report "$out"/{reference,onnxruntime,openvino,tensorrt_rtx,xla}.json --html "$out/engines.html"

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
