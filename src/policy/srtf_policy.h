#pragma once
// SrtfPolicy ("srtf"): shortest remaining time first, preemptive, with oracle durations.
// Rationale: the preemptive upper bound on duration knowledge (Lucid's SRTF). Each call ranks
// pending and running jobs together by remaining time and walks them with a GPU quota equal to
// the partition's size: a job that fits the quota is kept (running) or selected (pending); a
// running job that does not fit is preempted (paying the simulator's checkpoint/restore cost).
// Selected pending jobs are then placed in rank order; one that does not fit (fragmentation)
// waits, and later ones may still start.
// Ties: equal remaining time puts pending jobs before running ones (Lucid ranks queue + running
// list with a stable sort), pending by queue-entry order, running by start order.
// Pending jobs are kept in an ordered index (their remaining time is frozen while they wait);
// running jobs are ranked each call.

#include <set>
#include <tuple>
#include <vector>

#include "policy/policy_registry.h"
#include "policy/scheduling_policy.h"

namespace schedmate::policy {

class SrtfPolicy : public SchedulingPolicy {
 public:
  explicit SrtfPolicy(const PolicyConfig& config) : config_(config) {}
  std::string_view Name() const override { return "srtf"; }
  PolicyTraits Traits() const override { return {Duration::Zero(), /*preemptive=*/true}; }
  Decisions Schedule(const SchedulingInput& input) override;

 private:
  using Key = std::tuple<int64_t, int64_t, JobIndex>;  // remaining us, queue_seq, job
  void Insert(const JobView& v);
  PolicyConfig config_;
  std::set<Key> pending_;
  std::vector<JobView> views_;
};

}  // namespace schedmate::policy
