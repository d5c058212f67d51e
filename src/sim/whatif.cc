#include "sim/whatif.h"

#include <fmt/format.h>

#include <algorithm>
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

void Fill(Acc& a, double& avg_queue, double& p95_queue, double& avg_jct, int64_t& n) {
  n = static_cast<int64_t>(a.queue.size());
  if (n == 0) return;
  long double q = 0;
  for (double v : a.queue) q += v;
  avg_queue = static_cast<double>(q / n);
  avg_jct = static_cast<double>(a.jct / n);
  std::sort(a.queue.begin(), a.queue.end());
  p95_queue = Quantile(a.queue, 0.95);
}

}  // namespace

WhatIfMetrics MeasureWhatIf(const JobTable& jobs, const SimResult& result) {
  WhatIfMetrics m;
  m.rejected = result.rejected;
  m.unfinished = result.unfinished;
  m.skipped = result.skipped_no_gpu + result.skipped_unknown_vc;
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
  Fill(all, m.avg_queue_s, m.p95_queue_s, m.avg_jct_s, m.jobs);
  for (auto& [name, acc] : parts) {
    PartitionMetrics pm;
    pm.name = name;
    Fill(acc, pm.avg_queue_s, pm.p95_queue_s, pm.avg_jct_s, pm.jobs);
    m.per_partition.push_back(std::move(pm));
  }
  m.utilisation = Summarize(result).gpu_utilization;
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

}  // namespace schedmate::sim
