#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, builds, runs every test.
#   1. unit + integration tests on a RelWithDebInfo build          (build/); before them,
#      scripts/check-unity.py on its unity batches (cmake/Unity.cmake)
#   2. the Debian package: cpack builds it, dpkg installs it, its systemd unit runs (systemctl, or
#      the unit's command line as its user without systemd), /healthz answers, dpkg --purge
#      removes it all (label: package; root only, else skipped saying so)
#   3. tests against a real local Slurm (started here, stopped after)  (label: slurm)
#   3b. tests against a real local PostgreSQL 15 (scripts/postgres-local.sh, started here, stopped
#      after): the store on both backends, leader election and the kill -9 failover loop
#      (label: postgres)
#   4. protocol tests against a real llama.cpp llama-server with a tiny random-weight model
#      (built from the source npm's node-llama-cpp ships; label: llama)
#   5. the dashboard in headless Chromium (playwright-core from npm; label: browser)
#   6. the unit tests again under AddressSanitizer + UBSan           (build-asan/)
#   7. every libFuzzer target (fuzz/) for a bounded time, clang + ASan + UBSan (build-fuzz/): each
#      runs on a copy of its seed corpus in build-fuzz/fuzz-run/<target>/ (the source tree is never
#      written); a crash, sanitizer report, hang (-timeout) or memory blow-up (-rss_limit_mb) fails
#      the run and prints the reproducer's path and the command that replays it
# Environment: SCHEDMATE_SKIP_PACKAGE=1 skips 2; SCHEDMATE_SKIP_SLURM=1 skips 3;
#              SCHEDMATE_SKIP_POSTGRES=1 skips 3b;
#              SCHEDMATE_SKIP_LLAMA=1 skips 4; SCHEDMATE_SKIP_BROWSER=1 skips 5;
#              SCHEDMATE_SKIP_ASAN=1 skips 6; SCHEDMATE_SKIP_FUZZ=1 skips 7; SCHEDMATE_FUZZ_SECONDS=N fuzzes each target for N
#              seconds (default 20; targets run nproc at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 SCHEDMATE_NO_PROGRESS=1

step() { printf '\n== %s (%s)\n' "$*" "$(date +%H:%M:%S)"; }

# run_fuzzers SECONDS: every target in build-fuzz/fuzz_targets.txt ("name<TAB>binary<TAB>folder",
# written by fuzz/CMakeLists.txt), $jobs at a time, each on a fresh copy of its seeds
# (folder/corpus/name/) with its dictionary (folder/name.dict) when there is one. Returns 1 when
# any target failed. Paths are absolute: a target may change its working directory.
run_fuzzers() {
  local seconds=$1 out="$root/build-fuzz/fuzz-run" failed=0 name bin src
  rm -rf "$out"
  mkdir -p "$out"
  while IFS=$'\t' read -r name bin src; do
    [[ -n "$name" ]] || continue
    while (( $(jobs -rp | wc -l) >= jobs )); do wait -n || true; done
    mkdir -p "$out/$name/corpus" "$out/$name/artifacts"
    if [[ -d "$src/corpus/$name" ]]; then cp -R "$src/corpus/$name/." "$out/$name/corpus/"; fi
    local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
                -artifact_prefix="$out/$name/artifacts/")
    if [[ -f "$src/$name.dict" ]]; then args+=(-dict="$src/$name.dict"); fi
    # stdin from /dev/null: a config naming /dev/stdin as a file to read cannot block.
    ( rc=0
      UBSAN_OPTIONS=print_stacktrace=1 "$bin" "${args[@]}" "$out/$name/corpus" </dev/null \
        >"$out/$name/log" 2>&1 || rc=$?
      echo "$rc" >"$out/$name/rc" ) &
  done < build-fuzz/fuzz_targets.txt
  wait
  while IFS=$'\t' read -r name bin src; do
    [[ -n "$name" ]] || continue
    local rc
    rc=$(cat "$out/$name/rc" 2>/dev/null || echo missing)
    if [[ "$rc" == 0 ]]; then
      echo "fuzz: $name: $(grep -ho 'stat::number_of_executed_units: *[0-9]*' "$out/$name/log" |
                            grep -o '[0-9]*$') runs, no failure"
      continue
    fi
    failed=1
    echo "fuzz: $name FAILED (exit $rc); log: $out/$name/log" >&2
    tail -n 40 "$out/$name/log" >&2
    local repro
    for repro in "$out/$name/artifacts"/*; do
      [[ -e "$repro" ]] || continue
      echo "fuzz: $name: reproducer $repro (replay: $bin $repro)" >&2
    done
  done < build-fuzz/fuzz_targets.txt
  return $failed
}

step "installing dependencies"
scripts/install-deps.sh --test

step "building (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHEDMATE_BUILD_TESTS=ON \
      -DSCHEDMATE_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$jobs"

status=0
step "unity batches: no two files of a batch keep the same name to themselves"
scripts/check-unity.py build || status=1

step "unit and integration tests"
ctest --test-dir build --output-on-failure --no-tests=error -j"$jobs" -LE 'slurm|llama|browser|package|postgres' --timeout 600 || status=1

if [[ "${SCHEDMATE_SKIP_PACKAGE:-0}" != 1 ]]; then
  step "Debian package: build, install, serve, purge"
  # Installs and purges the package system-wide (the test leaves the machine as it found it).
  SCHEDMATE_PACKAGE_TEST=1 ctest --test-dir build --output-on-failure -L package --timeout 900 || status=1
fi

if [[ "${SCHEDMATE_SKIP_SLURM:-0}" != 1 && -x scripts/slurm-local.sh ]]; then
  step "real Slurm tests"
  # Accounting (slurmdbd + MariaDB) so the QOS- and association-limit cases of slurm_why run;
  # WITH_DBD=0 skips them.
  export WITH_DBD=${WITH_DBD:-1}
  # Memory allocated per job (CR_Core_Memory), so slurm_anomalies checks a memory over-request
  # against sstat's use; SLURM_MEMORY=0 skips that check.
  export SLURM_MEMORY=${SLURM_MEMORY:-1}
  scripts/slurm-local.sh install
  # A second, smaller cluster beside it (no accounting) for slurm_clusters: one serve watching
  # both (slurm.clusters). Its own directory, ports and ClusterName; it reuses munged.
  second=(env SCHEDMATE_SLURM_DIR=/tmp/schedmate-slurm-b SLURM_PORT_BASE=17210
          SLURM_CLUSTER_NAME=schedmate-b WITH_DBD=0 scripts/slurm-local.sh)
  trap '"${second[@]}" stop || true; scripts/slurm-local.sh stop || true' EXIT
  scripts/slurm-local.sh start
  "${second[@]}" start
  SCHEDMATE_SLURM_CONF_B=/tmp/schedmate-slurm-b/etc/slurm.conf \
    ctest --test-dir build --output-on-failure -L slurm --timeout 600 || status=1
  "${second[@]}" stop || true
  scripts/slurm-local.sh stop || true
  trap - EXIT
fi

if [[ "${SCHEDMATE_SKIP_POSTGRES:-0}" != 1 && -x scripts/postgres-local.sh ]]; then
  step "real PostgreSQL tests"
  scripts/postgres-local.sh install
  trap 'scripts/postgres-local.sh stop || true' EXIT
  scripts/postgres-local.sh start >/dev/null
  eval "$(scripts/postgres-local.sh env)"
  export SCHEDMATE_PG_URL
  ctest --test-dir build --output-on-failure -L postgres --timeout 600 || status=1
  unset SCHEDMATE_PG_URL
  scripts/postgres-local.sh stop || true
  trap - EXIT
fi

if [[ "${SCHEDMATE_SKIP_LLAMA:-0}" != 1 ]]; then
  step "real llama-server protocol tests"
  # Building llama-server needs the npm registry; without it these tests are skipped, not failed.
  if scripts/llama-server.sh install; then
    eval "$(scripts/llama-server.sh env)"
    export SCHEDMATE_LLAMA_SERVER_BIN SCHEDMATE_LLAMA_MODEL
    ctest --test-dir build --output-on-failure -L llama --timeout 600 || status=1
  else
    echo "schedmate: warning: could not build llama-server; its protocol tests were skipped" >&2
  fi
fi

if [[ "${SCHEDMATE_SKIP_BROWSER:-0}" != 1 ]]; then
  step "dashboard in a real browser"
  # playwright-core comes from the npm registry (no browser download: Debian's chromium is used).
  if npm ci --ignore-scripts --no-audit --no-fund --prefix web >/dev/null; then
    ctest --test-dir build --output-on-failure -L browser --timeout 600 || status=1
  else
    echo "schedmate: warning: npm ci failed in web/; the browser test was skipped" >&2
  fi
fi

if [[ "${SCHEDMATE_SKIP_ASAN:-0}" != 1 ]]; then
  step "unit tests under ASan + UBSan"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSCHEDMATE_SANITIZE=ON \
        -DSCHEDMATE_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure --no-tests=error -j"$jobs" -L unit --timeout 900 || status=1
fi

if [[ "${SCHEDMATE_SKIP_FUZZ:-0}" != 1 ]]; then
  fuzz_seconds=${SCHEDMATE_FUZZ_SECONDS:-20}
  if [[ ! "$fuzz_seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "schedmate: SCHEDMATE_FUZZ_SECONDS must be a positive number of seconds" >&2
    exit 2
  fi
  step "fuzz targets, ${fuzz_seconds} s each"
  # -O1 and line tables only: the usual fuzzing build, quicker to compile than -O2 -g.
  CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DSCHEDMATE_BUILD_FUZZ=ON \
        -DSCHEDMATE_BUILD_TESTS=OFF -DSCHEDMATE_BUILD_BENCH=OFF >/dev/null
  cmake --build build-fuzz -j"$jobs" --target schedmate_fuzzers
  run_fuzzers "$fuzz_seconds" || status=1
fi

step "done"
exit $status
