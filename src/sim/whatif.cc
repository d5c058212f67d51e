#include "sim/whatif.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/metrics.h"

namespace schedmate::sim {
namespace {

Result<VcSpec*> FindVc(ClusterSpec& cluster, const std::string& vc) {
  if (vc.empty()) {
    if (cluster.vcs.size() != 1) {
      return Status::InvalidArgument(
          fmt::format("the cluster has {} partitions: name one (N:VC)", cluster.vcs.size()));
    }
    return &cluster.vcs[0];
  }
  for (auto& v : cluster.vcs) {
    if (v.name == vc) return &v;
  }
  return Status::InvalidArgument(fmt::format("no partition named '{}' in the cluster", vc));
}

struct Acc {
  std::vector<double> queue;
  long double jct = 0;
};

// The means and p95 of `a`'s jobs; returns how many there are.
int64_t Fill(Acc& a, double& avg_queue, double& p95_queue, double& avg_jct) {
  const auto n = static_cast<int64_t>(a.queue.size());
  if (n == 0) return 0;
  long double q = 0;
  for (double v : a.queue) q += v;
  avg_queue = static_cast<double>(q / n);
  avg_jct = static_cast<double>(a.jct / n);
  std::sort(a.queue.begin(), a.queue.end());
  p95_queue = Quantile(a.queue, 0.95);
  return n;
}

}  // namespace

WhatIfMetrics MeasureWhatIf(const JobTable& jobs, const SimResult& result) {
  WhatIfMetrics m;
  m.counts = CountJobs(result);
  Acc all;
  std::map<std::string, Acc> parts;
  for (size_t i = 0; i < result.jobs.size() && i < jobs.jobs.size(); ++i) {
    const JobOutcome& o = result.jobs[i];
    if (o.partition < 0 || !o.finished()) continue;
    const double q = o.queued.seconds_f();
    const double j = o.jct().seconds_f();
    all.queue.push_back(q);
    all.jct += j;
    Acc& p = parts[jobs.jobs[i].vc];
    p.queue.push_back(q);
    p.jct += j;
  }
  Fill(all, m.avg_queue_s, m.p95_queue_s, m.avg_jct_s);
  for (auto& [name, acc] : parts) {
    PartitionMetrics pm;
    pm.name = name;
    pm.jobs = Fill(acc, pm.avg_queue_s, pm.p95_queue_s, pm.avg_jct_s);
    m.per_partition.push_back(std::move(pm));
  }
  m.utilisation = GpuUtilization(result);
  return m;
}

Status AddNodes(ClusterSpec& cluster, int32_t nodes, int32_t gpus_per_node, const std::string& vc) {
  if (nodes <= 0 || gpus_per_node <= 0) {
    return Status::InvalidArgument("add-nodes: node count and GPUs per node must be positive");
  }
  SM_ASSIGN_OR_RETURN(VcSpec * v, FindVc(cluster, vc));
  if (v->nodes > 0 && v->gpus_per_node != gpus_per_node) {
    return Status::InvalidArgument(fmt::format(
        "add-nodes: partition{} has {} GPUs per node; nodes of {} GPUs are not modelled "
        "(partitions have one node size)",
        v->name.empty() ? "" : " '" + v->name + "'", v->gpus_per_node, gpus_per_node));
  }
  if (static_cast<int64_t>(v->nodes) + nodes > 1'000'000) {
    return Status::InvalidArgument("add-nodes: more than 1,000,000 nodes");
  }
  v->gpus_per_node = gpus_per_node;
  v->nodes += nodes;
  return Status::Ok();
}

Status RemoveNodes(ClusterSpec& cluster, int32_t nodes, const std::string& vc) {
  if (nodes <= 0) return Status::InvalidArgument("remove-nodes: the count must be positive");
  SM_ASSIGN_OR_RETURN(VcSpec * v, FindVc(cluster, vc));
  if (nodes > v->nodes) {
    return Status::InvalidArgument(fmt::format(
        "remove-nodes: cannot remove {} nodes from a partition of {}", nodes, v->nodes));
  }
  v->nodes -= nodes;
  int64_t left = 0;
  for (const auto& x : cluster.vcs) left += x.nodes;
  if (left == 0) {
    return Status::InvalidArgument("remove-nodes: the scenario removes every node of the cluster");
  }
  return Status::Ok();
}

int64_t CapDurationsAtLimits(JobTable& jobs) {
  int64_t capped = 0;
  for (auto& j : jobs.jobs) {
    if (j.time_limit && *j.time_limit > Duration::Zero() && j.duration > *j.time_limit) {
      j.duration = *j.time_limit;
      ++capped;
    }
  }
  return capped;
}

WhatIfMetrics MeanWhatIfMetrics(const std::vector<WhatIfMetrics>& runs) {
  WhatIfMetrics m;
  if (runs.empty()) return m;
  const double n = static_cast<double>(runs.size());
  std::map<std::string, std::pair<PartitionMetrics, int>> parts;
  for (const auto& r : runs) {
    m.counts.jobs += r.counts.jobs;
    m.counts.rejected += r.counts.rejected;
    m.counts.unfinished += r.counts.unfinished;
    m.counts.skipped += r.counts.skipped;
    m.avg_queue_s += r.avg_queue_s / n;
    m.p95_queue_s += r.p95_queue_s / n;
    m.avg_jct_s += r.avg_jct_s / n;
    m.utilisation += r.utilisation / n;
    for (const auto& p : r.per_partition) {
      auto& [acc, count] = parts[p.name];
      acc.name = p.name;
      acc.jobs += p.jobs;
      acc.avg_queue_s += p.avg_queue_s;
      acc.p95_queue_s += p.p95_queue_s;
      acc.avg_jct_s += p.avg_jct_s;
      ++count;
    }
  }
  auto mean_count = [](int64_t total, double over) {
    return static_cast<int64_t>(std::llround(static_cast<double>(total) / over));
  };
  m.counts.jobs = mean_count(m.counts.jobs, n);
  m.counts.rejected = mean_count(m.counts.rejected, n);
  m.counts.unfinished = mean_count(m.counts.unfinished, n);
  m.counts.skipped = mean_count(m.counts.skipped, n);
  for (auto& [name, pc] : parts) {
    auto& [acc, count] = pc;
    const double c = count;
    acc.jobs = mean_count(acc.jobs, c);
    acc.avg_queue_s /= c;
    acc.p95_queue_s /= c;
    acc.avg_jct_s /= c;
    m.per_partition.push_back(acc);
  }
  return m;
}

std::optional<ObservedWaits> MeasureObservedWaits(const JobTable& history) {
  std::vector<double> waits;
  long double sum = 0;
  for (const auto& j : history.jobs) {
    if (j.observed_wait && j.gpus.milli() > 0) {
      waits.push_back(j.observed_wait->seconds_f());
      sum += waits.back();
    }
  }
  if (waits.empty()) return std::nullopt;
  std::sort(waits.begin(), waits.end());
  ObservedWaits w;
  w.jobs = static_cast<int64_t>(waits.size());
  w.avg_queue_s = static_cast<double>(sum / waits.size());
  w.p95_queue_s = Quantile(waits, 0.95);
  return w;
}

Result<TraceSizing> SizeClusterForTrace(const JobTable& jobs, int32_t gpus_per_node) {
  TraceSizing s;
  long double gpu_seconds = 0;
  SimTime first = SimTime::Max(), last = SimTime::Zero();
  for (const auto& j : jobs.jobs) {
    s.max_job_gpus = std::max<int64_t>(s.max_job_gpus, j.gpus.ceil_whole());
    gpu_seconds += static_cast<long double>(j.gpus.as_double()) * j.duration.seconds_f();
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  const double span = std::max(1.0, (last - first).seconds_f());
  s.mean_demand_gpus = std::ceil(static_cast<double>(gpu_seconds) / span / 0.8);
  if (!(s.mean_demand_gpus <= static_cast<double>(kMaxClusterGpus)) ||
      s.max_job_gpus > kMaxClusterGpus) {
    return Status::InvalidArgument(fmt::format(
        "{}: sizing the cluster from the trace gives more than {} GPUs (largest job {} GPUs, "
        "mean "
        "demand {:.3g} GPUs at 80% load), the most the simulator accepts; give --gpus, --nodes "
        "or --vc-config",
        jobs.source, kMaxClusterGpus, s.max_job_gpus, s.mean_demand_gpus));
  }
  const int64_t total = std::max(s.max_job_gpus, static_cast<int64_t>(s.mean_demand_gpus));
  s.nodes = static_cast<int32_t>(std::max<int64_t>(1, (total + gpus_per_node - 1) / gpus_per_node));
  return s;
}

}  // namespace schedmate::sim
