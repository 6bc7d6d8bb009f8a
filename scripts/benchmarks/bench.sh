#!/bin/sh
# Regenerates BENCHMARKS.md: builds the runner (the suite's run is timed, not its build), then
# times every layout operator against a plain copy and against numpy
# (crates/kernels/benches/layout.rs and crates/kernels/benches/numpy_layout.py), three whole runs,
# then the loading speed of spec data (crates/spec/benches/spec_load.rs). The benches only print their
# sections; scripts/benchmarks/benchmarks_md.py merges them into BENCHMARKS.md, keeping the sections written
# by hand or by other benches. Needs python3 with numpy. Takes about four minutes.
set -eu
cd "$(dirname "$0")/../.."
cargo build --release -p opspec-runner --bin runner
mkdir -p target/bench
OPSPEC_BENCH_RUNS=3 cargo bench -p opspec-kernels --bench layout -- --markdown > target/bench/layout.md
python3 scripts/benchmarks/benchmarks_md.py BENCHMARKS.md < target/bench/layout.md
cargo bench -p opspec-spec --bench spec_load > target/bench/spec_load.md
python3 scripts/benchmarks/benchmarks_md.py BENCHMARKS.md < target/bench/spec_load.md
