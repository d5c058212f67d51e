#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace schedmate::sim {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(sorted.size() - 1, lo + 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

namespace {

// Quantile(sorted(v), q) for each of `qs` (increasing), by selection instead of a full sort:
// each needs the order statistics at two positions, placed one after another with nth_element
// on the part not yet ordered (each placed value is exactly the sorted vector's). Reorders `v`.
std::vector<double> QuantilesOf(std::vector<double>& v, std::initializer_list<double> qs) {
  std::vector<double> out;
  if (v.empty()) {
    out.assign(qs.size(), 0.0);
    return out;
  }
  size_t placed = 0;  // positions [0, placed) hold the smallest values; the last one is exact
  const auto at = [&](size_t k) {
    if (k >= placed) {
      std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(placed),
                       v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
      placed = k + 1;
    }
    return v[k];
  };
  for (double q : qs) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(v.size() - 1, lo + 1);
    const double frac = pos - static_cast<double>(lo);
    const double a = at(lo);
    const double b = at(hi);
    out.push_back(a + (b - a) * frac);
  }
  return out;
}

}  // namespace

JobCounts CountJobs(const SimResult& r) {
  JobCounts c;
  for (const JobOutcome& o : r.jobs) {
    if (o.partition >= 0 && o.finished()) ++c.jobs;
  }
  c.rejected = r.rejected;
  c.unfinished = r.unfinished;
  c.skipped = r.skipped_no_gpu + r.skipped_unknown_vc;
  return c;
}

double GpuUtilization(const SimResult& r) {
  const double makespan_s = (r.last_finish - r.first_submit).seconds_f();
  if (makespan_s <= 0 || r.total_gpus <= 0) return 0;
  return r.busy_gpu_seconds / (static_cast<double>(r.total_gpus) * makespan_s);
}

Summary Summarize(const SimResult& r) {
  Summary s;
  s.policy = r.policy;
  s.counts = CountJobs(r);
  std::vector<double> jct;
  std::vector<long double> vc_jct(r.partitions.size(), 0), vc_queue(r.partitions.size(), 0);
  std::vector<int64_t> vc_n(r.partitions.size(), 0);
  long double sum_jct = 0, sum_queue = 0;
  for (const JobOutcome& o : r.jobs) {
    if (o.partition < 0 || !o.finished()) continue;
    const double j = o.jct().seconds_f();
    const double q = o.queued.seconds_f();
    jct.push_back(j);
    sum_jct += j;
    sum_queue += q;
    vc_jct[o.partition] += j;
    vc_queue[o.partition] += q;
    ++vc_n[o.partition];
    s.preemptions += o.preemptions;
    s.failure_restarts += o.failure_restarts;
  }
  const auto n = static_cast<int64_t>(jct.size());  // == s.counts.jobs
  if (n > 0) {
    s.avg_jct_s = static_cast<double>(sum_jct / n);
    s.avg_queue_s = static_cast<double>(sum_queue / n);
    const std::vector<double> q = QuantilesOf(jct, {0.50, 0.95, 0.99});
    s.p50_jct_s = q[0];
    s.p95_jct_s = q[1];
    s.p99_jct_s = q[2];
  }
  s.makespan_s = (r.last_finish - r.first_submit).seconds_f();
  s.gpu_utilization = GpuUtilization(r);
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    PartitionSummary p;
    p.name = r.partitions[i];
    p.jobs = vc_n[i];
    if (vc_n[i] > 0) {
      p.avg_jct_s = static_cast<double>(vc_jct[i] / vc_n[i]);
      p.avg_queue_s = static_cast<double>(vc_queue[i] / vc_n[i]);
    }
    s.per_vc.push_back(std::move(p));
  }
  return s;
}

}  // namespace schedmate::sim
