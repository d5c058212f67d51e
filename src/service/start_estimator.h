#pragma once
// StartTimeEstimator: "when will my job start?" for every pending job, by fast-forwarding the
// current queue in the simulator (sim/simulator.h) under the `slurm` policy (policy/slurm_policy.h)
// with predicted durations: the same policy code that `schedmate simulate --policy slurm` runs.
//
// Model: the snapshot becomes one partition of the available nodes (sorted by name; drained and
// down nodes contribute nothing; a node with fewer GPUs than the largest holds the difference as
// a job that never ends). Each running job holds its GPUs on its nodes until its predicted end
// (start + predicted duration, never earlier than now + `overrun` when it has already outlived
// its prediction, never later than its time limit); Slurm's backfill plans it to end at start +
// its time limit, as Slurm does. Pending jobs enter at max(now, EligibleTime) with Slurm's own
// priorities (fixed: Slurm knows factors the model does not; ties by submit time, then id) and
// their time limits (backfill plans by limits; a job without one is planned as never ending);
// they run their predicted durations. The policy then does what Slurm does: the main scheduler
// in priority order stopping at the first job that does not fit, backfill every bf_interval
// (`options.slurm`, Slurm's defaults unless the site's slurm.conf is given). A job's estimate is
// the simulated start, its nodes where the simulator placed it (best fit, lowest name on ties);
// excluded nodes (ExcNodeList) are never used. A multi-node job is placed as nodes x GPUs-per-node
// GPUs (whole nodes first).
// Held jobs (JobHeld*, job_requeued_in_held_state, Dependency, partition down) get no time, only
// their reason. Jobs asking for more GPUs per node than any allowed node has, or more nodes than
// exist, get no time ("never fits"), as does a job the fast-forward does not start within
// kEstimateHorizon. Deterministic.

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "core/sim_time.h"
#include "policy/slurm_config.h"

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
  std::optional<Duration> time_limit;       // what Slurm's backfill plans it by
};

struct StartEstimate {
  std::string job_id;
  std::optional<SimTime> start;    // nullopt: held or never fits
  std::vector<std::string> nodes;  // where the fast-forward placed it
  std::string reason;              // Slurm's pending reason
  std::string note;                // what the estimate rests on, or why there is none
};

// Estimates beyond this are "never fits" (only a job that outlasts the real nodes gets there).
inline constexpr Duration kEstimateHorizon = Duration::Hours(24 * 365);

struct StartEstimatorOptions {
  Duration overrun = Duration::Minutes(1);
  // The scheduler being predicted: bf_interval, bf_window, bf_max_job_test, SchedulerType.
  policy::SlurmConfig slurm;
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

// Where the companion's pass gets its start estimates. A fast-forward that is cheap (at most
// kSyncStartEstimatePending pending jobs, and the last one took at most kSyncStartEstimateBudget)
// runs in the pass, as it always did: Run() returns its estimates. A large one (10,000 pending
// jobs take seconds) runs on a worker thread instead, so the poll pass and the API never wait
// for it: Run() starts one when none is running (from this pass's snapshot) and returns the
// estimates of the last one that finished, once (empty while none finished since the last call).
// A finished background run is followed by a pause as long as it took, so the worker uses at
// most half a core, at nice 10. Estimates from the background are as of their snapshot; the caller
// applies them only to jobs still pending. Run() on one thread; the destructor waits for a run in
// progress.
inline constexpr size_t kSyncStartEstimatePending = 2000;
inline constexpr double kSyncStartEstimateBudget = 0.25;  // seconds

struct StartEstimateInputs {
  SimTime now;
  std::vector<NodeCapacity> nodes;
  std::vector<RunningJobLoad> running;
  std::vector<PendingJobRequest> pending;
};

class StartEstimateRunner {
 public:
  explicit StartEstimateRunner(StartEstimatorOptions options = {});
  ~StartEstimateRunner();
  StartEstimateRunner(const StartEstimateRunner&) = delete;
  StartEstimateRunner& operator=(const StartEstimateRunner&) = delete;

  std::vector<StartEstimate> Run(StartEstimateInputs in);
  // Whether the last Run() handed the fast-forward to the worker.
  bool background() const { return background_; }
  // Wall time of the last finished fast-forward, seconds.
  double last_seconds() const { return last_seconds_; }

 private:
  struct Outcome {
    std::vector<StartEstimate> estimates;
    double seconds = 0;
  };
  StartTimeEstimator estimator_;
  double last_seconds_ = 0;
  bool background_ = false;
  std::future<Outcome> worker_;
  std::chrono::steady_clock::time_point not_before_;
};

}  // namespace schedmate::service
