#!/usr/bin/env bash
# Runs the fault tests (runner/tests/faulty_backend.rs) ROUNDS times (default 10) beside busy
# loops, two per core by default (LOAD), and prints how many rounds passed; exits 1 unless all
# did. The tests wait for processes to appear or disappear by polling to a deadline, so a
# loaded machine may make them slower but never makes them fail.
#
#   scripts/audits/fault_tests_under_load.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."

rounds=${1:-10}
load=${LOAD:-$((2 * $(nproc)))}
# The test binary, and the test backends it builds on first use (runner/test-backends).
cargo test -q -p opspec-runner --test faulty_backend --no-run
cargo build -q -p opspec-test-backends

busy=()
stop_busy() { [ ${#busy[@]} -eq 0 ] || kill "${busy[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
for _ in $(seq "$load"); do
    ( while :; do :; done ) &
    busy+=($!)
done

passed=0
for round in $(seq "$rounds"); do
    if cargo test -q -p opspec-runner --test faulty_backend >"${TMPDIR:-/tmp}/fault-round.log" 2>&1; then
        passed=$((passed + 1))
        echo "round $round: passed"
    else
        echo "round $round: FAILED"
        grep -E "^(---- |thread|  left|  right|test result)" "${TMPDIR:-/tmp}/fault-round.log" | head -20
    fi
done
rm -f "${TMPDIR:-/tmp}/fault-round.log"
echo "fault tests under a load of $load busy loops on $(nproc) cores: $passed of $rounds rounds passed"
[ "$passed" -eq "$rounds" ]
