#!/usr/bin/env python3
"""Evaluate online duration predictions on a trace: the issue-12 measures, per half and outcome.

usage: duration_eval.py TRACE_CSV [PRED_CSV] [--baseline-out FILE]

TRACE_CSV: a Lucid/Venus CSV (job_id, user, gpu_num, submit_s, duration_s, state) or a DIR-LAB
GPW CSV (u_id, user, gpu_num, interval, run_time, new_status).
PRED_CSV: `schedmate history replay` output: job_id, predicted_duration_s and, when present,
p10_s, p90_s (the interval whose coverage is reported).

Without PRED_CSV it scores the baseline of issue 12: the mean of the same user's last two
finished jobs with the same GPU count, online (a job is known once submit + duration <= the
query's submit). Fallbacks when the user has no such job: the user's last two jobs, else the
last two jobs cluster-wide, else 1 h. --baseline-out writes its predictions as a CSV.

Rows: all jobs, the first and the second half of the trace's submit-time range (the first half
is what the estimator was tuned on), and jobs by outcome (completed vs cancelled/failed/other).
Measures as in /work/shared/tools/score_predictions.py: within 100% (|p - a| / a < 1), within x2
(a/2 <= p <= 2a, values under 1 s taken as 1 s), median |log2(p/a)|, and the share of actuals in
[p10, p90].
"""
import csv, heapq, math, statistics, sys
from collections import defaultdict, deque


def read_trace(path):
    jobs = []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and "u_id" in rows[0]:
        t = 0.0
        for r in rows:
            t += float(r["interval"])
            st = r.get("new_status", "")
            jobs.append(dict(id=r["u_id"], user=r["user"], gpus=r["gpu_num"], submit=t,
                             dur=float(r["run_time"]),
                             state="COMPLETED" if st == "Pass" else st.upper()))
    else:
        for r in rows:
            jobs.append(dict(id=r["job_id"], user=r["user"], gpus=r["gpu_num"],
                             submit=float(r["submit_s"]), dur=float(r["duration_s"]),
                             state=r.get("state", "")))
    return jobs


def baseline(jobs):
    order = sorted(range(len(jobs)), key=lambda i: jobs[i]["submit"])
    pend = []
    ug = defaultdict(lambda: deque(maxlen=2))
    u = defaultdict(lambda: deque(maxlen=2))
    g = deque(maxlen=2)
    pred = {}
    for i in order:
        j = jobs[i]
        while pend and pend[0][0] <= j["submit"]:
            _, k = heapq.heappop(pend)
            p = jobs[k]
            ug[(p["user"], p["gpus"])].append(p["dur"])
            u[p["user"]].append(p["dur"])
            g.append(p["dur"])
        for src in (ug.get((j["user"], j["gpus"])), u.get(j["user"]), g):
            if src:
                pred[j["id"]] = sum(src) / len(src)
                break
        else:
            pred[j["id"]] = 3600.0
        heapq.heappush(pend, (j["submit"] + j["dur"], i))
    return pred


def measures(pairs):
    n = len(pairs)
    if n == 0:
        return "n=0"
    w100 = sum(abs(p - a) / max(a, 1.0) < 1.0 for a, p, _, _ in pairs) / n
    logr = [abs(math.log2(max(p, 1.0) / max(a, 1.0))) for a, p, _, _ in pairs]
    f2 = sum(x <= 1.0 for x in logr) / n
    cov = [lo <= a <= hi for a, _, lo, hi in pairs if lo is not None]
    s = f"n={n:6d}  w100 {100*w100:5.1f}%  x2 {100*f2:5.1f}%  med|log2| {statistics.median(logr):5.2f}"
    if cov:
        s += f"  p10-p90 cover {100*sum(cov)/len(cov):5.1f}%"
    return s


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    out = None
    if "--baseline-out" in a:
        k = a.index("--baseline-out")
        out = a[k + 1]
        del a[k:k + 2]
    jobs = read_trace(a[0])
    lo_q, hi_q = {}, {}
    if len(a) > 1:
        pred = {}
        with open(a[1], newline="") as f:
            for r in csv.DictReader(f):
                pred[r["job_id"]] = float(r["predicted_duration_s"])
                if "p10_s" in r:
                    lo_q[r["job_id"]] = float(r["p10_s"])
                    hi_q[r["job_id"]] = float(r["p90_s"])
    else:
        pred = baseline(jobs)
        if out:
            with open(out, "w") as f:
                f.write("job_id,predicted_duration_s\n")
                for j in jobs:
                    f.write(f"{j['id']},{pred[j['id']]:.3f}\n")
    t0 = min(j["submit"] for j in jobs)
    t1 = max(j["submit"] for j in jobs)
    mid = (t0 + t1) / 2
    groups = defaultdict(list)
    for j in jobs:
        p = pred.get(j["id"])
        if p is None:
            p = float("inf")
        row = (j["dur"], p, lo_q.get(j["id"]), hi_q.get(j["id"]))
        groups["all"].append(row)
        groups["first half" if j["submit"] <= mid else "second half"].append(row)
        groups["completed" if j["state"] == "COMPLETED" else "not completed"].append(row)
    for k in ("all", "first half", "second half", "completed", "not completed"):
        print(f"{k:14s} {measures(groups[k])}")


if __name__ == "__main__":
    main()
