#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, builds, runs every test.
#   1. unit + integration tests on a RelWithDebInfo build          (build/)
#   2. tests against a real local Slurm (started here, stopped after)  (label: slurm)
#   3. protocol tests against a real llama.cpp llama-server with a tiny random-weight model
#      (built from the source npm's node-llama-cpp ships; label: llama)
#   4. the dashboard in headless Chromium (playwright-core from npm; label: browser)
#   5. the unit tests again under AddressSanitizer + UBSan           (build-asan/)
# Environment: SCHEDMATE_SKIP_SLURM=1 skips 2; SCHEDMATE_SKIP_LLAMA=1 skips 3;
#              SCHEDMATE_SKIP_BROWSER=1 skips 4; SCHEDMATE_SKIP_ASAN=1 skips 5.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 SCHEDMATE_NO_PROGRESS=1

step() { printf '\n== %s (%s)\n' "$*" "$(date +%H:%M:%S)"; }

step "installing dependencies"
scripts/install-deps.sh --test

step "building (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHEDMATE_BUILD_TESTS=ON \
      -DSCHEDMATE_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$jobs"

status=0
step "unit and integration tests"
ctest --test-dir build --output-on-failure --no-tests=error -j"$jobs" -LE 'slurm|llama|browser' --timeout 600 || status=1

if [[ "${SCHEDMATE_SKIP_SLURM:-0}" != 1 && -x scripts/slurm-local.sh ]]; then
  step "real Slurm tests"
  scripts/slurm-local.sh install
  trap 'scripts/slurm-local.sh stop || true' EXIT
  scripts/slurm-local.sh start
  ctest --test-dir build --output-on-failure -L slurm --timeout 600 || status=1
  scripts/slurm-local.sh stop || true
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

step "done"
exit $status
