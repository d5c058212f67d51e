#pragma once
// QueueOrderPolicy: the shared shape of the non-preemptive queue policies (FIFO, SJF, QSSF).
// A queue order (KeyOf) plus a placer. Each call walks the pending jobs in key order and starts
// every job the placer can fit; with `blocking` (Lucid's and Slurm's strict order without
// backfill) the walk stops at the first job that does not fit.
//
// The order is kept in an ordered index updated from SchedulingInput::delta, so a call costs
// O((started + 1) log n) instead of a sort of the whole queue. Keys are computed once, when a job
// enters the pending list, so they must not depend on time spent waiting.
// Tie-break: equal keys fall back to the order jobs entered the pending list (arrival order;
// equal submit times keep trace order), then the job index.

#include <cstdint>
#include <vector>

#include "policy/pending_index.h"
#include "policy/placer.h"
#include "policy/policy_registry.h"
#include "policy/scheduling_policy.h"

namespace schedmate::policy {

class QueueOrderPolicy : public SchedulingPolicy {
 public:
  QueueOrderPolicy(const PolicyConfig& config, bool blocking)
      : config_(config),
        blocking_(blocking),
        index_([this](const JobView& v, SimTime now) { return KeyOf(v, now); }) {}
  Decisions Schedule(const SchedulingInput& input) override;

 protected:
  // The (primary, secondary) sort key of a job entering the pending list at `now`.
  virtual std::pair<int64_t, int64_t> KeyOf(const JobView& job, SimTime now) = 0;
  // Lets a policy impose a different order for one call (QSSF's Lucid first-step rule): fill
  // `order` and return true. Default: false.
  virtual bool OverrideOrder(const SchedulingInput& /*input*/, std::vector<JobView>& /*order*/) {
    return false;
  }
  const PolicyConfig& config() const { return config_; }

 private:
  PolicyConfig config_;
  bool blocking_;
  PendingIndex index_;
};

}  // namespace schedmate::policy
