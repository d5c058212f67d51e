#!/usr/bin/env bash
# The order-mode benchmark on the local Slurm (issue 18): one Venus replay, three runs (Slurm
# alone, + schedmate time limits, + schedmate ordering), the simulator's prediction beside each,
# and a Markdown table. Takes ~20-30 minutes; not part of scripts/test.sh.
#   scripts/bench-order.sh [OUT]          (default OUT: /tmp/schedmate-bench-order)
# Needs: a build (build/src/cli/schedmate), the local Slurm started with
#   SLURM_OVERTIME_LIMIT=UNLIMITED scripts/slurm-local.sh start
# (a time limit set from a prediction then never kills a job: the three runs do the same work),
# and an empty queue. bench/slurm_order/replay.py documents the replay and its settings.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/schedmate-bench-order}
export SLURM_CONF=${SLURM_CONF:-/tmp/schedmate-slurm/etc/slurm.conf}
scontrol ping | grep -q UP || { echo "no Slurm: scripts/slurm-local.sh start" >&2; exit 1; }
if ! scontrol show config | grep -Eq '^OverTimeLimit *= *UNLIMITED'; then
  echo "warning: OverTimeLimit is not UNLIMITED: time limits set from predictions may kill jobs" \
       "(restart with SLURM_OVERTIME_LIMIT=UNLIMITED scripts/slurm-local.sh start)" >&2
fi
rm -rf "$out"
python3 bench/slurm_order/replay.py prepare "$out"
python3 bench/slurm_order/replay.py sim "$out" >/dev/null
for mode in slurm limits order; do
  python3 bench/slurm_order/replay.py run "$out" "$mode"
  sleep 5
done
python3 bench/slurm_order/replay.py report "$out" | tee "$out/table.md"
