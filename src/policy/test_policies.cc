#include "policy/test_policies.h"

#include "policy/placer.h"

namespace schedmate::policy {

Decisions RejectAllPolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  for (const JobView& v : in.pending) d.reject.push_back({v.index, RejectReason::kInfeasible});
  return d;
}

Decisions OneAtATimePolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  if (!in.running.empty() || in.pending.empty()) return d;
  FreeMap free = *in.partition.free;
  const JobView& head = in.pending.front();
  if (auto pl = Place(PlacementKind::kConsolidate, head.gpus(), free)) {
    d.start.push_back({head.index, std::move(*pl)});
  }
  return d;
}

Decisions KillAfterPolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  FreeMap free = *in.partition.free;
  for (const JobView& v : in.running) {
    const SimTime deadline = v.status->last_start + kill_after_;
    if (deadline <= in.now) {
      d.preempt.push_back({v.index, "kill-after-n: ran too long"});
      d.reject.push_back({v.index, RejectReason::kInfeasible});
      Release(v.status->placement, free);
    } else if (!d.wake_at || deadline < *d.wake_at) {
      d.wake_at = deadline;
    }
  }
  for (const JobView& v : in.pending) {
    if (auto pl = Place(PlacementKind::kConsolidate, v.gpus(), free)) {
      const SimTime deadline = in.now + kill_after_;
      if (!d.wake_at || deadline < *d.wake_at) d.wake_at = deadline;
      d.start.push_back({v.index, std::move(*pl)});
    }
  }
  return d;
}

}  // namespace schedmate::policy
