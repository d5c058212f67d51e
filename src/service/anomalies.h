#pragma once
// AnomalyDetector: what is wasting GPUs or about to, from one consistent ServiceView per pass.
// Each anomaly carries its evidence, a severity and a suggested action; `since` is when the
// detector first saw the condition (kept across passes while it holds, forgotten when it clears),
// and a condition is reported only once it has held for its kind's minimum duration, so a short
// dip is not flagged. A condition read from a usage probe counts from when the probe's answer
// came in (JobUsage::at), so it is never flagged before it can have held that long.
//
//   stalled            a running job's log shows no progress for N x its own step interval (the
//                      tracker's rule, service/component_adapters.h)              warning
//   slowed             its recent step time is up against its own baseline              info
//   time_limit_high    the time limit is >= `limit_factor` x the advisor's p90 (high) and at
//                      least `limit_slack` above it: backfill cannot place the job in
//                      gaps it would fit           warning when pending, info when running
//   node_failures      >= `node_failure_count` infrastructure failures on one node within
//                      `failure_window`                                               critical
//   repeated_failure   one job failed >= `repeat_count` times with the same category within
//                      `failure_window` (requeues that cannot help)                   warning
//   idle_gpu           a running job's GPUs in use (holding >= `busy_gpu_memory_mib`), or all
//                      of them when none is, below `idle_gpu_util_pct` in the latest probe
//                      (service/gpu_probe.h), for `min_idle_gpu`       warning (critical: all)
//   over_requested     for `min_over_requested`, a running job uses less than it holds: GPUs
//                      in use fewer than allocated (probe) or, without a probe saying all are
//                      in use, fewer ranks in its log than GPUs (service/log_ranks.h); CPU time
//                      below `cpu_use_below` x allocated CPUs x elapsed (>= `min_cpus` CPUs);
//                      resident memory below `memory_use_below` x allocated (>= `min_memory_mib`)
//                      (sstat). One anomaly per job with every part's evidence        warning
//
// Deterministic: anomalies sorted by kind, then job id, then node.

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.h"

namespace schedmate::service {

struct ServiceView;  // companion.h (which holds the anomalies of its last pass)

struct Anomaly {
  std::string kind;
  std::string job_id;  // "" for node anomalies
  std::string node;    // "" for job anomalies
  SimTime since;
  std::string severity;  // info | warning | critical
  std::string evidence;
  std::string suggestion;
};

struct AnomalyOptions {
  Duration min_stalled = Duration::Minutes(2);  // on top of the tracker's own stall rule
  Duration min_slowed = Duration::Minutes(5);
  double limit_factor = 4.0;
  Duration limit_slack = Duration::Hours(1);
  int node_failure_count = 2;
  int repeat_count = 3;
  Duration failure_window = Duration::Hours(24);
  double idle_gpu_util_pct = 5.0;    // at or below: idle
  double busy_gpu_memory_mib = 256;  // a GPU holding this much memory has a process on it
  Duration min_idle_gpu = Duration::Minutes(10);
  Duration min_over_requested = Duration::Minutes(10);
  double cpu_use_below = 0.25;
  double memory_use_below = 0.25;
  int min_cpus = 4;
  int64_t min_memory_mib = 4096;
};

class AnomalyDetector {
 public:
  explicit AnomalyDetector(AnomalyOptions options = {}) : options_(options) {}
  // The anomalies that hold in `view` at `now` (and have held long enough).
  std::vector<Anomaly> Update(const ServiceView& view, SimTime now);

 private:
  struct Candidate {
    Anomaly anomaly;
    Duration min_duration;
    // When the evidence was observed, if not at the pass's `now` (a usage probe's answer): the
    // minimum duration counts from the later of the two.
    std::optional<SimTime> observed = std::nullopt;
  };
  void JobAnomalies(const ServiceView& view, SimTime now, std::vector<Candidate>& out) const;
  void FailureAnomalies(const ServiceView& view, SimTime now, std::vector<Candidate>& out) const;
  void UsageAnomalies(const ServiceView& view, SimTime now, std::vector<Candidate>& out) const;
  AnomalyOptions options_;
  std::map<std::string, SimTime> first_seen_;  // kind|job|node -> first pass it held
};

// [{"kind", "job_id" | "node", "since" (Unix seconds), "severity", "evidence", "suggestion"}]
nlohmann::json AnomaliesToJson(const std::vector<Anomaly>& anomalies);
// Counts by kind (every kind listed, 0 when none), for /metrics.
std::map<std::string, int64_t> CountAnomalies(const std::vector<Anomaly>& anomalies);

}  // namespace schedmate::service
