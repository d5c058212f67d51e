#pragma once
// What-if building blocks shared by `schedmate whatif`, `tune` and the benchmark: capacity
// changes on a ClusterSpec, durations capped at their limits, and the metrics an operator
// compares (queue wait, JCT, utilisation, per Slurm partition).
//
// Metrics (WhatIfMetrics) are over finished jobs, as sim::Summarize: queue wait = time pending
// (the simulator's JobOutcome::queued), JCT = finish - submit; p95 interpolates linearly;
// utilisation = busy GPU-time / (cluster GPUs x makespan). per_partition groups jobs by their
// record's partition (JobRecord::vc), whatever VC they ran in, sorted by name, so a history whose
// partitions share one node pool still reports per partition.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/job.h"
#include "core/status.h"
#include "sim/metrics.h"
#include "sim/simulator.h"

namespace schedmate::sim {

// One partition's jobs: the simulator's per-VC summary (metrics.h) plus the p95 queue wait.
struct PartitionMetrics : PartitionSummary {
  double p95_queue_s = 0;
};

struct WhatIfMetrics {
  JobCounts counts;
  double avg_queue_s = 0;
  double p95_queue_s = 0;
  double avg_jct_s = 0;
  double utilisation = 0;
  std::vector<PartitionMetrics> per_partition;
};

WhatIfMetrics MeasureWhatIf(const JobTable& jobs, const SimResult& result);

// Adds `nodes` nodes of `gpus_per_node` GPUs to the VC named `vc` ("" = the only VC).
// kInvalidArgument when the VC is unknown or ambiguous (several VCs and no name), when the
// node size differs from the VC's (VCs are uniform), or when the count is not positive.
Status AddNodes(ClusterSpec& cluster, int32_t nodes, int32_t gpus_per_node, const std::string& vc);
// Removes `nodes` nodes from the VC named `vc` ("" = the only VC). kInvalidArgument when that
// leaves no node in the whole cluster, when the VC has fewer nodes, or the VC is unknown/ambiguous.
Status RemoveNodes(ClusterSpec& cluster, int32_t nodes, const std::string& vc);

// Caps each job's duration at its time limit (Slurm ends a job at its limit). Returns how many
// jobs were capped.
int64_t CapDurationsAtLimits(JobTable& jobs);

// The mean of several runs' metrics: counts rounded to the nearest integer, partitions matched by
// name (in name order), each averaged over the runs that have it. Empty input: all zero.
WhatIfMetrics MeanWhatIfMetrics(const std::vector<WhatIfMetrics>& runs);

// What the site's scheduler really did, from the waits a history records (sacct Start -
// Eligible) of its jobs with GPUs.
struct ObservedWaits {
  int64_t jobs = 0;
  double avg_queue_s = 0;
  double p95_queue_s = 0;
};
// nullopt when no GPU job of `history` has an observed wait.
std::optional<ObservedWaits> MeasureObservedWaits(const JobTable& history);

// A single partition big enough for `jobs`: the largest job, and the mean GPU demand over the
// submit span at 80% load, in nodes of `gpus_per_node` GPUs (at least one node).
struct TraceSizing {
  int32_t nodes = 0;
  int64_t max_job_gpus = 1;
  double mean_demand_gpus = 0;  // at 80% load, rounded up
};
// kInvalidArgument naming `jobs.source` when the result would exceed kMaxClusterGpus.
Result<TraceSizing> SizeClusterForTrace(const JobTable& jobs, int32_t gpus_per_node);

}  // namespace schedmate::sim
