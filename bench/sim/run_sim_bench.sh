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
# The schedmate policy on 1,000,000 jobs sampled from Venus (`trace generate`, 10,000 GPUs, load
# 0.9), end to end through the CLI: once with its default estimator (the advisor, online) and once
# with --estimator oracle, which isolates the simulator and policy from the estimator's cost.
# REPS runs each (default 3), median CPU (user + sys); wall and peak RSS of that run; the load
# average. The simulate outputs (without wall_s) of every run are compared: they must be equal.
VENUS=${SHARED:-../shared}/traces/venus_sept2020_lucid/venus_sept2020_jobs.csv
CLI="$BUILD/src/cli/schedmate"
if [ -f "$VENUS" ] && [ -x "$CLI" ]; then
  big=$(mktemp -d)
  "$CLI" trace generate --from "$VENUS" --jobs 1000000 --cluster-gpus 10000 --target-load 0.9 \
    --vc all --out "$big/big.csv" >/dev/null 2>&1
  for est in advisor oracle; do
    echo "== 1,000,000 generated jobs, 10,000 GPUs, schedmate, estimator $est (median of ${REPS:-3})"
    i=0
    while [ "$i" -lt "${REPS:-3}" ]; do
      /usr/bin/time -f "%U %S %e %M" -o "$big/t" "$CLI" simulate --trace "$big/big.csv" \
        --gpus 10000 --policy schedmate --estimator "$est" --json 2>/dev/null |
        grep -v wall_s >"$big/out.$i.json"
      cmp -s "$big/out.$i.json" "$big/out.0.json" || echo "outputs differ between runs" >&2
      echo "$(cat "$big/t") $(cut -d' ' -f1 /proc/loadavg)"
      i=$((i + 1))
    done | awk '{ print $1 + $2, $1, $3, $4, $5 }' | sort -g | awk -v n="${REPS:-3}" '
      NR == int((n + 1) / 2) { printf "cpu_s=%s user_s=%s wall_s=%s peak_rss_mib=%.0f load=%s\n",
                                      $1, $2, $3, $4 / 1024, $5 }'
    # To compare builds: the summary without the (temporary) trace path.
    echo "summary md5: $(grep -v '"trace"' "$big/out.0.json" | md5sum | cut -c1-32)"
  done
  rm -rf "$big"
fi
