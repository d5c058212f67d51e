#!/usr/bin/env bash
# Installs what schedmate needs on Debian 12 and skips what is already there.
# Usage: scripts/install-deps.sh [--test|--package]   (--package adds what building the .deb
#        needs: help2man for the man page, dpkg-dev for dpkg-shlibdeps; --test adds those and what
#        the test suite needs: fuzzing, python3-numpy/yaml and Node.js with npm for the
#        llama-server protocol test, Chromium for the dashboard's browser test; Slurm is installed
#        by scripts/slurm-local.sh)
set -euo pipefail

BUILD_PKGS=(build-essential cmake pkg-config ccache git
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev libre2-dev libsqlite3-dev libpq-dev
  libhnswlib-dev libcpp-httplib-dev libcurl4-openssl-dev libyaml-cpp-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev librsvg2-bin python3)
PACKAGE_PKGS=(help2man dpkg-dev file)
TEST_PKGS=("${PACKAGE_PKGS[@]}" clang libclang-rt-14-dev sqlite3 curl procps python3-numpy python3-yaml chromium prometheus
  postgresql-15)
if [[ "${1:-}" == "--package" ]]; then
  BUILD_PKGS+=("${PACKAGE_PKGS[@]}")
fi
if [[ "${1:-}" == "--test" ]]; then
  BUILD_PKGS+=("${TEST_PKGS[@]}")
  # npm fetches node-llama-cpp (the llama.cpp source) for scripts/llama-server.sh; keep a Node.js
  # that is already on PATH, else take Debian's.
  command -v npm >/dev/null 2>&1 || BUILD_PKGS+=(nodejs npm)
fi

missing=()
for p in "${BUILD_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "schedmate: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
