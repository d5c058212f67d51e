#!/usr/bin/env python3
"""The simulator's `slurm` policy against the real Slurm 22.05, and start-time estimates
(issue 13 items 3 and 6).

  bench/slurm_fidelity/fidelity.py prepare OUT [SEED] [JOBS]  generate the workload (seeded)
  bench/slurm_fidelity/fidelity.py run OUT                    replay it on the live Slurm
  bench/slurm_fidelity/fidelity.py sim OUT                    the same input in the simulator
  bench/slurm_fidelity/fidelity.py report OUT                 the numbers (report.json, report.md)

scripts/bench-fidelity.sh runs all of it on its own local Slurm (about 15 minutes).

The workload (prepare): USERS users with WORKLOADS_PER_USER workloads each; a workload has a GPU
count (1, 2, 4 or 8, weighted towards small), a base run time (log-uniform BASE_MIN_S..BASE_MAX_S
seconds) and a time limit in whole minutes that over-asks, as users do (the base run time plus
15% rounded up to a minute, plus 0-3 extra minutes). A job is one run of a workload: `sleep`
for the base time x U(0.85, 1.15). Arrivals are a Poisson process whose rate offers LOAD times the
cluster's GPUs, so a queue builds. Each workload also has SEED_RUNS earlier runs: the history the
companion starts from (`history import`), as a site has.

The replay (run): every job is submitted with sbatch at its arrival time (-t LIMIT,
--gres=gpu:G, `sleep D`); while the replay runs, every POLL_S seconds the driver records for
each pending job Slurm's own estimate (`squeue --start`) and schedmate's (the companion's
/v1/start-estimates, `schedmate serve --slurm` run beside it in advise mode: it never changes a
job). Slurm's record of each job (jobcomp: submit, eligible, start, end) is the truth.

The simulator (sim): the jobs as Slurm recorded them (a `sacct -P` export: submit, eligible,
time limit, GPUs, and the run time Slurm measured, End - Start), the cluster's own slurm.conf,
`schedmate simulate --format sacct --slurm-conf ... --policy slurm --jobs-out`.

The numbers (report): per-job start difference |sim wait - real wait| (median, p90, max),
average JCT real vs sim, and for the start estimates the median absolute error of schedmate's
and of squeue's at submit (the first sample after submission) and over all pending samples
(only samples in which both gave a time, and jobs that waited at least one poll).
"""

import csv
import json
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEDMATE = os.environ.get("SCHEDMATE", os.path.join(REPO, "build/src/cli/schedmate"))
USERS = int(os.environ.get("USERS", "6"))
WORKLOADS_PER_USER = int(os.environ.get("WORKLOADS_PER_USER", "4"))
BASE_MIN_S, BASE_MAX_S = 4.0, float(os.environ.get("BASE_MAX_S", "75"))
LOAD = float(os.environ.get("LOAD", "1.3"))
SEED_RUNS = int(os.environ.get("SEED_RUNS", "4"))
POLL_S = float(os.environ.get("POLL_S", "2"))
GPU_CHOICES = [1, 1, 1, 2, 2, 4, 4, 8]


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, text=True, capture_output=True, **kw)


def cluster_gpus():
    """GPUs of the live cluster (sinfo), else NODES x GPUS from the environment."""
    out = sh("sinfo -h -N -o '%N %G'").stdout
    total = 0
    for line in set(out.splitlines()):
        m = re.search(r"gpu:(?:\w+:)?(\d+)", line)
        total += int(m.group(1)) if m else 0
    return total or int(os.environ.get("SLURM_NODES", "4")) * int(os.environ.get("SLURM_GPUS", "8"))


def prepare(out, seed, n_jobs):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    gpus_total = cluster_gpus()
    workloads = []
    for u in range(1, USERS + 1):
        for w in range(1, WORKLOADS_PER_USER + 1):
            gpus = rng.choice(GPU_CHOICES)
            base = math.exp(rng.uniform(math.log(BASE_MIN_S), math.log(BASE_MAX_S)))
            limit_min = max(1, math.ceil((base * 1.15 + 5) / 60)) + rng.choice([0, 1, 1, 2, 3])
            workloads.append({"user": f"u{u}", "name": f"u{u}-w{w}-{gpus}g", "gpus": gpus,
                              "base": base, "limit_min": limit_min})
    run_time = lambda wl: max(2, int(round(wl["base"] * rng.uniform(0.85, 1.15))))
    jobs = []
    for i in range(n_jobs):
        wl = rng.choice(workloads)
        jobs.append({"i": i, "user": wl["user"], "name": wl["name"], "gpus": wl["gpus"],
                     "duration": run_time(wl), "limit_min": wl["limit_min"]})
    gpu_s = sum(j["gpus"] * j["duration"] for j in jobs)
    rate = LOAD * gpus_total / (gpu_s / n_jobs)  # jobs per second offering LOAD x the GPUs
    t = 0.0
    for j in jobs:
        j["arrival"] = round(t, 2)
        t += rng.expovariate(rate)
    # The history the companion starts from (the service's import format, user root: the local
    # Slurm runs every job as root, so the workload name carries the user).
    with open(os.path.join(out, "seed.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "user", "vc", "jobname", "gpu_num", "cpu_num", "state", "submit_s",
                    "duration_s", "dataset", "model"])
        k = 0
        for wl in workloads:
            for _ in range(SEED_RUNS):
                k += 1
                w.writerow([f"s{k}", "root", "gpu", wl["name"], wl["gpus"], 1, "COMPLETED", k * 10,
                            run_time(wl), "x", wl["name"]])
    meta = {"seed": seed, "jobs": n_jobs, "users": USERS, "workloads": len(workloads),
            "cluster_gpus": gpus_total, "load": LOAD, "gpu_seconds": gpu_s,
            "arrival_span_s": jobs[-1]["arrival"],
            "lower_bound_makespan_s": round(gpu_s / gpus_total, 1),
            "duration_s": [min(j["duration"] for j in jobs), max(j["duration"] for j in jobs)],
            "limit_min": [min(j["limit_min"] for j in jobs), max(j["limit_min"] for j in jobs)]}
    json.dump({"meta": meta, "workloads": workloads, "jobs": jobs},
              open(os.path.join(out, "workload.json"), "w"), indent=1)
    print(json.dumps(meta, indent=1))


def config_value(key):
    m = re.search(rf"^{key}\s*=\s*(.*)$", sh("scontrol show config").stdout, re.M)
    return m.group(1).strip() if m else ""


def start_service(out):
    data = os.path.join(out, "data")
    sh(f"rm -rf {data}")
    os.makedirs(data)
    imp = sh(f"{SCHEDMATE} history import --store {data}/schedmate.db {out}/seed.csv --json")
    if imp.returncode != 0:
        sys.exit("history import failed: " + imp.stderr)
    port_file = os.path.join(out, "port")
    sh(f"rm -f {port_file}")
    log = open(os.path.join(out, "serve.log"), "w")
    p = subprocess.Popen([SCHEDMATE, "serve", "--slurm", "--data-dir", data,
                          "--jobcomp", config_value("JobCompLoc"), "--port", "0",
                          "--port-file", port_file, "--poll", "0.5"], stdout=log, stderr=log)
    for _ in range(200):
        if os.path.exists(port_file) and open(port_file).read().strip():
            return p, int(open(port_file).read().strip())
        time.sleep(0.1)
    p.kill()
    sys.exit("schedmate serve did not start: see " + os.path.join(out, "serve.log"))


def slurm_time(text):
    """squeue/jobcomp local time 2026-11-27T10:01:02 -> epoch seconds; None for N/A etc."""
    try:
        return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, TypeError):
        return None


class Poller(threading.Thread):
    """Every POLL_S: (time, job id, squeue --start's estimate, schedmate's estimate)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.samples, self.stop = port, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.time()
            slurm = {}
            for line in sh("squeue -h -t PD --start -o '%i|%S'").stdout.splitlines():
                jid, _, start = line.partition("|")
                slurm[jid.strip()] = slurm_time(start.strip())
            ours = {}
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/start-estimates",
                                            timeout=2) as r:
                    doc = json.load(r)
                for e in doc.get("pending", []):
                    ours[str(e["job_id"])] = e.get("estimated_start")
            except (OSError, ValueError, KeyError):
                pass
            for jid in slurm:
                self.samples.append([round(t, 2), jid, slurm[jid], ours.get(jid)])
            self.stop.wait(max(0.1, POLL_S - (time.time() - t)))


def jobcomp_records(ids):
    rec = {}
    for line in open(config_value("JobCompLoc")):
        kv = dict(re.findall(r"(\w+)=(\S*)", line))
        if kv.get("JobId") in ids and kv.get("JobState") != "PENDING":
            rec[kv["JobId"]] = kv
    return rec


def submit_all(jobs, workdir):
    ids = {}
    t0 = time.time()
    for j in sorted(jobs, key=lambda j: (j["arrival"], j["i"])):
        delay = t0 + j["arrival"] - time.time()
        if delay > 0:
            time.sleep(delay)
        r = sh(f"cd {workdir} && sbatch --parsable -J {j['name']} -o /dev/null -t {j['limit_min']} "
               f"--gres=gpu:{j['gpus']} --comment {j['user']} --wrap 'sleep {j['duration']}'")
        if r.returncode != 0:
            sys.exit(f"sbatch failed: {r.stderr}")
        ids[r.stdout.strip().split(";")[0]] = j["i"]
    return ids, t0


def run(out):
    doc = json.load(open(os.path.join(out, "workload.json")))
    if sh("squeue -h | wc -l").stdout.strip() != "0":
        sys.exit("the queue is not empty: the replay needs the cluster to itself")
    service, port = start_service(out)
    poller = Poller(port)
    try:
        time.sleep(2)  # the companion's first poll
        workdir = os.path.join(out, "jobs")
        os.makedirs(workdir, exist_ok=True)
        poller.start()
        ids, t0 = submit_all(doc["jobs"], workdir)
        print(f"submitted {len(ids)} jobs in {time.time() - t0:.0f} s", flush=True)
        while sh("squeue -h | wc -l").stdout.strip() != "0":
            time.sleep(2)
        wall = time.time() - t0
        print(f"all done after {wall:.0f} s", flush=True)
        time.sleep(1)
    finally:
        poller.stop.set()
        service.send_signal(signal.SIGTERM)
        service.wait(timeout=60)
    rec = jobcomp_records(ids)
    results = []
    for jid, i in ids.items():
        kv = rec.get(jid)
        if kv is None:
            continue
        results.append({"i": i, "job_id": jid, "state": kv["JobState"],
                        "submit": slurm_time(kv["SubmitTime"]),
                        "eligible": slurm_time(kv.get("EligibleTime", "")) or
                        slurm_time(kv["SubmitTime"]),
                        "start": slurm_time(kv["StartTime"]), "end": slurm_time(kv["EndTime"]),
                        "nodes": kv.get("NodeList", "")})
    conf = {k: config_value(k) for k in ("SchedulerParameters", "PriorityType", "PriorityWeightAge",
                                          "PriorityMaxAge", "PriorityCalcPeriod", "SLURM_VERSION")}
    json.dump({"wall_s": round(wall, 1), "slurm_conf": os.environ.get("SLURM_CONF", ""),
               "config": conf, "jobs": sorted(results, key=lambda r: r["i"]),
               "samples": poller.samples},
              open(os.path.join(out, "run.json"), "w"), indent=1)


def fmt_time(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


def hms(seconds):
    s = int(seconds)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def sim(out):
    doc = json.load(open(os.path.join(out, "workload.json")))
    runj = json.load(open(os.path.join(out, "run.json")))
    by_i = {j["i"]: j for j in doc["jobs"]}
    path = os.path.join(out, "replay.sacct")
    with open(path, "w") as f:
        f.write("JobID|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|"
                "ReqTRES|NNodes|State\n")
        # Submission order (job id order): the simulator's arrival tie rule is file order.
        for r in sorted(runj["jobs"], key=lambda r: int(r["job_id"])):
            j = by_i[r["i"]]
            f.write(f"{r['job_id']}|{j['user']}|{j['user']}|gpu|normal|{fmt_time(r['submit'])}|"
                    f"{fmt_time(r['eligible'])}|{fmt_time(r['start'])}|{fmt_time(r['end'])}|"
                    f"{hms(r['end'] - r['start'])}|{hms(j['limit_min'] * 60)}|"
                    f"cpu=1,gres/gpu={j['gpus']},node=1|1|{r['state']}\n")
    nodes = int(os.environ.get("SLURM_NODES", "4"))
    gpn = doc["meta"]["cluster_gpus"] // nodes
    conf = runj["slurm_conf"] or os.environ.get("SLURM_CONF")
    jobs_out = os.path.join(out, "sim_jobs.csv")
    t = time.time()
    r = sh(f"{SCHEDMATE} simulate --trace {path} --format sacct --nodes {nodes} "
           f"--gpus-per-node {gpn} --slurm-conf {conf} --policy slurm --json --jobs-out {jobs_out}")
    if r.returncode != 0:
        sys.exit("simulate: " + r.stderr)
    res = json.loads(r.stdout)
    res["wall_s"] = round(time.time() - t, 3)
    json.dump(res, open(os.path.join(out, "sim.json"), "w"), indent=1)


def pct(values, q):
    v = sorted(values)
    if not v:
        return None
    k = (len(v) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def estimate_errors(runj):
    """MAE of both estimators at submit and over all pending samples (jobs that waited)."""
    start = {r["job_id"]: r["start"] for r in runj["jobs"]}
    per_job = {}
    for t, jid, slurm, ours in runj["samples"]:
        if jid not in start or t >= start[jid]:
            continue
        per_job.setdefault(jid, []).append((t, slurm, ours))
    first_s, first_o, all_s, all_o = [], [], [], []
    both = sum(1 for s in per_job.values() for _, a, b in s if a is not None and b is not None)
    only = {"squeue": 0, "schedmate": 0, "none": 0}
    for jid, samples in per_job.items():
        actual = start[jid]
        paired = [(a, b) for _, a, b in samples if a is not None and b is not None]
        for _, a, b in samples:
            if a is None and b is None:
                only["none"] += 1
            elif a is None:
                only["schedmate"] += 1
            elif b is None:
                only["squeue"] += 1
        if not paired:
            continue
        first_s.append(abs(paired[0][0] - actual))
        first_o.append(abs(paired[0][1] - actual))
        all_s += [abs(a - actual) for a, _ in paired]
        all_o += [abs(b - actual) for _, b in paired]
    med = lambda v: round(statistics.median(v), 1) if v else None
    return {"jobs_waited": len(per_job), "jobs_with_both": len(first_s), "paired_samples": both,
            "samples_with_one_side_only": only,
            "mae_at_submit_s": {"schedmate": med(first_o), "squeue": med(first_s)},
            "mae_pending_s": {"schedmate": med(all_o), "squeue": med(all_s)},
            "mean_abs_error_pending_s": {
                "schedmate": round(statistics.mean(all_o), 1) if all_o else None,
                "squeue": round(statistics.mean(all_s), 1) if all_s else None}}


def report(out):
    doc = json.load(open(os.path.join(out, "workload.json")))
    runj = json.load(open(os.path.join(out, "run.json")))
    simj = json.load(open(os.path.join(out, "sim.json")))
    sim_jobs = {row["id"]: row for row in csv.DictReader(open(os.path.join(out, "sim_jobs.csv")))}
    bf = int(re.search(r"bf_interval=(\d+)", runj["config"]["SchedulerParameters"] + ",bf_interval=30")
             .group(1))
    diffs, real_jct, sim_jct, order = [], [], [], []
    for r in runj["jobs"]:
        s = sim_jobs.get(r["job_id"])
        if s is None or s["start_s"] == "":
            continue
        real_wait = r["start"] - r["eligible"]
        sim_wait = float(s["start_s"]) - float(s["submit_s"])
        diffs.append(abs(sim_wait - real_wait))
        real_jct.append(r["end"] - r["submit"])
        sim_jct.append(float(s["finish_s"]) - float(s["submit_s"]))
        order.append((r["start"], float(s["start_s"]), r["job_id"]))
    real_avg, sim_avg = statistics.mean(real_jct), statistics.mean(sim_jct)
    waits = [r["start"] - r["eligible"] for r in runj["jobs"]]
    rep = {"workload": doc["meta"], "slurm": runj["config"], "bf_interval_s": bf,
           "replay_wall_s": runj["wall_s"], "sim_wall_s": simj.get("wall_s"),
           "jobs_compared": len(diffs), "jobs_that_waited": sum(1 for w in waits if w >= 1),
           "real_avg_wait_s": round(statistics.mean(waits), 1),
           "start_diff_s": {"median": round(pct(diffs, 0.5), 1), "p90": round(pct(diffs, 0.9), 1),
                            "max": round(max(diffs), 1),
                            "within_bf_interval": round(sum(d <= bf for d in diffs) / len(diffs), 3)},
           "avg_jct_s": {"real": round(real_avg, 1), "sim": round(sim_avg, 1),
                         "diff_pct": round(100 * (sim_avg - real_avg) / real_avg, 2)},
           "estimates": estimate_errors(runj)}
    json.dump(rep, open(os.path.join(out, "report.json"), "w"), indent=1)
    e = rep["estimates"]
    md = [f"Replay: {doc['meta']['jobs']} jobs (seed {doc['meta']['seed']}), "
          f"{doc['meta']['cluster_gpus']} GPUs, wall {runj['wall_s']:.0f} s; "
          f"{rep['jobs_that_waited']} jobs waited (avg wait {rep['real_avg_wait_s']} s); "
          f"bf_interval {bf} s.",
          "",
          "| measure | value | target |", "|---|---|---|",
          f"| start difference, median | {rep['start_diff_s']['median']} s | <= {bf} s |",
          f"| start difference, p90 | {rep['start_diff_s']['p90']} s | |",
          f"| avg JCT real / sim | {rep['avg_jct_s']['real']} s / {rep['avg_jct_s']['sim']} s "
          f"({rep['avg_jct_s']['diff_pct']:+.2f}%) | within 3% |",
          f"| start estimate MAE at submit, schedmate / squeue | "
          f"{e['mae_at_submit_s']['schedmate']} s / {e['mae_at_submit_s']['squeue']} s | |",
          f"| start estimate MAE while pending, schedmate / squeue | "
          f"{e['mae_pending_s']['schedmate']} s / {e['mae_pending_s']['squeue']} s "
          f"| ours <= 1/3 |"]
    open(os.path.join(out, "report.md"), "w").write("\n".join(md) + "\n")
    print("\n".join(md))
    print(json.dumps(rep, indent=1))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, out = sys.argv[1], sys.argv[2]
    if cmd == "prepare":
        prepare(out, int(sys.argv[3]) if len(sys.argv) > 3 else 13,
                int(sys.argv[4]) if len(sys.argv) > 4 else 220)
    elif cmd == "run":
        run(out)
    elif cmd == "sim":
        sim(out)
    elif cmd == "report":
        report(out)
    else:
        sys.exit(__doc__)
