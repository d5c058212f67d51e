#!/usr/bin/env bash
# The fidelity benchmark (issue 13 items 3 and 6): a seeded workload of sleep jobs replayed on a
# local Slurm 22.05 and, from Slurm's own record and the same slurm.conf, in the simulator's
# `slurm` policy; plus schedmate's and squeue's start-time estimates recorded while jobs wait.
# Takes about 15 minutes; not part of scripts/test.sh. bench/slurm_fidelity/README.md has the setup
# and the results.
#   scripts/bench-fidelity.sh [OUT] [SEED] [JOBS]     (default /tmp/schedmate-bench-fidelity 13 220)
# Needs a build (build/src/cli/schedmate) and a local Slurm with the benchmark's settings and an
# empty queue; its own instance, so the default one stays free:
#   SCHEDMATE_SLURM_DIR=/tmp/schedmate-slurm-fid SLURM_PORT_BASE=17910 SLURM_NODES=4 SLURM_GPUS=8 \
#   SCHEDMATE_URL=http://127.0.0.1:9 SLURM_SCHED_PARAMS=batch_sched_delay=0,bf_interval=10,bf_resolution=1 \
#   SLURM_EXTRA_CONF=$'PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityMaxAge=10\nPriorityCalcPeriod=1' \
#   scripts/slurm-local.sh start
#   export SLURM_CONF=/tmp/schedmate-slurm-fid/etc/slurm.conf
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/schedmate-bench-fidelity}
seed=${2:-13}
jobs=${3:-220}
export SLURM_CONF=${SLURM_CONF:-/tmp/schedmate-slurm-fid/etc/slurm.conf}
scontrol ping | grep -q UP || { echo "no Slurm at $SLURM_CONF: see the header of $0" >&2; exit 1; }
rm -rf "$out"
python3 bench/slurm_fidelity/fidelity.py prepare "$out" "$seed" "$jobs"
python3 bench/slurm_fidelity/fidelity.py run "$out"
python3 bench/slurm_fidelity/fidelity.py sim "$out"
python3 bench/slurm_fidelity/fidelity.py report "$out" | tee "$out/report.txt"
