#!/bin/sh
# Regenerates BENCHMARKS.md: builds the runner (the suite's run is timed, not its build), then
# times every layout operator against a plain copy and against numpy
# (crates/kernels/benches/layout.rs and crates/kernels/benches/numpy_layout.py), three whole runs,
# then the loading speed of spec data (benches/spec_load.rs), which adds its section. Needs python3 with numpy. Takes about four minutes.
set -eu
cd "$(dirname "$0")/.."
cargo build --release -p opspec-runner --bin runner
OPSPEC_BENCH_RUNS=3 OPSPEC_BENCH_MARKDOWN="$PWD/BENCHMARKS.md" cargo bench -p opspec-kernels --bench layout
OPSPEC_BENCH_MARKDOWN="$PWD/BENCHMARKS.md" cargo bench -p opspec --bench spec_load
