#pragma once
// Synthetic traces sampled from a real one.
//
// Model (a bootstrap, no fitted distributions):
//  - Jobs: each generated job copies a uniformly drawn source job's gpus, duration, time limit,
//    cpus, user, account, qos, vc, state and workload columns (model, dataset, batch size, amp,
//    speed, utilisation), so the JOINT distribution of (gpus, duration, user, vc, ...) is the
//    source's.
//  - Arrivals: gaps are drawn uniformly from the source's inter-arrival gaps (consecutive submit
//    times after a stable sort), divided by the load factor L. L > 1 packs arrivals closer
//    (higher offered load), L < 1 spreads them. The first job arrives at 0.
//  - L is given directly, or derived so the expected span of the generated trace is `span_days`,
//    or derived so the expected offered load is `target_load` x `cluster_gpus` busy GPUs:
//        L = target_load * cluster_gpus * mean_gap / mean(gpus * duration)
//    (the source's own offered load is mean(gpus * duration) / mean_gap GPUs).
//  - Ids are "1".."N" in arrival order. Optionally every job is put in one VC (`single_vc`).
// Deterministic: the same source, options and seed give the same table (and the same bytes
// through WriteLucidCsv). Draw order per job: gap, then source index.

#include <cstdint>
#include <optional>
#include <string>

#include "core/job.h"
#include "core/result.h"

namespace schedmate::trace {

struct GenerateOptions {
  int64_t jobs = 1000;
  uint64_t seed = 1;
  // At most one of the three arrival scalings below may be set; none means L = 1.
  std::optional<double> load_factor;
  std::optional<double> span_days;
  std::optional<int64_t> cluster_gpus;   // with target_load
  double target_load = 0.9;              // busy fraction of cluster_gpus, used with cluster_gpus
  std::optional<std::string> single_vc;  // put every job in this VC
};

struct GeneratedTrace {
  JobTable table;
  double load_factor = 1;          // the L actually used
  double source_offered_gpus = 0;  // mean GPUs busy in the source, mean(g*d)/mean_gap
  double offered_gpus = 0;         // the same for the generated trace (expected)
};

// Errors (kInvalidArgument): fewer than 2 source jobs, a source whose durations are all 0
// (Pollux; Gavel without ApplyGavelThroughputs), all-equal source submit times (no gaps), jobs < 0,
// conflicting or non-positive scalings, submit times that would pass kMaxTraceSeconds.
Result<GeneratedTrace> GenerateTrace(const JobTable& source, const GenerateOptions& options);

// A Lucid-style vc_config.csv (",num" then "<vc>,<nodes>") for `table` on a cluster of
// `cluster_gpus` GPUs in nodes of `gpus_per_node`: VCs (sorted by name) get nodes in proportion
// to their GPU-time demand (largest remainder), at least enough to hold their largest job.
// The node total can exceed cluster_gpus / gpus_per_node only by those minimums.
Result<std::string> FormatVcConfigFor(const JobTable& table, int64_t cluster_gpus,
                                      int32_t gpus_per_node);

}  // namespace schedmate::trace
