#pragma once
// TiresiasPolicy ("tiresias"): discretised two-dimensional least-attained-service (Tiresias,
// NSDI'19), in the variant Lucid's artifact uses as its baseline.
// Rationale: without duration knowledge, favour jobs that have received little service, where
// service is two-dimensional: GPUs x time run (GPU-seconds). Attained service is discretised into
// two queues at `threshold` GPU-seconds (Lucid: 18,000); within a queue jobs go in FIFO order
// (submit time), so a long job is demoted once and then not starved by newer small ones.
// Each call walks high-queue then low-queue jobs with a GPU quota equal to the partition's size:
// a job that fits the quota is kept (running) or selected (pending); a running job that does not
// fit is preempted. Selected jobs are placed in order; one that does not fit waits.
// Called every `interval` (60 s, Lucid's and Pollux's choice); asks to be woken when a running
// job will cross the threshold, so demotions are never missed.
// Ties inside a queue: submit time, then running before pending (Lucid lists running jobs
// first), then start order / queue-entry order.

#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "policy/policy_registry.h"
#include "policy/scheduling_policy.h"

namespace schedmate::policy {

struct TiresiasConfig {
  int64_t threshold_gpu_seconds = 18000;
  Duration interval = Duration::Seconds(60);
};

class TiresiasPolicy : public SchedulingPolicy {
 public:
  TiresiasPolicy(const PolicyConfig& config, TiresiasConfig tiresias = {})
      : config_(config), tc_(tiresias) {}
  std::string_view Name() const override { return "tiresias"; }
  PolicyTraits Traits() const override { return {tc_.interval, /*preemptive=*/true}; }
  Decisions Schedule(const SchedulingInput& input) override;

 private:
  using Key = std::tuple<int64_t, int64_t, JobIndex>;  // submit us, seq, job
  struct Crossing {
    SimTime time;
    int64_t run_seq;
    JobIndex job;
    bool operator>(const Crossing& o) const {
      return std::tie(time, run_seq, job) > std::tie(o.time, o.run_seq, o.job);
    }
  };
  void AddPending(const JobView& v, SimTime now);
  void AddRunning(const JobView& v, SimTime now);
  bool PendingStale(const Key& k) const;
  bool RunningStale(const Key& k) const;

  PolicyConfig config_;
  TiresiasConfig tc_;
  std::set<Key> pending_[2];  // [0] high priority, [1] low
  std::set<Key> running_[2];
  std::priority_queue<Crossing, std::vector<Crossing>, std::greater<Crossing>> crossings_;
  std::vector<JobView> views_;
  int64_t max_run_seq_ = 0;
};

}  // namespace schedmate::policy
