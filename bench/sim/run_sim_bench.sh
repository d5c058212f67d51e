#!/bin/sh
# Simulator benchmarks with medians. Usage: bench/sim/run_sim_bench.sh [BUILD_DIR] (default build)
# - Venus Lucid-compatible runs: 5 repetitions per policy, median wall time.
# - Scale runs (generated trace, 10,000 GPUs, tiresias): one process per size so that peak RSS
#   (getrusage) belongs to that size; 3 runs each, median time; RSS of the last run.
set -eu
BUILD=${1:-build}
BIN="$BUILD/bench/sim/sim_bench"
[ -x "$BIN" ] || { echo "build $BIN first (cmake --build $BUILD --target sim_bench)" >&2; exit 1; }
echo "== Venus Sept 2020, --lucid-compat (median of 5)"
"$BIN" --benchmark_filter='BM_VenusLucidCompat' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true 2>/dev/null | grep -E '_median|ERROR' || true
echo "== generated trace, 10,000 GPUs, tiresias (median of 3; peak RSS)"
for n in "jobs:10000/load_pct:80" "jobs:100000/load_pct:80" "jobs:1000000/load_pct:80" "jobs:1000000/load_pct:100"; do
  for i in 1 2 3; do
    "$BIN" --benchmark_filter="BM_ScaleTiresias/$n/" --benchmark_format=csv 2>/dev/null |
      awk -F, -v n="$n" '/BM_ScaleTiresias/ {print n, $3, $NF}'
  done | sort -k2 -g | awk 'NR==2 {printf "jobs=%s median_wall_s=%s peak_rss_mib=%s\n", $1, $2, $3}'
done
