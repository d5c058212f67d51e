#pragma once
// Summary statistics of a simulation: what `schedmate simulate` prints and plots.
//
// Definitions (over finished jobs; rejected and unfinished jobs are counted, not averaged):
//   JCT = finish - submit; queueing delay = total time pending (first wait plus waits after
//   preemptions or failures), Lucid's definition; averages are job-weighted means over all jobs
//   of the scope (a VC, or the whole cluster for "overall", as Lucid's result_summary does);
//   percentiles interpolate linearly between order statistics (numpy's default);
//   makespan = last finish - first submit; GPU utilisation = GPU-time busy / (cluster GPUs x
//   makespan), co-located jobs counting their shared GPUs once.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace schedmate::sim {

struct PartitionSummary {
  std::string name;
  int64_t jobs = 0;
  double avg_jct_s = 0;
  double avg_queue_s = 0;
};

// What became of a run's jobs: Summary and the what-if metrics (whatif.h) report these the same
// way, and average only over the finished ones.
struct JobCounts {
  int64_t jobs = 0;  // finished (in a partition)
  int64_t rejected = 0;
  int64_t unfinished = 0;
  int64_t skipped = 0;  // no GPUs or unknown VC
};

// `result`'s job counts.
JobCounts CountJobs(const SimResult& result);

// Busy GPU-time / (cluster GPUs x makespan); 0 for an empty makespan or cluster.
double GpuUtilization(const SimResult& result);

struct Summary {
  std::string policy;
  JobCounts counts;
  int64_t preemptions = 0;
  int64_t failure_restarts = 0;
  double avg_jct_s = 0;
  double avg_queue_s = 0;
  double p50_jct_s = 0;
  double p95_jct_s = 0;
  double p99_jct_s = 0;
  double makespan_s = 0;
  double gpu_utilization = 0;
  std::vector<PartitionSummary> per_vc;  // config order
};

Summary Summarize(const SimResult& result);

// Linear-interpolated quantile q in [0, 1] of `sorted` (ascending). 0 for an empty vector.
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace schedmate::sim
