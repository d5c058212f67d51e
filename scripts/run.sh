#!/usr/bin/env bash
# The main job on bundled data: installs what is missing, builds schedmate, then replays the
# bundled Philly-derived trace under every scheduling policy and writes a plot.
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=1
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHEDMATE_BUILD_TESTS=OFF \
      -DSCHEDMATE_BUILD_BENCH=OFF >/dev/null
cmake --build build -j"$(nproc)" --target schedmate
mkdir -p out
trace=data/traces/philly_chronus_mix1_1h.csv
echo "== schedmate simulate on $trace (every policy)"
./build/src/cli/schedmate simulate --trace "$trace" \
    --vc-config data/traces/philly_chronus_mix1_1h_vc_config.csv --policy all \
    --plot out/demo.svg "$@"
