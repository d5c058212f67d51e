#pragma once
// SchedmatePolicy ("schedmate"): duration-aware ordering from a DurationEstimator, interference-
// aware packing that un-packs when the co-location model shows slowdown, and failure-aware
// restarts. The policy the advisor's learned estimator is meant to drive.
// Rationale and rules:
//  - Order: jobs restarted after a node failure first (they already waited and lost work), then
//    estimated service (estimate x GPUs, from the estimator, else JobRecord::estimate, else 1 h),
//    then queue-entry order.
//  - Head-of-line: the walk starts jobs in order; after the first job that does not fit it only
//    backfills jobs whose estimate is at most the shortest estimated remaining time of the running
//    jobs (they should be gone before the head could start anyway), so large jobs are not starved
//    by a stream of small ones. At most kScanDepth jobs past the blocked one are examined.
//  - Packing under contention only (GPUs wanted by pending jobs > free GPUs), with the Lucid
//    rules of lucid_policy.h but stricter speeds: each co-located job must keep >= 80 % of its
//    solo speed.
//  - Un-packing: when there is no contention and a co-located job would fit alone, it is
//    migrated (preempted and restarted alone in the same call, paying the checkpoint cost) if
//    its co-located rate is below 0.95 and its estimated remaining time exceeds 10 minutes.
//  - Failure-aware placement: nodes that failed recently are avoided when the job fits elsewhere.
// Never preempts for ordering, only to un-pack.

#include <vector>

#include "policy/colocation_model.h"
#include "policy/lucid_policy.h"
#include "policy/pending_index.h"
#include "policy/policy_registry.h"

namespace schedmate::policy {

class SchedmatePolicy : public SchedulingPolicy {
 public:
  explicit SchedmatePolicy(const PolicyConfig& config);
  std::string_view Name() const override { return "schedmate"; }
  PolicyTraits Traits() const override { return {Duration::Zero(), /*preemptive=*/true}; }
  Decisions Schedule(const SchedulingInput& input) override;

 private:
  Duration Estimate(const JobView& v, SimTime now);
  std::optional<Placement> PlaceAvoidingFailed(const SchedulingInput& in, int32_t gpus,
                                               FreeMap& free) const;
  PolicyConfig config_;
  PendingIndex index_;
  ColocationModel fallback_model_;
  const ColocationModel* model_;
  PackingCache cache_;
  PackingRules rules_;
  std::vector<int64_t> estimate_us_;  // by job index, -1 = unknown
  std::vector<int64_t> priority_;
};

}  // namespace schedmate::policy
