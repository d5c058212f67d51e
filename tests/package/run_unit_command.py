#!/usr/bin/env python3
"""Runs a systemd unit's ExecStart= where systemd is not PID 1 (containers, CI).

Usage: run_unit_command.py UNIT_FILE [EXTRA_ENVIRONMENT_FILE...]

Applies what can be applied without systemd, the way systemd would: User= and Group= (setpriv
with the user's supplementary groups), a clean environment (PATH, HOME, USER, LOGNAME, SHELL)
plus the unit's EnvironmentFile= files and then the extra ones (each later file overrides the
earlier, as drop-ins do), WorkingDirectory=, UMask=, NoNewPrivileges=, CapabilityBoundingSet= and
AmbientCapabilities=. ExecStart= is split like systemd does (quotes; "$VAR" alone in a word
becomes its whitespace-separated words, "${VAR}" one word). The mount and system-call sandboxing
options need systemd itself and are not emulated.

The process execs setpriv, which execs the command: the caller's child PID is the service.
Errors (a unit this cannot run faithfully) exit 2 naming the file and line.
"""

import os
import pwd
import re
import shlex
import sys

SERVICE_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def die(message):
    print(f"run_unit_command: {message}", file=sys.stderr)
    sys.exit(2)


def read_service_section(path):
    """[(key, value, line_number)] of the [Service] section, continuation lines joined."""
    entries = []
    section = None
    pending = ""
    pending_line = 0
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.rstrip("\n")
            if pending:
                line = pending + line.lstrip()
            elif not line.strip() or line.lstrip()[0] in "#;":
                continue
            else:
                pending_line = number
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            pending = ""
            stripped = line.strip()
            if stripped.startswith("[") and stripped.endswith("]"):
                section = stripped[1:-1]
                continue
            if "=" not in stripped:
                die(f"{path}:{pending_line}: not a key=value line: {stripped!r}")
            key, value = stripped.split("=", 1)
            if section == "Service":
                entries.append((key.strip(), value.strip(), pending_line))
    return entries


def read_environment_file(path, optional, where):
    env = {}
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        if optional:
            return env
        die(f"{where}: EnvironmentFile {path} does not exist")
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if "=" not in line:
            die(f"{path}:{number}: not a NAME=value line")
        name, value = line.split("=", 1)
        words = shlex.split(value) if value.strip() else [""]
        env[name.strip()] = " ".join(words)
    return env


def expand_exec_start(value, env, where):
    if value[:1] in "-@+!:|":
        die(f"{where}: ExecStart prefix {value[0]!r} is not supported here")
    argv = []
    for word in shlex.split(value):
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            argv.extend(env.get(whole.group(1), "").split())
            continue
        argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                           lambda m: env.get(m.group(1), ""), word))
    if not argv or not argv[0].startswith("/"):
        die(f"{where}: ExecStart must name an absolute program")
    return argv


def capability_names(value):
    return [c.strip().lower().removeprefix("cap_") for c in value.split() if c.strip()]


def main():
    if len(sys.argv) < 2:
        die("usage: run_unit_command.py UNIT_FILE [EXTRA_ENVIRONMENT_FILE...]")
    unit = sys.argv[1]
    settings = {}
    env_files = []
    for key, value, number in read_service_section(unit):
        where = f"{unit}:{number}"
        if key == "EnvironmentFile":
            env_files.append((value.lstrip("-"), value.startswith("-"), where))
        elif key == "ExecStart" and "ExecStart" in settings:
            die(f"{where}: more than one ExecStart (Type=oneshot) is not supported here")
        else:
            settings[key] = (value, where)
    for extra in sys.argv[2:]:
        env_files.append((extra, False, extra))
    if "ExecStart" not in settings or "User" not in settings:
        die(f"{unit}: ExecStart= and User= are required")

    user = pwd.getpwnam(settings["User"][0])
    group = settings.get("Group", (str(user.pw_gid),))[0]
    env = {"PATH": SERVICE_DEFAULT_PATH, "HOME": user.pw_dir, "USER": user.pw_name,
           "LOGNAME": user.pw_name, "SHELL": user.pw_shell}
    for path, optional, where in env_files:
        env.update(read_environment_file(path, optional, where))
    exec_start, exec_where = settings["ExecStart"]
    argv = expand_exec_start(exec_start, env, exec_where)

    setpriv = ["setpriv", f"--reuid={user.pw_name}", f"--regid={group}", "--init-groups"]
    if settings.get("NoNewPrivileges", ("no",))[0] in ("yes", "true", "1", "on"):
        setpriv.append("--no-new-privs")
    if "CapabilityBoundingSet" in settings:
        caps = capability_names(settings["CapabilityBoundingSet"][0])
        setpriv.append("--bounding-set=" + ",".join(["-all"] + ["+" + c for c in caps]))
    if "AmbientCapabilities" in settings:
        caps = ",".join("+" + c for c in capability_names(settings["AmbientCapabilities"][0]))
        setpriv += [f"--inh-caps={caps}", f"--ambient-caps={caps}"]
    if "UMask" in settings:
        os.umask(int(settings["UMask"][0], 8))
    if "WorkingDirectory" in settings:
        os.chdir(settings["WorkingDirectory"][0].lstrip("-"))
    command = setpriv + ["--", "/usr/bin/env", "-i"] + [f"{k}={v}" for k, v in env.items()] + argv
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
