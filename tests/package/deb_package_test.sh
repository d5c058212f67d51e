#!/usr/bin/env bash
# The .deb end to end, on this machine: cpack builds it; its control data is checked (Depends
# covers every library the binary needs, conffiles, maintainer scripts); dpkg -i installs it
# (apt-get install -f for missing dependencies); files, the schedmate system user, the state
# directory and the unit (systemd-analyze verify) are checked; the installed unit runs against a
# scripted stand-in Slurm (squeue/sinfo answering JSON from a directory put first in PATH): with
# systemctl when systemd is PID 1, else its ExecStart command line as its User= through setpriv
# (run_unit_command.py); GET /healthz must show passes over that Slurm; SIGTERM stops it cleanly;
# a second dpkg -i keeps the user and database, dpkg --remove keeps configuration, state and user,
# dpkg --purge must remove the files, the state and the user. Whatever happens, the machine is
# left as it was found (package purged, packages apt-get added removed, user and drop-in gone).
#
# Usage: deb_package_test.sh BUILD_DIR   (ctest label: package; scripts/test.sh runs it as its own
# step). Exit 77 (skipped, with the reason) unless SCHEDMATE_PACKAGE_TEST=1, as root, with dpkg,
# cpack, help2man, curl and python3, and no schedmate package, user or state already there.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"  # dpkg needs ldconfig; userdel, adduser

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
state=/var/lib/schedmate
unit=/lib/systemd/system/schedmate.service
dropin_dir=/run/systemd/system/schedmate.service.d

say() { echo "deb_package_test: $*"; }
skip() {
  say "SKIPPED: $*"
  exit 77
}
fail() {
  say "FAIL: $*" >&2
  exit 1
}

[[ "${SCHEDMATE_PACKAGE_TEST:-0}" == 1 ]] ||
  skip "it installs and purges a package system-wide; set SCHEDMATE_PACKAGE_TEST=1 (scripts/test.sh does)"
[[ $(id -u) -eq 0 ]] || skip "needs root (dpkg -i, adduser)"
for tool in dpkg dpkg-deb dpkg-shlibdeps cpack help2man curl python3 setpriv readelf flock; do
  command -v "$tool" >/dev/null || skip "$tool not found (scripts/install-deps.sh --package)"
done
[[ -f "$build/CPackConfig.cmake" ]] || fail "$build/CPackConfig.cmake missing: configure the build first"

# One run at a time on this machine (other worktrees may run the suite too).
mkdir -p /run/lock
exec 9>/run/lock/schedmate-package-test.lock
flock -w 900 9 || fail "another package test held /run/lock/schedmate-package-test.lock for 15 min"
if dpkg-query -W schedmate >/dev/null 2>&1; then
  skip "a schedmate package is already known to dpkg ($(dpkg-query -W -f='${Status}' schedmate)): not touching it"
fi
getent passwd schedmate >/dev/null && skip "a user schedmate already exists: not touching it"
getent group schedmate >/dev/null && skip "a group schedmate already exists: not touching it"
for p in "$state" /etc/schedmate "$dropin_dir"; do
  [[ -e "$p" ]] && skip "$p already exists: not touching it"
done

work=$(mktemp -d /tmp/schedmate-deb-test.XXXXXX)
# The stand-in Slurm lives under /run: the unit's PrivateTmp would hide /tmp from the service.
slurm=$(mktemp -d /run/schedmate-deb-test.XXXXXX)
chmod 755 "$slurm"
dpkg-query -W -f='${Package}\n' | sort >"$work/packages.before"
service_pid=""
unit_started=0

cleanup() {
  local rc=$?
  set +e
  if [[ -n "$service_pid" ]] && kill -0 "$service_pid" 2>/dev/null; then
    kill -TERM "$service_pid"
    wait "$service_pid" 2>/dev/null
  fi
  if ((unit_started)); then systemctl stop schedmate.service; fi
  if [[ -d "$dropin_dir" ]]; then
    rm -rf "$dropin_dir"
    systemctl daemon-reload
  fi
  if dpkg-query -W schedmate >/dev/null 2>&1; then dpkg --purge schedmate >/dev/null; fi
  dpkg-query -W -f='${Package}\n' | sort >"$work/packages.after"
  mapfile -t added < <(comm -13 "$work/packages.before" "$work/packages.after")
  if ((${#added[@]})); then
    say "removing what apt-get installed for the test: ${added[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${added[@]}" >/dev/null
  fi
  # Leftovers of a failed purge: the run started without them.
  getent passwd schedmate >/dev/null && userdel schedmate
  getent group schedmate >/dev/null && groupdel schedmate
  rm -rf "$state" /etc/schedmate "$work" "$slurm"
  exit $rc
}
trap cleanup EXIT

# ---- build ---------------------------------------------------------------------------------
say "cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
mapfile -t debs < <(find "$work/out" -maxdepth 1 -name 'schedmate_*.deb')
((${#debs[@]} == 1)) || fail "expected one schedmate_*.deb in $work/out, found ${#debs[@]}"
deb=${debs[0]}

# ---- control data --------------------------------------------------------------------------
version=$("$build/src/cli/schedmate" --version | awk '{print $2}')
[[ $(dpkg-deb -f "$deb" Package) == schedmate ]] || fail "Package field is not schedmate"
[[ $(dpkg-deb -f "$deb" Version) == "$version"-* ]] ||
  fail "Version $(dpkg-deb -f "$deb" Version) is not the binary's $version"
[[ $(dpkg-deb -f "$deb" Architecture) == $(dpkg --print-architecture) ]] || fail "Architecture"
depends=$(dpkg-deb -f "$deb" Depends)
depends_names=" $(sed -E 's/\([^)]*\)//g; s/[,|]/ /g' <<<"$depends" | xargs) "
[[ "$depends_names" == *" adduser "* ]] || fail "Depends lacks adduser: $depends"
# Every library the packaged binary links directly must come from a package named in Depends.
dpkg-deb -x "$deb" "$work/root"
mapfile -t needed < <(readelf -d "$work/root/usr/bin/schedmate" |
                      sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
((${#needed[@]} > 0)) || fail "no NEEDED entries in the packaged binary"
ldd_out=$(ldd "$work/root/usr/bin/schedmate")
for lib in "${needed[@]}"; do
  path=$(awk -v l="$lib" '$1 == l && $3 ~ /^\// {print $3}' <<<"$ldd_out")
  [[ -n "$path" ]] || fail "$lib (NEEDED) does not resolve on this machine"
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(readlink -f "$path")" 2>/dev/null) ||
    fail "$lib ($path) belongs to no Debian package"
  pkg=${owner%%:*}
  [[ "$depends_names" == *" $pkg "* ]] || fail "$lib comes from $pkg, which Depends lacks: $depends"
done
dpkg-deb -e "$deb" "$work/control"
diff <(sort "$work/control/conffiles") <(printf '%s\n' /etc/default/schedmate \
  /etc/schedmate/schedmate.yaml) || fail "conffiles differ from the expected two"
for script in postinst prerm postrm; do
  [[ -x "$work/control/$script" ]] || fail "maintainer script $script missing or not executable"
done

# ---- install -------------------------------------------------------------------------------
say "dpkg -i $(basename "$deb")"
if ! dpkg -i "$deb" >"$work/dpkg.log" 2>&1; then
  say "dpkg -i left dependencies missing; apt-get install -f"
  DEBIAN_FRONTEND=noninteractive apt-get install -f -y -qq >>"$work/dpkg.log" 2>&1 ||
    { cat "$work/dpkg.log" >&2; fail "apt-get install -f failed"; }
fi
status=$(dpkg-query -W -f='${Status}' schedmate 2>/dev/null) || true
[[ "$status" == "install ok installed" ]] ||
  { cat "$work/dpkg.log" >&2; fail "schedmate is not installed (dpkg status: '$status')"; }
verify=$(dpkg -V schedmate) || true
[[ -z "$verify" ]] || fail "dpkg -V schedmate: $verify"

files=(/usr/bin/schedmate /usr/share/schedmate/job_submit.lua
       /usr/share/schedmate/prometheus/alerts.yml
       /usr/share/schedmate/grafana/schedmate-dashboard.json
       /usr/share/doc/schedmate/examples/schedmate.example.yaml
       /usr/share/doc/schedmate/examples/llm.example.yaml
       /usr/share/man/man1/schedmate.1.gz "$unit" /etc/default/schedmate
       /etc/schedmate/schedmate.yaml)
for f in "${files[@]}"; do [[ -f "$f" ]] || fail "$f not installed"; done
[[ $(/usr/bin/schedmate --version) == "schedmate $version" ]] || fail "installed binary's version"
# The man page comes from the binary's --help: its subcommands and their options are in it.
zcat /usr/share/man/man1/schedmate.1.gz >"$work/schedmate.1"
grep -q '^\.TH SCHEDMATE "1"' "$work/schedmate.1" || fail "man page has no .TH SCHEDMATE 1"
for sub in serve simulate why; do
  grep -q "^\.SS \"schedmate $sub\"" "$work/schedmate.1" || fail "man page lacks schedmate $sub"
done
grep -qF -- '--port-file' "$work/schedmate.1" || fail "man page lacks serve's --port-file option"

# ---- user, state directory, unit -----------------------------------------------------------
IFS=: read -r _ _ uid gid _ home shell < <(getent passwd schedmate) ||
  fail "postinst did not create the user schedmate"
((uid < 1000)) || fail "schedmate is not a system user (uid $uid)"
[[ $(getent group schedmate | cut -d: -f3) == "$gid" ]] || fail "schedmate's group is not its own"
[[ "$home" == "$state" && "$shell" == /usr/sbin/nologin ]] || fail "home $home, shell $shell"
[[ $(stat -c '%U:%G %a' "$state") == "schedmate:schedmate 750" ]] ||
  fail "$state is $(stat -c '%U:%G %a' "$state")"
if command -v systemd-analyze >/dev/null; then
  man_check=--man=no
  command -v man >/dev/null && man_check=--man=yes
  analyze=$(systemd-analyze verify "$man_check" "$unit" 2>&1) || fail "systemd-analyze: $analyze"
  [[ -z "$analyze" ]] || fail "systemd-analyze verify $unit: $analyze"
  # Its sandboxing as systemd scores it (0 = locked down .. 10 = none; --threshold in tenths).
  # The unit scores 1.6 with systemd 252; 2.0 leaves room for other versions' weights.
  if exposure=$(systemd-analyze security --offline=yes --no-pager "$unit" 2>&1); then
    say "$(tail -n 1 <<<"$exposure")"
    systemd-analyze security --offline=yes --threshold=20 --no-pager "$unit" >/dev/null 2>&1 ||
      fail "the unit's exposure is above 2.0: $(tail -n 1 <<<"$exposure")"
  else
    say "systemd-analyze security --offline is not supported here: exposure not scored"
  fi
else
  say "systemd-analyze not found: the unit's syntax was not verified"
fi
# The hardening the unit promises (ProtectSystem=strict: the state directory is its one
# writable path, so no ReadWritePaths=).
for setting in User=schedmate StateDirectory=schedmate NoNewPrivileges=yes ProtectSystem=strict \
               ProtectHome=read-only PrivateTmp=yes PrivateDevices=yes; do
  grep -qx "$setting" "$unit" || fail "$unit lacks $setting"
done
if grep -q '^ReadWritePaths=' "$unit"; then fail "$unit widens ReadWritePaths="; fi

# ---- run it against a stand-in Slurm -------------------------------------------------------
mkdir "$slurm/bin"
cat >"$slurm/bin/squeue" <<'EOF'
#!/bin/sh
[ "$*" = "--json" ] || { echo "stand-in squeue: unexpected arguments: $*" >&2; exit 1; }
echo '{"jobs": []}'
EOF
cat >"$slurm/bin/sinfo" <<'EOF'
#!/bin/sh
[ "$*" = "--json" ] || { echo "stand-in sinfo: unexpected arguments: $*" >&2; exit 1; }
echo '{"nodes": [{"name": "pkgtest-node1", "state": "idle", "state_flags": [], "gres": "gpu:4",
  "gres_used": "gpu:0", "cpus": 8, "reason": "", "partitions": ["gpu"]}]}'
EOF
chmod 755 "$slurm/bin/squeue" "$slurm/bin/sinfo"
port_file="$state/pkgtest.port"
cat >"$slurm/env" <<EOF
PATH=$slurm/bin:/usr/sbin:/usr/bin:/sbin:/bin
ARGS="--port 0 --port-file $port_file --poll 0.5"
EOF
chmod 644 "$slurm/env"

if [[ -d /run/systemd/system ]]; then
  say "systemd is running: systemctl start schedmate.service (drop-in: stand-in Slurm, port)"
  mkdir -p "$dropin_dir"
  printf '[Service]\nEnvironmentFile=%s\n' "$slurm/env" >"$dropin_dir/pkgtest.conf"
  systemctl daemon-reload
  unit_started=1
  systemctl start schedmate.service || fail "systemctl start: $(systemctl status schedmate 2>&1)"
else
  say "no systemd: running the unit's ExecStart as its User= (run_unit_command.py)"
  python3 "$here/run_unit_command.py" "$unit" "$slurm/env" >"$work/serve.log" 2>&1 &
  service_pid=$!
fi
# The service's output so far (the journal under systemd).
service_log() {
  if ((unit_started)); then journalctl -u schedmate.service -n 50 --no-pager; else cat "$work/serve.log"; fi
}
service_alive() {
  if ((unit_started)); then systemctl is-active --quiet schedmate.service; else kill -0 "$service_pid"; fi
}

for _ in $(seq 1 100); do
  [[ -s "$port_file" ]] && break
  service_alive 2>/dev/null || { service_log >&2; fail "serve exited before listening"; }
  sleep 0.2
done
[[ -s "$port_file" ]] || { service_log >&2; fail "serve wrote no port file within 20 s"; }
pid=$service_pid
if ((unit_started)); then pid=$(systemctl show -P MainPID schedmate.service); fi
port=$(<"$port_file")
[[ $(ps -o uid= -p "$pid" | xargs) == "$uid" ]] || fail "the service runs as uid $(ps -o uid= -p "$pid")"
grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$pid/status" || fail "NoNewPrivs is not set"
# CAP_DAC_READ_SEARCH is bit 2: the only capability, in the ambient set.
grep -q '^CapAmb:[[:space:]]*0*4$' "/proc/$pid/status" || fail "ambient capabilities are not CAP_DAC_READ_SEARCH"
grep -q '^CapEff:[[:space:]]*0*4$' "/proc/$pid/status" || fail "effective capabilities are not CAP_DAC_READ_SEARCH"

health=""
for _ in $(seq 1 50); do
  health=$(curl -fsS --max-time 5 "http://127.0.0.1:$port/healthz") || fail "GET /healthz failed"
  python3 -c 'import json,sys; h=json.loads(sys.argv[1]); sys.exit(0 if h["ticks"] >= 2 else 1)' \
    "$health" && break
  sleep 0.2
done
say "/healthz: $health"
python3 - "$health" <<'EOF' || { service_log >&2; fail "/healthz does not show a healthy service"; }
import json, sys
h = json.loads(sys.argv[1])
problems = [k for k, want in (("ok", True), ("slurm_ok", True), ("store_ok", True),
                              ("status", "ok"), ("last_error", "")) if h.get(k) != want]
if h.get("ticks", 0) < 2:
    problems.append(f"ticks={h.get('ticks')}")
if problems:
    sys.exit("unexpected: " + ", ".join(problems))
EOF
nodes=$(curl -fsS --max-time 5 "http://127.0.0.1:$port/v1/nodes") || fail "GET /v1/nodes failed"
python3 -c 'import json,sys; n=json.loads(sys.argv[1])["nodes"]; sys.exit(0 if [x["name"] for x in n] == ["pkgtest-node1"] else 1)' \
  "$nodes" || fail "/v1/nodes is not the stand-in Slurm's one node: $nodes"
db="$state/schedmate.db"
[[ $(stat -c '%U %a' "$db") == "schedmate 600" ]] || fail "$db is $(stat -c '%U %a' "$db" 2>&1)"

say "stopping (SIGTERM)"
if ((unit_started)); then
  systemctl stop schedmate.service
  unit_started=0
  [[ $(systemctl show -P Result schedmate.service) == success ]] ||
    fail "the unit stopped with result $(systemctl show -P Result schedmate.service)"
  rm -rf "$dropin_dir"
  systemctl daemon-reload
else
  kill -TERM "$service_pid"
  rc=0
  wait "$service_pid" || rc=$?
  service_pid=""
  ((rc == 0)) || { service_log >&2; fail "serve exited $rc on SIGTERM"; }
fi

# ---- reinstall, remove, purge ---------------------------------------------------------------
say "dpkg -i again (as an upgrade would): the user and the database stay"
dpkg -i "$deb" >"$work/reinstall.log" 2>&1 || { cat "$work/reinstall.log" >&2; fail "reinstall"; }
[[ $(id -u schedmate) == "$uid" ]] || fail "reinstalling changed schedmate's uid"
[[ -f "$db" ]] || fail "reinstalling lost $db"
say "dpkg --remove schedmate: program gone, configuration, state and user kept"
dpkg --remove schedmate >"$work/remove.log" 2>&1 || { cat "$work/remove.log" >&2; fail "dpkg --remove"; }
[[ $(dpkg-query -W -f='${Status}' schedmate) == "deinstall ok config-files" ]] ||
  fail "after remove: $(dpkg-query -W -f='${Status}' schedmate)"
[[ ! -e /usr/bin/schedmate && ! -e "$unit" ]] || fail "remove left the program or the unit"
[[ -f /etc/schedmate/schedmate.yaml && -f "$db" ]] || fail "remove took the configuration or state"
getent passwd schedmate >/dev/null || fail "remove took the user"
say "dpkg --purge schedmate"
dpkg --purge schedmate >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "dpkg --purge"; }
if dpkg-query -W schedmate >/dev/null 2>&1; then fail "dpkg still knows schedmate after purge"; fi
if getent passwd schedmate >/dev/null; then fail "purge left the user schedmate"; fi
if getent group schedmate >/dev/null; then fail "purge left the group schedmate"; fi
for f in "${files[@]}" "$state" /etc/schedmate /usr/share/schedmate /usr/share/doc/schedmate; do
  [[ ! -e "$f" ]] || fail "purge left $f"
done
say "PASS"
