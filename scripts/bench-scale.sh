#!/usr/bin/env bash
# The companion at scale (issue 16 part 5): bench/scale/scale_bench drives the real service
# (the engines `serve` makes, the HTTP API) with a scripted Slurm 22.05 of 10,000 pending and
# 2,000 running jobs whose logs grow at 1 MB/s in total, under 500 API requests/s (open loop).
# Runs it RUNS times (default 3) and prints each run's summary and the medians of the runs.
# Targets: poll pass <= 1 s, peak RSS <= 1 GiB, API p99 <= 10 ms. Takes ~1-2 minutes per run.
#   scripts/bench-scale.sh [RUNS] [-- extra scale_bench flags, e.g. --pending 20000]
# Needs a build with benchmarks (build/bench/scale/scale_bench). The machine's load average is
# reported with each run: the benchmark shares its cores with whatever else runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
[[ "${1:-}" == "--" ]] && shift
bin=${SCALE_BENCH:-build/bench/scale/scale_bench}
[[ -x "$bin" ]] || { echo "no $bin: cmake --build build --target scale_bench" >&2; exit 1; }
out=$(mktemp -d /tmp/schedmate-bench-scale-XXXXXX)
for i in $(seq 1 "$runs"); do
  "$bin" --passes 20 "$@" >"$out/run$i.json" 2>"$out/run$i.txt"
  cat "$out/run$i.txt"
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rs = [json.load(open(f"{out}/run{i}.json")) for i in range(1, runs + 1)]
med = lambda k: statistics.median(r[k] for r in rs)
print(f"\nmedians of {runs} runs ({rs[0]['pending']} pending + {rs[0]['running']} running jobs, "
      f"{rs[0]['nodes']} nodes, logs {med('log_bytes_per_s') / 1e6:.2f} MB/s, "
      f"API {rs[0]['api_rate']}/s; machine load {med('machine_load_1m'):.1f}):")
print(f"  poll pass   median {med('pass_median_s'):.3f} s, p95 {med('pass_p95_s'):.3f} s "
      f"(CPU median {med('pass_cpu_median_s'):.3f} s); first (cold) pass {med('first_pass_s'):.1f} s")
print(f"  memory      peak RSS {med('peak_rss_mib'):.0f} MiB "
      f"(scripted Slurm and generator before the companion: {med('rss_setup_mib'):.0f} MiB)")
print(f"  API         p50 {med('api_p50_ms'):.2f} ms, p99 {med('api_p99_ms'):.2f} ms, "
      f"during passes p99 {med('api_p99_during_pass_ms'):.2f} ms, errors {sum(r['api_errors'] for r in rs)}")
for route in rs[0]["api_routes"]:
    p99 = statistics.median(r["api_routes"][route]["p99_ms"] for r in rs)
    p50 = statistics.median(r["api_routes"][route]["p50_ms"] for r in rs)
    mx = statistics.median(r["api_routes"][route].get("max_ms", 0) for r in rs)
    n = statistics.median(r["api_routes"][route]["requests"] for r in rs)
    err = sum(r["api_routes"][route].get("errors", 0) for r in rs)
    print(f"    {route:20s} p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {mx:.2f} ms "
          f"({n:.0f} requests, {err} errors in all runs)")
print(f"  CPU         whole process {med('process_cpu_cores'):.2f} cores while the load ran")
print("  (/v1/jobs?limit=5000 is apart from the mix: one request per --big-page-ms, default 1 s)")
print(f"(per-run JSON in {out})")
PY
