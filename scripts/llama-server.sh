#!/usr/bin/env bash
# A real llama.cpp `llama-server` with a tiny random-weight model, for PROTOCOL-LEVEL end-to-end
# tests of schedmate's LLM path (tests/llm/llama_server_e2e_test.cc). The model's answers are
# gibberish by construction: never use this server to judge answer quality.
#
# Where it comes from (no network besides the npm registry is needed): the npm package
# node-llama-cpp (pinned below) ships the full llama.cpp source as llama/gitRelease.bundle and
# vocab-only GGUF files (models/ggml-vocab-*.gguf). `install` clones the bundle, builds only the
# llama-server target (CPU, Release), and writes a tiny Qwen2 GGUF with random weights and the
# real Qwen2 tokenizer using llama.cpp's own gguf-py (scripts/make_tiny_gguf.py).
#
# Everything lives in $SCHEDMATE_LLAMA_CACHE (default: <repo>/.cache/llama, git-ignored).
set -euo pipefail

readonly NODE_LLAMA_CPP_VERSION="3.22.1"
REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly REPO_DIR
readonly CACHE="${SCHEDMATE_LLAMA_CACHE:-$REPO_DIR/.cache/llama}"
readonly NPM_DIR="$CACHE/npm"
readonly PKG_DIR="$NPM_DIR/node_modules/node-llama-cpp"
readonly SRC_DIR="$CACHE/llama.cpp"
readonly BUILD_DIR="$CACHE/build"
readonly SERVER_BIN="$BUILD_DIR/bin/llama-server"
readonly MODEL="$CACHE/models/tiny-qwen2.gguf"
readonly RUN_DIR="$CACHE/run"
readonly PID_FILE="$RUN_DIR/server.pid"
readonly URL_FILE="$RUN_DIR/server.url"
readonly KEY_FILE="$RUN_DIR/server.key"
readonly LOG_FILE="$RUN_DIR/server.log"
readonly STAMP="$CACHE/node-llama-cpp.version"
readonly MODEL_ALIAS="tiny-qwen2-random"
readonly PYTHON="${SCHEDMATE_LLAMA_PYTHON:-/usr/bin/python3}"  # Debian's, which has python3-numpy

usage() {
  cat <<EOF
Usage: scripts/llama-server.sh COMMAND [OPTIONS]

A real llama-server (built from the llama.cpp source that npm's node-llama-cpp@$NODE_LLAMA_CPP_VERSION
ships) with a tiny random-weight Qwen2 GGUF, for protocol-level end-to-end tests only: its answers
are gibberish by construction.

Commands:
  install                      npm-install node-llama-cpp (--ignore-scripts), clone its llama.cpp
                               bundle, build llama-server (CPU, Release), write the tiny GGUF.
                               Idempotent: finished steps are skipped. Needs node/npm, cmake, a C++
                               compiler, git, curl and python3-numpy + python3-yaml (Debian).
  start [--port P] [--api-key K]
                               Start llama-server in the background on 127.0.0.1 (default port
                               18089) with chat (--jinja) and embeddings (--embeddings --pooling
                               mean) on the one model; wait for /health; print the base URL.
  stop                         Stop the server started by 'start'.
  status                       Print whether it runs (exit 0) or not (exit 3).
  env                          Print the SCHEDMATE_LLAMA_* variables that llama_e2e_test reads, as
                               shell assignments:  eval "\$(scripts/llama-server.sh env)"
  help, --help                 This text.

Files: $CACHE (override with SCHEDMATE_LLAMA_CACHE).
EOF
}

log() { echo "llama-server.sh: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

need() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required but not installed"
  done
}

# --- install -------------------------------------------------------------------------------

install_package() {
  if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$NODE_LLAMA_CPP_VERSION" && -f "$PKG_DIR/llama/gitRelease.bundle" ]]; then
    log "node-llama-cpp@$NODE_LLAMA_CPP_VERSION: already installed"
    return
  fi
  need npm
  # A different pinned version: everything derived from the old source goes too.
  rm -rf "$NPM_DIR" "$SRC_DIR" "$BUILD_DIR" "$MODEL" "$STAMP"
  mkdir -p "$NPM_DIR"
  log "npm install node-llama-cpp@$NODE_LLAMA_CPP_VERSION (scripts and prebuilt binaries skipped)"
  # --ignore-scripts: its postinstall would try to download or build binaries of its own.
  # --omit=optional: the optional @node-llama-cpp/* packages are prebuilt binaries (~670 MB).
  (cd "$NPM_DIR" && npm install --prefix . --ignore-scripts --omit=optional --no-audit --no-fund \
    --loglevel=error "node-llama-cpp@$NODE_LLAMA_CPP_VERSION" >/dev/null)
  [[ -f "$PKG_DIR/llama/gitRelease.bundle" ]] ||
    die "node-llama-cpp@$NODE_LLAMA_CPP_VERSION has no llama/gitRelease.bundle"
  echo "$NODE_LLAMA_CPP_VERSION" >"$STAMP"
}

clone_source() {
  if [[ -f "$SRC_DIR/CMakeLists.txt" && -f "$SRC_DIR/models/ggml-vocab-qwen2.gguf" ]]; then
    log "llama.cpp source: already cloned"
    return
  fi
  need git
  rm -rf "$SRC_DIR"
  log "git clone llama/gitRelease.bundle -> $SRC_DIR"
  git -c advice.detachedHead=false clone --quiet "$PKG_DIR/llama/gitRelease.bundle" "$SRC_DIR"
}

build_server() {
  if [[ -x "$SERVER_BIN" ]] && "$SERVER_BIN" --version >/dev/null 2>&1; then
    log "llama-server: already built ($SERVER_BIN)"
    return
  fi
  need cmake c++
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  log "building llama-server with $(nproc) jobs (several minutes on 2 cores)"
  # CPU only, static, no web UI assets (the prebuilt UI would be downloaded), no HTTPS.
  # LLAMA_CURL no longer exists in this llama.cpp (it has no libcurl dependency); it is passed
  # anyway so that an older pinned version does not try to download models through libcurl.
  cmake -S "$SRC_DIR" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -Wno-dev --log-level=WARNING \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_HIP=OFF -DGGML_SYCL=OFF \
    "${launcher[@]}" >/dev/null
  cmake --build "$BUILD_DIR" --config Release --target llama-server -j"$(nproc)" >"$CACHE/build.log" 2>&1 ||
    {
      tail -n 30 "$CACHE/build.log" >&2
      die "llama-server build failed (full log: $CACHE/build.log)"
    }
  [[ -x "$SERVER_BIN" ]] || die "the build finished but $SERVER_BIN is missing"
}

write_model() {
  if [[ -s "$MODEL" ]]; then
    log "model: already written ($MODEL)"
    return
  fi
  [[ -x "$PYTHON" ]] || die "$PYTHON not found (set SCHEDMATE_LLAMA_PYTHON)"
  "$PYTHON" -c "import numpy, yaml" 2>/dev/null ||
    die "$PYTHON lacks numpy or yaml: apt-get install python3-numpy python3-yaml"
  mkdir -p "$(dirname "$MODEL")"
  log "writing the tiny random-weight Qwen2 GGUF"
  PYTHONPATH="$SRC_DIR/gguf-py" "$PYTHON" "$REPO_DIR/scripts/make_tiny_gguf.py" \
    --vocab "$SRC_DIR/models/ggml-vocab-qwen2.gguf" \
    --chat-template-file "$SRC_DIR/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" \
    --out "$MODEL" >&2
}

cmd_install() {
  mkdir -p "$CACHE"
  local t0=$SECONDS
  install_package
  clone_source
  build_server
  write_model
  log "ready in $((SECONDS - t0)) s: $SERVER_BIN, $MODEL"
}

# --- start / stop / status / env -----------------------------------------------------------

running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  # Only a process that is still our llama-server counts (pids get reused).
  [[ "$(readlink "/proc/$pid/exe" 2>/dev/null || true)" == "$(readlink -f "$SERVER_BIN")" ]] || return 1
  echo "$pid"
}

health_ok() {
  curl --silent --fail --max-time 2 "$1/health" >/dev/null 2>&1
}

cmd_start() {
  local port=18089 key=""
  while (($#)); do
    case "$1" in
      --port)
        port="${2:?--port needs a value}"
        shift 2
        ;;
      --api-key)
        key="${2:?--api-key needs a value}"
        shift 2
        ;;
      *) die "start: unknown option '$1' (see --help)" ;;
    esac
  done
  if ! [[ "$port" =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
    die "start: bad port '$port'"
  fi
  [[ -x "$SERVER_BIN" && -s "$MODEL" ]] || die "not installed: run scripts/llama-server.sh install"
  need curl
  local pid
  if pid="$(running_pid)"; then
    die "already running (pid $pid, $(cat "$URL_FILE")); run 'stop' first"
  fi
  mkdir -p "$RUN_DIR"
  local url="http://127.0.0.1:$port"
  local args=(--model "$MODEL" --alias "$MODEL_ALIAS" --host 127.0.0.1 --port "$port"
    --jinja --embeddings --pooling mean --ctx-size 32768 --parallel 1 --threads 2 --seed 1
    --no-ui)
  [[ -n "$key" ]] && args+=(--api-key "$key")
  # setsid: the server outlives this script and ignores the terminal's Ctrl-C.
  setsid "$SERVER_BIN" "${args[@]}" >"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"
  echo "$url" >"$URL_FILE"
  printf '%s' "$key" >"$KEY_FILE"
  local i
  for ((i = 0; i < 600; i++)); do # 60 s
    if health_ok "$url"; then
      log "llama-server pid $pid ready (log: $LOG_FILE)"
      echo "$url"
      return
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$LOG_FILE" >&2
      rm -f "$PID_FILE"
      die "llama-server exited during startup (log: $LOG_FILE)"
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  rm -f "$PID_FILE"
  die "llama-server did not answer $url/health within 60 s (log: $LOG_FILE)"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PID_FILE"
    log "not running"
    return
  fi
  kill "$pid"
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$PID_FILE"
  log "stopped pid $pid"
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    local url
    url="$(cat "$URL_FILE")"
    if health_ok "$url"; then
      echo "running: pid $pid, $url, model $MODEL_ALIAS"
    else
      echo "running: pid $pid, $url (not answering /health)"
    fi
    return 0
  fi
  if [[ -x "$SERVER_BIN" && -s "$MODEL" ]]; then
    echo "stopped (installed: $SERVER_BIN)"
  else
    echo "stopped (not installed)"
  fi
  return 3
}

cmd_env() {
  [[ -x "$SERVER_BIN" && -s "$MODEL" ]] || die "not installed: run scripts/llama-server.sh install"
  printf 'export SCHEDMATE_LLAMA_SERVER_BIN=%q\n' "$SERVER_BIN"
  printf 'export SCHEDMATE_LLAMA_MODEL=%q\n' "$MODEL"
  if running_pid >/dev/null; then
    printf 'export SCHEDMATE_LLAMA_BASE_URL=%q\n' "$(cat "$URL_FILE")"
    if [[ -s "$KEY_FILE" ]]; then
      printf 'export SCHEDMATE_LLAMA_API_KEY=%q\n' "$(cat "$KEY_FILE")"
    fi
  fi
}

main() {
  local cmd="${1:-}"
  (($#)) && shift
  case "$cmd" in
    install) cmd_install "$@" ;;
    start) cmd_start "$@" ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) cmd_env ;;
    help | -h | --help)
      usage
      ;;
    "")
      usage >&2
      exit 2
      ;;
    *)
      log "unknown command '$cmd'"
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
