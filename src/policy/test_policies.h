#pragma once
// Trivial policies for exercising the simulator (after Batsim's rejecter, exec1by1 and killer).
// Each is deliberately simple so engine tests can predict every outcome by hand.
//
// RejectAllPolicy ("reject-all"): rejects every pending job as infeasible. Nothing ever runs.
// OneAtATimePolicy ("one-at-a-time"): starts the oldest pending job (queue-entry order) only when
//   nothing is running; consolidate placement. Jobs run strictly one after another.
// KillAfterPolicy ("kill-after-n"): starts pending jobs in queue-entry order wherever they fit
//   (no blocking) and kills (preempts, then rejects) any job that has run for `kill_after`
//   since its start; asks to be woken at the next kill time.

#include "policy/policy_registry.h"
#include "policy/scheduling_policy.h"

namespace schedmate::policy {

class RejectAllPolicy : public SchedulingPolicy {
 public:
  std::string_view Name() const override { return "reject-all"; }
  Decisions Schedule(const SchedulingInput& input) override;
};

class OneAtATimePolicy : public SchedulingPolicy {
 public:
  std::string_view Name() const override { return "one-at-a-time"; }
  Decisions Schedule(const SchedulingInput& input) override;
};

class KillAfterPolicy : public SchedulingPolicy {
 public:
  explicit KillAfterPolicy(Duration kill_after) : kill_after_(kill_after) {}
  std::string_view Name() const override { return "kill-after-n"; }
  PolicyTraits Traits() const override { return {Duration::Zero(), /*preemptive=*/true}; }
  Decisions Schedule(const SchedulingInput& input) override;

 private:
  Duration kill_after_;
};

}  // namespace schedmate::policy
