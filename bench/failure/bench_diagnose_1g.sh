#!/bin/sh
# End-to-end: `schedmate diagnose --json` on a 1 GB log whose failure report is at the end.
# usage: bench/failure/bench_diagnose_1g.sh [SCHEDMATE_BINARY] [RUNS]
# Prints the median wall time and peak RSS over RUNS (default 5) runs, and the diagnosis.
set -eu
bin=${1:-build/src/cli/schedmate}
runs=${2:-5}
dir=${SCHEDMATE_BENCH_DIR:-/tmp}
log=$dir/schedmate_failure_1g_e2e.log
if [ ! -f "$log" ] || [ "$(stat -c %s "$log")" -lt 1073741824 ]; then
  yes '[rank0]: step 48213 | loss 2.0412 | lr 3.0e-4 | grad_norm 0.512 | tok/s 41234' |
    head -c 1073741824 > "$log.tmp"
  printf '\n[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n' >> "$log.tmp"
  printf 'ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1)\n' >> "$log.tmp"
  mv "$log.tmp" "$log"
fi
cat "$log" > /dev/null  # warm the page cache: measure the handler, not the disk
i=0
: > "$dir/schedmate_failure_1g_times"
while [ "$i" -lt "$runs" ]; do
  /usr/bin/time -f '%e %M' -o "$dir/schedmate_failure_1g_t" "$bin" diagnose "$log" --json --no-examples > "$dir/schedmate_failure_1g_out"
  cat "$dir/schedmate_failure_1g_t" >> "$dir/schedmate_failure_1g_times"
  i=$((i + 1))
done
sort -n "$dir/schedmate_failure_1g_times" | awk '{t[NR]=$1; m[NR]=$2} END {i=int((NR+1)/2); printf "diagnose 1 GB: median %.3f s wall, peak RSS %.0f MB (%d runs)\n", t[i], m[i]/1024, NR}'
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('root line', d['root_cause']['line_no'], d['label'], d['category'], 'classifier_calls', d['classifier_calls'])" "$dir/schedmate_failure_1g_out"
