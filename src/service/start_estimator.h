#pragma once
// StartTimeEstimator: "when will my job start?" for every pending job, by fast-forwarding the
// current queue with predicted durations.
//
// Model (stated, deliberately small): GPUs are the only resource. Each available node has a
// free-GPU profile over time: its GPUs minus those of running jobs, each running job releasing
// its GPUs at its predicted end (start + predicted duration, never earlier than now + `overrun`
// when it has already outlived its prediction, never later than its time limit). Pending jobs are
// taken in Slurm's priority order (priority desc, then submit time, then id) and each is placed
// at the earliest time t at which enough nodes keep >= its GPUs-per-node free for its whole
// predicted duration; that reservation is then subtracted (conservative backfill: a later job
// may start earlier in a gap, but never delays an earlier one). Nodes tie-break by name.
// A job is never placed before its eligible time (a requeue's backoff) nor on its excluded nodes.
// Held jobs (JobHeld*, job_requeued_in_held_state, Dependency) get no time, only their reason. Jobs
// asking for more GPUs per node than any available node has, or more nodes than exist, get no time
// ("never fits"). Deterministic; O(pending x candidate times x nodes x profile steps).

#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.h"

namespace schedmate::service {

struct NodeCapacity {
  std::string name;
  int32_t gpus_total = 0;
  bool available = true;  // false: drained or down (contributes nothing)
};

struct RunningJobLoad {
  std::string job_id;
  std::vector<std::string> nodes;
  int32_t gpus_per_node = 0;
  SimTime start;
  Duration predicted;  // predicted total run time
  std::optional<Duration> time_limit;
};

struct PendingJobRequest {
  std::string job_id;
  int64_t priority = 0;
  SimTime submit;
  int32_t nodes = 1;
  int32_t gpus_per_node = 0;
  Duration predicted;
  std::string reason;                       // Slurm's pending reason
  std::optional<SimTime> not_before;        // Slurm's EligibleTime (BeginTime, requeue delay)
  std::vector<std::string> excluded_nodes;  // ExcNodeList: never placed there
};

struct StartEstimate {
  std::string job_id;
  std::optional<SimTime> start;    // nullopt: held or never fits
  std::vector<std::string> nodes;  // where the fast-forward placed it
  std::string reason;              // Slurm's pending reason
  std::string note;                // what the estimate rests on, or why there is none
};

struct StartEstimatorOptions {
  Duration overrun = Duration::Minutes(1);
};

class StartTimeEstimator {
 public:
  explicit StartTimeEstimator(StartEstimatorOptions options = {}) : options_(options) {}
  // One estimate per pending job, in the order the fast-forward considered them.
  std::vector<StartEstimate> Estimate(SimTime now, const std::vector<NodeCapacity>& nodes,
                                      const std::vector<RunningJobLoad>& running,
                                      std::vector<PendingJobRequest> pending) const;

 private:
  StartEstimatorOptions options_;
};

}  // namespace schedmate::service
