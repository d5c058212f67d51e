#!/usr/bin/env python3
"""Replay a slice of the Helios Venus trace on the local Slurm three times and compare.

  bench/slurm_order/replay.py prepare OUT     sample the jobs, write the replay, the seed history
                                              and the simulator's inputs
  bench/slurm_order/replay.py run OUT MODE    replay on the live Slurm: MODE = slurm | limits | order
  bench/slurm_order/replay.py sim OUT         the simulator's prediction for each mode
  bench/slurm_order/replay.py report OUT      the table (Markdown) from the runs and the simulator

scripts/bench-order.sh runs all of it. Not a test: it takes ~15-20 minutes and needs the local
Slurm (scripts/slurm-local.sh start, with SLURM_OVERTIME_LIMIT=UNLIMITED so that a time limit set
from a prediction never kills a job: the three runs then do the same work).

The replay (defaults below, all in the JSON it writes):
  - jobs: one VC of Venus (vcEwI, the largest), in trace order, jobs of at most 8 GPUs; the first
    SEED_JOBS of them seed the advisor's history, the next REPLAY_JOBS are replayed;
  - durations: trace seconds / 60 (a trace minute is a replay second), at least 2 s and at most
    150 s (the tail above 2.5 trace hours is cut to 150 s);
  - arrivals: the trace's inter-arrival times compressed so the replay's jobs arrive within
    ARRIVAL_WINDOW seconds (a queue builds: the offered load exceeds the 16 GPUs);
  - users: the trace user is part of the job's name (all jobs run as the local Slurm's root);
    the name is "<user>-<model>-<dataset>-<gpus>g", the workload key the basic advisor matches;
  - each job is `sleep <duration>` with --gres=gpu:<gpus> on the 2 x 8-GPU local cluster.
Modes: slurm  = no schedmate at all (Slurm's priority/basic + backfill, no time limits);
       limits = schedmate serve, advise mode, job_submit.lua sets time limits from predictions;
       order  = the same, plus order mode (policy schedmate, at most 50 changes per pass,
                max_wait 360 s; MAX_WAIT_S=240 for the tighter bound).
"""

import csv
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRACE = os.environ.get("VENUS_JOBS",
                       "/work/shared/traces/venus_sept2020_lucid/venus_sept2020_jobs.csv")
VC = os.environ.get("REPLAY_VC", "")  # "" = every VC
SEED_JOBS = int(os.environ.get("SEED_JOBS", "6000"))
REPLAY_JOBS = int(os.environ.get("REPLAY_JOBS", "120"))
ARRIVAL_WINDOW = float(os.environ.get("ARRIVAL_WINDOW", "150"))
TIME_SCALE = float(os.environ.get("TIME_SCALE", "60"))
MIN_S, MAX_S = 2, int(os.environ.get("MAX_S", "100"))
MAX_WAIT_S = int(os.environ.get("MAX_WAIT_S", "360"))
SCHEDMATE = os.environ.get("SCHEDMATE", os.path.join(REPO, "build/src/cli/schedmate"))


def scaled(duration_s):
    return int(min(MAX_S, max(MIN_S, round(duration_s / TIME_SCALE))))


def name_of(r):
    clean = lambda s: re.sub(r"[^A-Za-z0-9]+", "", s) or "x"
    return f"{r['user']}-{clean(r['model'])}-{clean(r['dataset'])}-{r['gpu_num']}g"


def prepare(out):
    os.makedirs(out, exist_ok=True)
    rows = [r for r in csv.DictReader(open(TRACE)) if (not VC or r["vc"] == VC) and 1 <= int(r["gpu_num"]) <= 8
            and int(r["duration_s"]) > 0]
    seed, replay = rows[:SEED_JOBS], rows[SEED_JOBS:SEED_JOBS + REPLAY_JOBS]
    t0 = int(replay[0]["submit_s"])
    span = max(1, int(replay[-1]["submit_s"]) - t0)
    jobs = []
    for i, r in enumerate(replay):
        jobs.append({"i": i, "trace_id": r["job_id"], "user": r["user"], "name": name_of(r),
                     "gpus": int(r["gpu_num"]), "duration": scaled(int(r["duration_s"])),
                     "trace_duration": int(r["duration_s"]),
                     "arrival": round((int(r["submit_s"]) - t0) * ARRIVAL_WINDOW / span, 2)})
    # The seed history, as the service's store will hold it (user root: the local Slurm's).
    cols = ["job_id", "user", "vc", "jobname", "gpu_num", "cpu_num", "state", "submit_s",
            "duration_s", "dataset", "model"]
    with open(os.path.join(out, "seed.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in seed:
            w.writerow([r["job_id"], "root", "gpu", name_of(r), r["gpu_num"], r["cpu_num"],
                        r["state"], r["submit_s"], scaled(int(r["duration_s"])), r["dataset"],
                        r["model"]])
    # The replay as a trace for the simulator (same scaled times, one 16-GPU cluster).
    with open(os.path.join(out, "replay_trace.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "user", "vc", "jobname", "gpu_num", "cpu_num", "state", "submit_s",
                    "duration_s", "dataset", "model"])
        for j in jobs:
            w.writerow([j["i"] + 1, j["user"], "gpu", j["name"], j["gpus"], 1, "COMPLETED",
                        int(round(j["arrival"])), j["duration"], "x", "x"])
    # What the basic advisor predicts from the seed (median of the same name's COMPLETED runs,
    # else the 1-hour prior: the replay's jobs carry no time limit): the simulator's estimates.
    hist = {}
    for r in seed:
        if r["state"] == "COMPLETED":
            hist.setdefault(name_of(r), []).append(scaled(int(r["duration_s"])))
    with open(os.path.join(out, "estimates.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "priority"])
        for j in jobs:
            h = sorted(hist.get(j["name"], []))
            j["predicted"] = max(1, h[len(h) // 2]) if h else 3600
            w.writerow([j["i"] + 1, j["predicted"]])
    gpu_s = sum(j["gpus"] * j["duration"] for j in jobs)
    meta = {"trace": TRACE, "vc": VC, "seed_jobs": len(seed), "replay_jobs": len(jobs),
            "users": len({j["user"] for j in jobs}), "time_scale": TIME_SCALE,
            "min_s": MIN_S, "max_s": MAX_S, "arrival_window_s": ARRIVAL_WINDOW,
            "gpu_seconds": gpu_s, "lower_bound_makespan_s": round(gpu_s / 16, 1),
            "max_wait_s": MAX_WAIT_S,
            "predicted_known": sum(1 for j in jobs if j["predicted"] != 3600)}
    json.dump({"meta": meta, "jobs": jobs}, open(os.path.join(out, "replay.json"), "w"), indent=1)
    print(json.dumps(meta, indent=1))


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, text=True, capture_output=True, **kw)


def slurm_conf_dir():
    return os.path.dirname(os.environ.get("SLURM_CONF", "/tmp/schedmate-slurm/etc/slurm.conf"))


def jobcomp_path():
    out = sh("scontrol show config").stdout
    m = re.search(r"^JobCompLoc\s*=\s*(\S+)", out, re.M)
    return m.group(1) if m else ""


def start_service(out, mode):
    data = os.path.join(out, f"data-{mode}")
    sh(f"rm -rf {data}")
    os.makedirs(data)
    imp = sh(f"{SCHEDMATE} history import --store {data}/schedmate.db {out}/seed.csv --json")
    if imp.returncode != 0:
        sys.exit("history import failed: " + imp.stderr)
    cfg = os.path.join(out, f"schedmate-{mode}.yaml")
    with open(cfg, "w") as f:
        f.write("submit:\n  policy: set\n  limit_margin: 2.0\n  min_limit_min: 1\n"
                "  max_limit_min: 10\n")
        if mode == "order":
            f.write(f"scheduling:\n  mode: order\n  policy: schedmate\n"
                    f"  max_changes_per_pass: 50\n  max_wait_s: {MAX_WAIT_S}\n")
    port_file = os.path.join(out, f"port-{mode}")
    sh(f"rm -f {port_file}")
    log = open(os.path.join(out, f"serve-{mode}.log"), "w")
    p = subprocess.Popen([SCHEDMATE, "serve", "--slurm", "--config", cfg,
                          "--data-dir", data, "--jobcomp", jobcomp_path(), "--port", "0",
                          "--port-file", port_file, "--poll", "0.5"], stdout=log, stderr=log)
    for _ in range(100):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.1)
    port = int(open(port_file).read().strip())
    return p, port


def run(out, mode):
    if mode not in ("slurm", "limits", "order"):
        sys.exit("mode: slurm | limits | order")
    replay = json.load(open(os.path.join(out, "replay.json")))
    jobs = replay["jobs"]
    if sh("squeue -h | wc -l").stdout.strip() != "0":
        sys.exit("the queue is not empty: the replay needs the cluster to itself")
    overtime = re.search(r"^OverTimeLimit\s*=\s*(\S+)", sh("scontrol show config").stdout, re.M)
    conf = os.path.join(slurm_conf_dir(), "schedmate_submit.conf")
    saved = open(conf).read() if os.path.exists(conf) else None
    service = None
    try:
        if mode != "slurm":
            service, port = start_service(out, mode)
            curl = sh("command -v curl").stdout.strip()
            with open(conf, "w") as f:
                f.write(f"url=http://127.0.0.1:{port}/v1/estimate\ntimeout_s=1\ncurl={curl}\n")
        else:
            with open(conf, "w") as f:  # no service: the hook accepts jobs unchanged
                f.write("url=http://127.0.0.1:9/v1/estimate\ntimeout_s=1\n")
        workdir = os.path.join(out, f"jobs-{mode}")
        os.makedirs(workdir, exist_ok=True)
        ids = {}
        t0 = time.time()
        for j in sorted(jobs, key=lambda j: (j["arrival"], j["i"])):
            delay = t0 + j["arrival"] - time.time()
            if delay > 0:
                time.sleep(delay)
            r = sh(f"cd {workdir} && sbatch --parsable -J {j['name']} -o /dev/null "
                   f"--gres=gpu:{j['gpus']} --wrap 'sleep {j['duration']}'")
            if r.returncode != 0:
                sys.exit(f"sbatch failed: {r.stderr}")
            ids[r.stdout.strip().split(";")[0]] = j["i"]
        print(f"[{mode}] submitted {len(ids)} jobs in {time.time() - t0:.0f} s", flush=True)
        while sh("squeue -h | wc -l").stdout.strip() != "0":
            time.sleep(2)
        print(f"[{mode}] all done after {time.time() - t0:.0f} s", flush=True)
        time.sleep(1)
    finally:
        if service is not None:
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=60)
        if saved is not None:
            open(conf, "w").write(saved)
    # Slurm's own record of each run (whole seconds).
    rec = {}
    for line in open(jobcomp_path()):
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        if kv.get("JobId") in ids and kv.get("JobState") != "PENDING":
            rec[kv["JobId"]] = kv
    ts = lambda s: time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%S"))
    results = []
    for jid, i in ids.items():
        kv = rec.get(jid)
        if kv is None:
            continue
        results.append({"i": i, "job_id": jid, "state": kv["JobState"], "submit": ts(kv["SubmitTime"]),
                        "start": ts(kv["StartTime"]), "end": ts(kv["EndTime"]),
                        "time_limit": kv.get("TimeLimit", "")})
    extra = {}
    if mode == "order":
        log = open(os.path.join(out, "serve-order.log")).read()
        extra["priority_changes"] = log.count("action priority job")
        extra["restores"] = log.count("action restore job")
    json.dump({"mode": mode, "overtime_limit": overtime.group(1) if overtime else "",
               "max_wait_s": MAX_WAIT_S if mode == "order" else None,
               "jobs": results, **extra},
              open(os.path.join(out, f"run-{mode}.json"), "w"), indent=1)
    print(json.dumps(summarize(results), indent=1))


def pct(values, q):
    v = sorted(values)
    if not v:
        return 0
    k = (len(v) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def summarize(results):
    if not results:
        return {}
    jct = [r["end"] - r["submit"] for r in results]
    wait = [r["start"] - r["submit"] for r in results]
    return {"jobs": len(results), "avg_jct": statistics.mean(jct), "p95_jct": pct(jct, 0.95),
            "avg_queue": statistics.mean(wait), "makespan": max(r["end"] for r in results) -
            min(r["submit"] for r in results), "longest_wait": max(wait),
            "timeouts": sum(1 for r in results if r["state"] == "TIMEOUT"),
            "not_completed": sum(1 for r in results if r["state"] != "COMPLETED")}


def sim(out):
    res = {}
    for policy in ("fifo", "qssf", "schedmate"):
        r = sh(f"{SCHEDMATE} simulate --trace {out}/replay_trace.csv --gpus 16 --gpus-per-node 8 "
               f"--policy {policy} --estimates {out}/estimates.csv --estimator file --json")
        if r.returncode != 0:
            sys.exit(f"simulate {policy}: {r.stderr}")
        res[policy] = json.loads(r.stdout)
    json.dump(res, open(os.path.join(out, "sim.json"), "w"), indent=1)
    print(json.dumps({p: list(v.keys()) for p, v in res.items()}))


def sim_summary(doc, policy):
    """avg JCT, p95 JCT, avg queue, makespan, longest wait of one policy in `simulate --json`."""
    runs = doc.get("policies") or []
    for run_ in runs:
        if run_.get("policy", policy) != policy:
            continue
        m = run_.get("metrics", run_)
        get = lambda *keys: next((m[k] for k in keys if k in m), None)
        return {"avg_jct": get("avg_jct_s", "avg_jct"), "p95_jct": get("p95_jct_s", "p95_jct"),
                "avg_queue": get("avg_queue_s", "avg_queueing_s", "avg_queue"),
                "makespan": get("makespan_s", "makespan"),
                "longest_wait": get("max_queue_s", "max_queueing_s", "longest_wait")}
    return {}


def report(out):
    replay = json.load(open(os.path.join(out, "replay.json")))
    sims = json.load(open(os.path.join(out, "sim.json"))) if os.path.exists(
        os.path.join(out, "sim.json")) else {}
    rows = []
    base = None
    label = {"slurm": "Slurm alone (priority/basic + backfill)",
             "limits": "Slurm + schedmate time limits",
             "order": "Slurm + schedmate ordering (+ limits)"}
    sim_policy = {"slurm": "fifo", "limits": "fifo", "order": "schedmate"}
    for mode in ("slurm", "limits", "order"):
        path = os.path.join(out, f"run-{mode}.json")
        if not os.path.exists(path):
            continue
        doc = json.load(open(path))
        s = summarize(doc["jobs"])
        p = sim_summary(sims.get(sim_policy[mode], {}), sim_policy[mode]) if sims else {}
        base = base or s["avg_jct"]
        cell = lambda k: f"{s[k]:.1f}" + (f" ({p[k]:.1f})" if p.get(k) is not None else "")
        name = label[mode] + (f", max_wait {doc['max_wait_s']} s" if doc.get("max_wait_s") else "")
        rows.append(f"| {name} | {s['jobs']} | {cell('avg_jct')} | {base / s['avg_jct']:.2f}x "
                    f"| {cell('p95_jct')} | {cell('avg_queue')} | {cell('makespan')} "
                    f"| {cell('longest_wait')} | {s['timeouts']} |")
    m = replay["meta"]
    print(f"Replay: {m['replay_jobs']} Venus jobs ({m['vc'] or 'all VCs'}, {m['users']} users, at most 8 GPUs), "
          f"advisor history seeded with the {m['seed_jobs']} jobs before them; durations / "
          f"{m['time_scale']:.0f}, clamped to {m['min_s']}..{m['max_s']} s; arrivals within "
          f"{m['arrival_window_s']:.0f} s; {m['gpu_seconds']} GPU-s of work on 16 GPUs "
          f"(makespan >= {m['lower_bound_makespan_s']} s); max_wait {m['max_wait_s']} s. "
          f"Seconds; simulator prediction in parentheses (fifo for the first two rows, "
          f"schedmate for ordering).\n")
    print("| run | jobs | avg JCT | vs Slurm | p95 JCT | avg queueing | makespan | longest wait "
          "| timeouts |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if sims:
        print("\nSimulator, same jobs and estimates, 16 GPUs: " + "; ".join(
            f"{p} avg JCT {sim_summary(sims[p], p)['avg_jct']:.1f} s, makespan "
            f"{sim_summary(sims[p], p)['makespan']:.0f} s" for p in sims) +
              " (the simulator's schedmate preempts; the live order mode never does).")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, out = sys.argv[1], sys.argv[2]
    if cmd == "prepare":
        prepare(out)
    elif cmd == "run":
        run(out, sys.argv[3])
    elif cmd == "sim":
        sim(out)
    elif cmd == "report":
        report(out)
    else:
        sys.exit(__doc__)
