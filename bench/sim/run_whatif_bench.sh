#!/bin/sh
# What-if benchmark medians. Usage: bench/sim/run_whatif_bench.sh [BUILD_DIR] (default build)
# One `schedmate whatif` scenario on a month of generated sacct history (25,000 jobs, 32 x 8 GPUs):
# parse + replay under the slurm policy + metrics; 5 repetitions, median wall time.
set -eu
BUILD=${1:-build}
BIN="$BUILD/bench/sim/whatif_bench"
[ -x "$BIN" ] || { echo "build $BIN first (cmake --build $BUILD --target whatif_bench)" >&2; exit 1; }
"$BIN" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>/dev/null |
  grep -E '_median|ERROR' || true
