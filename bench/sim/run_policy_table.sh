#!/bin/sh
# Every policy on every shared trace with run times, one markdown table (issue 12).
# Usage: bench/sim/run_policy_table.sh [BUILD_DIR] [SHARED_DIR]   (defaults: build, ../shared)
#
# Estimates are the advisor's, online and without future leak: `history replay` writes them
# (job_id,predicted_duration_s,p10_s,p50_s,p90_s) and qssf, lucid and schedmate read that file
# (--estimator file: the point for qssf/lucid, the point plus p10/p50/p90 for schedmate's Gittins
# ranks). "schedmate+eta" adds the simulator's modelled tracker ETA (--eta-sigma 0.3: after 10% of
# a job's run, its true remaining time x exp(0.3 Z), one seeded draw per job). fifo, sjf, tiresias
# use no estimate; sjf and srtf (the reference) use true run times, as in Lucid.
# Clusters: Venus with Lucid's vc_config.csv (15 VCs) and co-location profiles; the GPW traces on
# one partition of 8-GPU nodes holding the trace's mean GPU demand over its submission window
# (sum of GPUs x run time / submit span, rounded down to whole nodes). Traces without GPU counts
# (Theta: gpu_num is always 0) are listed and skipped.
# Columns: average JCT (s); wall = the simulation's own wall time (JSON wall_s, trace loading
# excluded); cpu = the process's user+sys CPU time (trace loading and estimates included), so
# a loaded machine shows in wall but not in cpu. One run each (deterministic results).
set -eu
BUILD=${1:-build}
SHARED=${2:-../shared}
BIN="$BUILD/src/cli/schedmate"
[ -x "$BIN" ] || { echo "build $BIN first (cmake --build $BUILD --target schedmate)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T="$SHARED/traces"
POLICIES="fifo sjf qssf tiresias lucid schedmate schedmate+eta srtf"

run() {  # run NAME POLICY ARGS...: prints "jct wall cpu"
  name=$1; pol=$2; shift 2
  extra=""
  case $pol in
    qssf|lucid|schedmate) extra="--estimates $TMP/$name.pred.csv --estimator file" ;;
    schedmate+eta) pol=schedmate; extra="--estimates $TMP/$name.pred.csv --estimator file --eta-sigma 0.3" ;;
  esac
  # shellcheck disable=SC2086
  /usr/bin/time -f "%U %S" -o "$TMP/time" "$BIN" simulate "$@" --policy "$pol" $extra --json \
    >"$TMP/out.json" 2>"$TMP/err" || { echo "failed"; cat "$TMP/err" >&2; return; }
  python3 - "$TMP/out.json" "$TMP/time" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["policies"][0]
u, s = open(sys.argv[2]).read().split()[-2:]
print("%.0f %.2f %.2f" % (p["avg_jct_s"], p["wall_s"], float(u) + float(s)))
PY
}

gpw_gpus() {  # mean GPU demand over the submission window, whole 8-GPU nodes
  python3 - "$1" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
work = sum(float(r["gpu_num"]) * max(0.0, float(r["run_time"])) for r in rows)
span = sum(float(r["interval"]) for r in rows[1:])
print(int(work / span / 8) * 8 if span > 0 else 0)
PY
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
printf '| trace | cluster |'
for p in $POLICIES; do printf ' %s JCT s (wall s / cpu s) |' "$p"; done
printf '\n|---|---|'
for p in $POLICIES; do printf '%s' '---|'; done
printf '\n'
for name in venus helios philly theta; do
  case $name in
    venus) tr="$T/venus_sept2020_lucid/venus_sept2020_jobs.csv"
           args="--trace $tr --vc-config $T/venus_sept2020_lucid/lucid_aux/vc_config.csv"
           cluster="15 VCs, 1,080 GPUs" ;;
    helios) tr="$T/helios_gpw_15k/helios_data_training.csv" ;;
    philly) tr="$T/philly_gpw_15k/philly_data_training.csv" ;;
    theta) tr="$T/theta_gpw_15k/theta_data_training.csv" ;;
  esac
  [ -f "$tr" ] || { echo "| $name | (missing: $tr) |"; continue; }
  if [ "$name" != venus ]; then
    g=$(gpw_gpus "$tr")
    if [ "$g" -le 0 ]; then echo "| $name GPW | no GPU counts: skipped |"; continue; fi
    args="--trace $tr --gpus $g"
    cluster="$g GPUs"
  fi
  "$BIN" history replay --trace "$tr" --out "$TMP/$name.pred.csv" >/dev/null 2>&1
  printf '| %s | %s |' "$name" "$cluster"
  for p in $POLICIES; do
    # shellcheck disable=SC2086
    set -- $(run "$name" "$p" $args)
    printf ' %s (%s / %s) |' "$1" "$2" "$3"
  done
  printf '\n'
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
