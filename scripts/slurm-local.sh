#!/usr/bin/env bash
# A real Slurm 22.05 on this one machine, for schedmate's integration tests, CI and demos.
# No systemd needed: the daemons are started directly and stopped by their PID files.
#
#   scripts/slurm-local.sh install   apt-get install slurm-wlm + munge (as root; once)
#   scripts/slurm-local.sh start     write configs, start munged + slurmctld + one slurmd per node,
#                                    wait until every node is idle (idempotent: a running cluster is kept)
#   scripts/slurm-local.sh stop      stop only the daemons this script started
#   scripts/slurm-local.sh status    print daemons, nodes and queue; exit 0 only when the cluster is up
#   scripts/slurm-local.sh clean     stop, then remove the cluster directory
#
# Settings (environment):
#   SCHEDMATE_SLURM_DIR  cluster directory (configs, state, logs)       default /tmp/schedmate-slurm
#   SLURM_NODES          logical GPU nodes (gpu1..gpuN)                  default 2
#   SLURM_GPUS           GPUs per node (Gres=gpu:N, /dev/null-backed)    default 8
#   SLURM_CPUS           CPUs advertised per node                        default 8
#   SLURM_PORT_BASE      slurmctld listens on BASE+7, nodes on BASE+101.. default 16910
#   SLURM_CLUSTER_NAME   ClusterName= (side-by-side instances, schedmate's slurm.clusters tests)
#                                                                         default schedmate
#   SCHEDMATE_URL        where job_submit.lua asks for estimates         default http://127.0.0.1:8787
#   SLURM_OVERTIME_LIMIT minutes a job may run past its time limit       default 0 (Slurm's)
#                        (UNLIMITED for bench/slurm_order: limits set from predictions never kill)
#   SLURM_SCHED_PARAMS   SchedulerParameters=                            default batch_sched_delay=0
#   SLURM_EXTRA_CONF     more slurm.conf lines (newline-separated), e.g. PriorityType=...
#                        (bench/slurm_fidelity sets the priority and backfill settings it replays)
#   SLURM_MEMORY         1: memory is allocated per job (SelectTypeParameters=CR_Core_Memory,
#                        DefMemPerCPU=1000 of each node's RealMemory=16000), so squeue shows each
#                        job's memory and sstat's use can be held against it   default 0 (CR_Core)
#   WITH_DBD             1: accounting through slurmdbd + a private MariaDB (port BASE+6, slurmdbd
#                        BASE+9; AccountingStorageEnforce=associations,limits,qos; root gets an
#                        account "schedmate" so QOS and association limits apply)   default 0
#                        install with WITH_DBD=1 also installs slurmdbd and mariadb-server
# GPU telemetry: the nodes have no GPUs, so TaskProlog puts $DIR/bin first on every task's PATH,
# where a scripted nvidia-smi answers --query-gpu from $DIR/gpu/<job id> (lines "index, util %,
# memory MiB", written by tests; missing file: "No devices were found", exit 6).
# Several instances can run side by side: give each its own SCHEDMATE_SLURM_DIR (configs, state,
# logs, pid files, spool, jobcomp) and SLURM_PORT_BASE (slurmctld and slurmd ports). munged is
# shared: the first instance to start it stops it; a later one reuses it and never stops it.
# Clients need SLURM_CONF: `source $SCHEDMATE_SLURM_DIR/env.sh` after start.
set -euo pipefail

DIR=${SCHEDMATE_SLURM_DIR:-/tmp/schedmate-slurm}
NODES=${SLURM_NODES:-2}
GPUS=${SLURM_GPUS:-8}
CPUS=${SLURM_CPUS:-8}
PORT_BASE=${SLURM_PORT_BASE:-16910}
CLUSTER_NAME=${SLURM_CLUSTER_NAME:-schedmate}
SCHEDMATE_URL=${SCHEDMATE_URL:-http://127.0.0.1:8787}
OVERTIME=${SLURM_OVERTIME_LIMIT:-0}
SCHED_PARAMS=${SLURM_SCHED_PARAMS:-batch_sched_delay=0}
EXTRA_CONF=${SLURM_EXTRA_CONF:-}
WITH_DBD=${WITH_DBD:-0}
MEMORY=${SLURM_MEMORY:-0}
CTLD_PORT=$((PORT_BASE + 7))
DBD_PORT=$((PORT_BASE + 9))
DB_PORT=$((PORT_BASE + 6))
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LUA_SRC=$REPO/src/slurm/job_submit.lua
export SLURM_CONF=$DIR/etc/slurm.conf

say() { echo "[slurm-local] $*"; }
die() { echo "[slurm-local] error: $*" >&2; exit 1; }
running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
need_root() { [ "$(id -u)" = 0 ] || die "$1 needs root (the daemons run as root here; CI runs as root)"; }

cmd_install() {
  need_root install
  local pkgs="slurm-wlm munge curl"
  [ "$WITH_DBD" = 1 ] && pkgs="$pkgs slurmdbd mariadb-server"
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null \
     && command -v curl >/dev/null \
     && { [ "$WITH_DBD" != 1 ] || { command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null; }; }; then
    say "$pkgs already installed"
  else
    export DEBIAN_FRONTEND=noninteractive
    # Package scripts would try to start munge/slurm through invoke-rc.d; without systemd that
    # fails or leaves stray daemons. A policy-rc.d that says "no" (101) stops them while we install.
    local own_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
      chmod 755 /usr/sbin/policy-rc.d
      own_policy=1
    fi
    local rc=0
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends $pkgs >/dev/null; } || rc=$?
    [ "$own_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
    [ "$rc" = 0 ] || die "apt-get install $pkgs failed (exit $rc)"
  fi
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null \
      || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
  say "installed: $(slurmctld -V)"
}

write_configs() {
  local host n i
  host=$(hostname -s)
  mkdir -p "$DIR"/{etc,log,state,run,jobs,spool}
  for n in $(seq 1 "$NODES"); do
    mkdir -p "$DIR/spool/gpu$n" "$DIR/dev/gpu$n"
    # gres/gpu insists that File= stat()s as a device; /dev/null symlinks satisfy it.
    for i in $(seq 0 $((GPUS - 1))); do ln -sfn /dev/null "$DIR/dev/gpu$n/nvidia$i"; done
  done
  cat >"$DIR/etc/slurm.conf" <<EOF
# Written by schedmate scripts/slurm-local.sh: $NODES logical GPU nodes on one machine.
ClusterName=$CLUSTER_NAME
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort=$CTLD_PORT
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=$SCHED_PARAMS
SelectType=select/cons_tres
SelectTypeParameters=$([ "$MEMORY" = 1 ] && echo CR_Core_Memory || echo CR_Core)
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=30
KillWait=5
MinJobAge=300
OverTimeLimit=$OVERTIME
JobSubmitPlugins=lua
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=2
TaskProlog=$DIR/etc/task_prolog.sh
EOF
  if [ "$WITH_DBD" = 1 ]; then
    cat >>"$DIR/etc/slurm.conf" <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations,limits,qos
EOF
    write_dbd_config
  else
    echo "AccountingStorageType=accounting_storage/none" >>"$DIR/etc/slurm.conf"
  fi
  [ "$MEMORY" = 1 ] && echo "DefMemPerCPU=1000" >>"$DIR/etc/slurm.conf"
  [ -z "$EXTRA_CONF" ] || printf '%s\n' "$EXTRA_CONF" >>"$DIR/etc/slurm.conf"
  for n in $(seq 1 "$NODES"); do
    echo "NodeName=gpu$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$((PORT_BASE + 100 + n)) CPUs=$CPUS Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=16000 Gres=gpu:$GPUS State=UNKNOWN" >>"$DIR/etc/slurm.conf"
  done
  echo "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$DIR/etc/slurm.conf"
  {
    echo "AutoDetect=off"
    for n in $(seq 1 "$NODES"); do
      echo "NodeName=gpu$n Name=gpu File=$DIR/dev/gpu$n/nvidia[0-$((GPUS - 1))]"
    done
  } >"$DIR/etc/gres.conf"
  # The Lua plugin loads job_submit.lua from slurm.conf's directory; its settings file sits beside it.
  [ -f "$LUA_SRC" ] || die "missing $LUA_SRC"
  cp "$LUA_SRC" "$DIR/etc/job_submit.lua"
  if [ ! -f "$DIR/etc/schedmate_submit.conf" ]; then
    cat >"$DIR/etc/schedmate_submit.conf" <<EOF
# Read by job_submit.lua at every submission. The service decides the policy; this only says where it is.
url=$SCHEDMATE_URL/v1/estimate
timeout_s=1
curl=$(command -v curl || echo /usr/bin/curl)
EOF
  fi
  write_gpu_standin
  echo "export SLURM_CONF=$DIR/etc/slurm.conf" >"$DIR/env.sh"
}

# The scripted nvidia-smi (see the header) and the TaskProlog that puts it on every task's PATH.
write_gpu_standin() {
  mkdir -p "$DIR/bin" "$DIR/gpu"
  chmod 1777 "$DIR/gpu"
  cat >"$DIR/etc/task_prolog.sh" <<EOF
#!/bin/sh
echo "export PATH=$DIR/bin:\$PATH"
EOF
  cat >"$DIR/bin/nvidia-smi" <<EOF
#!/bin/sh
# schedmate scripts/slurm-local.sh: a scripted nvidia-smi for nodes without GPUs.
f="$DIR/gpu/\${SLURM_JOB_ID:-none}"
case " \$* " in
  *" --query-gpu="*) ;;
  *) echo "scripted nvidia-smi: only --query-gpu is supported" >&2; exit 2 ;;
esac
if [ ! -f "\$f" ]; then echo "No devices were found"; exit 6; fi
cat "\$f"
EOF
  chmod 755 "$DIR/etc/task_prolog.sh" "$DIR/bin/nvidia-smi"
}

write_dbd_config() {
  cat >"$DIR/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$DIR/etc/slurmdbd.conf"  # slurmdbd refuses a group/world-readable file
  cat >"$DIR/etc/my.cnf" <<EOF
[mysqld]
datadir=$DIR/mysql/data
socket=$DIR/mysql/mysqld.sock
pid-file=$DIR/mysql/mysqld.pid
port=$DB_PORT
bind-address=127.0.0.1
log-error=$DIR/log/mariadb.err
innodb_lock_wait_timeout=900
innodb_buffer_pool_size=32M
EOF
}

# MariaDB on its own port, socket and data directory (inside $DIR), then slurmdbd; waits until
# slurmdbd has started.
start_dbd() {
  command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null \
    || die "WITH_DBD=1 needs slurmdbd and mariadb-server: run 'WITH_DBD=1 $0 install'"
  local sock=$DIR/mysql/mysqld.sock n0=0
  mkdir -p "$DIR/mysql"
  chown mysql:mysql "$DIR/mysql"
  if [ ! -d "$DIR/mysql/data/mysql" ]; then
    mariadb-install-db --defaults-file="$DIR/etc/my.cnf" --user=mysql \
      --auth-root-authentication-method=socket --skip-test-db >"$DIR/log/mariadb-install.log" 2>&1 \
      || die "mariadb-install-db failed; see $DIR/log/mariadb-install.log"
  fi
  if ! running "$DIR/run/mariadbd.pid"; then
    mariadbd --defaults-file="$DIR/etc/my.cnf" --user=mysql >/dev/null 2>&1 &
    echo $! >"$DIR/run/mariadbd.pid"
  fi
  for _ in $(seq 1 200); do mariadb-admin --socket="$sock" ping >/dev/null 2>&1 && break; sleep 0.1; done
  mariadb --socket="$sock" -e "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw'; CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';" \
    || die "MariaDB is not answering; see $DIR/log/mariadb.err"
  [ -f "$DIR/log/slurmdbd.log" ] && n0=$(wc -l <"$DIR/log/slurmdbd.log")
  if ! running "$DIR/run/slurmdbd.pid"; then
    slurmdbd || die "slurmdbd did not start; see $DIR/log/slurmdbd.log"
  fi
  for _ in $(seq 1 200); do
    tail -n +$((n0 + 1)) "$DIR/log/slurmdbd.log" 2>/dev/null | grep -q "slurmdbd version .* started" && return 0
    sleep 0.1
  done
  die "slurmdbd did not start within 20 s; see $DIR/log/slurmdbd.log"
}

# The cluster, an account and root's association, so jobs pass AccountingStorageEnforce.
register_accounting() {
  sacctmgr -i add cluster "$CLUSTER_NAME" >/dev/null 2>&1 || true
  sacctmgr -i add account schedmate Cluster="$CLUSTER_NAME" >/dev/null 2>&1 || true
  sacctmgr -i add user root DefaultAccount=schedmate Account=schedmate Cluster="$CLUSTER_NAME" >/dev/null 2>&1 || true
  sacctmgr -n -P show assoc where user=root account=schedmate format=user | grep -q root \
    || die "sacctmgr could not register root's association"
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "munged already running; reusing it"
    return
  fi
  install -d -o munge -g munge -m 0755 /run/munge   # systemd-tmpfiles would create it
  runuser -u munge -- /usr/sbin/munged || die "munged did not start (see /var/log/munge/munged.log)"
  cp /run/munge/munged.pid "$DIR/run/munged.pid"    # ours, so stop stops it
  for _ in $(seq 1 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return
    sleep 0.1
  done
  die "munged is not answering"
}

idle_nodes() { sinfo -h -t idle -o '%D' 2>/dev/null | awk '{s += $1} END {print s + 0}'; }

cmd_start() {
  need_root start
  command -v slurmctld >/dev/null || die "Slurm is not installed: run '$0 install' first"
  local t0 n
  t0=$(date +%s.%N)
  if running "$DIR/run/slurmctld.pid"; then
    # Refresh the hook so a changed job_submit.lua takes effect without a restart.
    cp "$LUA_SRC" "$DIR/etc/job_submit.lua"
    say "already running ($DIR); hook refreshed"
    return 0
  fi
  write_configs
  start_munge
  if [ "$WITH_DBD" = 1 ]; then
    start_dbd
    register_accounting
  fi
  local fresh=""
  [ -e "$DIR/state/node_state" ] || fresh="-i"
  slurmctld $fresh || die "slurmctld did not start; see $DIR/log/slurmctld.log"
  for n in $(seq 1 "$NODES"); do
    running "$DIR/run/slurmd-gpu$n.pid" || PATH="$DIR/bin:$PATH" slurmd -N "gpu$n" || die "slurmd gpu$n did not start; see $DIR/log/slurmd-gpu$n.log"
  done
  for _ in $(seq 1 400); do
    if [ "$(idle_nodes)" -ge "$NODES" ]; then
      say "up in $(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN{printf "%.2f", e - s}')s: $NODES idle nodes x $GPUS GPUs; export SLURM_CONF=$SLURM_CONF"
      return 0
    fi
    sleep 0.05
  done
  sinfo -N -o '%N %T %E' >&2 || true
  die "nodes did not become idle within 20 s; see $DIR/log/"
}

stop_one() {
  local f=$1 p
  if ! running "$f"; then rm -f "$f"; return 0; fi
  p=$(cat "$f")
  kill "$p" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null
  rm -f "$f"
}

cmd_stop() {
  local f
  for f in "$DIR"/run/slurmd-*.pid; do [ -e "$f" ] && stop_one "$f"; done
  stop_one "$DIR/run/slurmctld.pid"
  stop_one "$DIR/run/slurmdbd.pid"
  stop_one "$DIR/run/mariadbd.pid"
  stop_one "$DIR/run/munged.pid"
  say "stopped"
}

cmd_status() {
  if ! running "$DIR/run/slurmctld.pid"; then
    say "not running ($DIR)"
    return 1
  fi
  say "slurmctld pid $(cat "$DIR/run/slurmctld.pid"); SLURM_CONF=$SLURM_CONF"
  sinfo -N -o '%N %T %G %E' || return 1
  squeue -o '%i %j %T %M %R' || return 1
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  clean) cmd_stop; rm -rf "$DIR"; say "removed $DIR" ;;
  *) echo "usage: $0 install|start|stop|status|clean" >&2; exit 2 ;;
esac
