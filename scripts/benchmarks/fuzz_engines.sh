#!/bin/sh
# Fuzz throughput per engine: builds opspec-fuzz in release, then runs the reference against
# itself on 100,000 random cases (seed 1) on the fast and the plain engine alternately, ROUNDS
# times (default 3), and prints each run's cases/s, each engine's median, and fast / plain of
# each round with its median.
# Alternating runs see the same spells of a loaded machine: compare the ratio, not the figures.
# Usage: scripts/benchmarks/fuzz_engines.sh [ROUNDS] [CASES]
set -eu
cd "$(dirname "$0")/../.."
rounds=${1:-3}
cases=${2:-100000}
cargo build -q --release -p opspec-runner --bin opspec-fuzz
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for round in $(seq "$rounds"); do
    for engine in fast plain; do
        rate=$(target/release/opspec-fuzz --quiet --seed 1 --cases "$cases" --engine "$engine" \
            --out "$out" 2>/dev/null | sed -n 's/.* s: \([0-9]*\) cases\/s.*/\1/p')
        echo "round $round $engine $rate cases/s"
    done
done | tee "$out/runs"
awk '
    { rate[$3] = rate[$3] " " $4; if ($3 == "fast") fast[$2] = $4; else ratio = ratio " " fast[$2] / $4 }
    function median(list,   n, v, i, j, t) {
        n = split(list, v, " ")
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    END {
        printf "median: fast %d cases/s, plain %d cases/s; fast / plain per round:%s, median %.3f\n",
            median(rate["fast"]), median(rate["plain"]), ratio, median(ratio)
    }' "$out/runs"
