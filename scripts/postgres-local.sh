#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server on this machine, for schedmate's shared-store tests, CI and demos.
# No systemd: initdb + pg_ctl from /usr/lib/postgresql/15/bin, run as the `postgres` user (Debian's
# package creates it) in its own directory on a free port, trust authentication on 127.0.0.1 only.
#
#   scripts/postgres-local.sh install   apt-get install postgresql-15 (as root; once)
#   scripts/postgres-local.sh start     initdb (first time), start, create the database; prints the
#                                       URL (idempotent: a running server is kept)
#   scripts/postgres-local.sh stop      stop the server this script started (fast shutdown)
#   scripts/postgres-local.sh status    exit 0 only when the server answers
#   scripts/postgres-local.sh env       print `export SCHEDMATE_PG_URL=...` for eval
#   scripts/postgres-local.sh clean     stop, then remove the directory
#
# Settings (environment):
#   SCHEDMATE_PG_DIR   data, socket, log and port file        default /tmp/schedmate-pg
#   SCHEDMATE_PG_PORT  port to listen on                       default: first free from 15432
#   SCHEDMATE_PG_DB    database name                           default schedmate
set -euo pipefail

DIR=${SCHEDMATE_PG_DIR:-/tmp/schedmate-pg}
DB=${SCHEDMATE_PG_DB:-schedmate}
BIN=/usr/lib/postgresql/15/bin
PG_USER=postgres

say() { echo "[postgres-local] $*" >&2; }
die() { echo "[postgres-local] error: $*" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$PG_USER" -- "$@"
  elif [ "$(id -un)" = "$PG_USER" ]; then
    "$@"
  else
    die "run as root or as $PG_USER (the server runs as $PG_USER)"
  fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pick_port() {
  if [ -n "${SCHEDMATE_PG_PORT:-}" ]; then echo "$SCHEDMATE_PG_PORT"; return; fi
  local p=15432
  while ! port_free "$p"; do p=$((p + 1)); [ "$p" -lt 15532 ] || die "no free port in 15432..15531"; done
  echo "$p"
}

url() { echo "postgresql://$PG_USER@127.0.0.1:$(cat "$DIR/port")/$DB"; }

answers() {
  [ -f "$DIR/port" ] && as_pg "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1 &&
    "$BIN/pg_isready" -q -h 127.0.0.1 -p "$(cat "$DIR/port")" 2>/dev/null
}

cmd_install() {
  if [ -x "$BIN/pg_ctl" ]; then say "postgresql-15 already installed"; return; fi
  [ "$(id -u)" = 0 ] || die "install needs root"
  # Keep the package's scripts from starting a cluster through invoke-rc.d (no systemd here).
  local own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null
  [ "$own_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
  [ -x "$BIN/pg_ctl" ] || die "postgresql-15 did not install $BIN/pg_ctl"
}

cmd_start() {
  [ -x "$BIN/pg_ctl" ] || die "no $BIN/pg_ctl: run '$0 install' first"
  id "$PG_USER" >/dev/null 2>&1 || die "no $PG_USER user (installed by the postgresql package)"
  if answers; then say "already running: $(url)"; url; return; fi
  mkdir -p "$DIR"
  chown "$PG_USER" "$DIR"
  chmod 700 "$DIR"
  if [ ! -f "$DIR/data/PG_VERSION" ]; then
    as_pg "$BIN/initdb" -D "$DIR/data" -U "$PG_USER" -A trust -E UTF8 --no-instructions >"$DIR/initdb.log" 2>&1 ||
      die "initdb failed: $(tail -5 "$DIR/initdb.log")"
  fi
  local port
  port=$(pick_port)
  as_pg sh -c "echo $port >'$DIR/port'"
  # Local tests only: loopback TCP and a private socket directory, fsync kept on (kill -9 tests).
  as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
    -o "-p $port -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null ||
    die "server did not start: $(tail -5 "$DIR/server.log")"
  if ! as_pg "$BIN/psql" -h 127.0.0.1 -p "$port" -U "$PG_USER" -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
    as_pg "$BIN/createdb" -h 127.0.0.1 -p "$port" -U "$PG_USER" "$DB"
  fi
  say "running: $(url) (log $DIR/server.log)"
  url
}

cmd_stop() {
  if [ -f "$DIR/data/postmaster.pid" ]; then
    as_pg "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null && say "stopped"
  else
    say "not running"
  fi
}

cmd_status() {
  if answers; then say "running: $(url)"; else say "not running"; return 1; fi
}

cmd_env() {
  answers || die "not running: '$0 start' first"
  echo "export SCHEDMATE_PG_URL=$(url)"
}

cmd_clean() {
  cmd_stop || true
  rm -rf "$DIR"
  say "removed $DIR"
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  clean) cmd_clean ;;
  *) echo "usage: $0 install|start|stop|status|env|clean" >&2; exit 2 ;;
esac
