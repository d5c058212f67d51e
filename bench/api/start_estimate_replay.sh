#!/usr/bin/env bash
# Replays a small GPU workload on the local Slurm (scripts/slurm-local.sh start) with a running
# `schedmate serve --slurm` and compares, per job that waited, schedmate's FIRST start-time
# estimate and Slurm's own (squeue --start, recorded at the same moment) with the actual start.
# Usage: bench/api/start_estimate_replay.sh DATA_DIR   (the service's --data-dir)
# Bounded: 14 jobs, each <= 24 s, the whole run <= ~2 min.
set -euo pipefail
DATA=${1:?usage: $0 SERVICE_DATA_DIR}
: "${SLURM_CONF:=/tmp/schedmate-slurm/etc/slurm.conf}"; export SLURM_CONF
W=$(mktemp -d /tmp/schedmate-replay-XXXXXX)
cd "$W"
submit() { sbatch --parsable -J "replay-$1" -o /dev/null --gres=gpu:$2 -t $3 --wrap "sleep $4" 2>/dev/null; }
# A history first, so predictions have evidence: three short runs of each name.
for r in 1 2 3; do for n in a b; do submit $n 4 2 $((4 + r)) >/dev/null; done; done
while [ -n "$(squeue -h -n replay-a,replay-b -o %i)" ]; do sleep 1; done
t0=$(date +%s)
ids=()
ids+=("$(submit big 8 2 20)") ids+=("$(submit big 8 2 24)")
for i in 1 2 3 4; do ids+=("$(submit a 4 2 6)"); ids+=("$(submit b 4 2 6)"); done
while [ -n "$(squeue -h -n replay-big,replay-a,replay-b -o %i)" ]; do sleep 1; done
sleep 2
q=$(IFS=,; echo "${ids[*]}")
sqlite3 "$DATA/schedmate.db" "SELECT job_id, (first_start_us - actual_start_us)/1e6, (slurm_start_us - actual_start_us)/1e6
  FROM service_start_estimates WHERE actual_start_us IS NOT NULL AND actual_start_us - first_at_us > 2000000
  AND job_id IN ($(printf "'%s'," "${ids[@]}" | sed 's/,$//'))" | awk -F'|' '
  { n++; s = $2 < 0 ? -$2 : $2; es += s; if ($3 != "") { m++; t = $3 < 0 ? -$3 : $3; et += t } print }
  END { if (n) printf "jobs that waited: %d; schedmate first estimate mean |error| %.1fs; slurm (squeue --start) mean |error| %.1fs over %d\n", n, es / n, (m ? et / m : 0), m }'
rm -rf "$W"
