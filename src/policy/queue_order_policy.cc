#include "policy/queue_order_policy.h"

namespace schedmate::policy {

Decisions QueueOrderPolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  index_.Update(in);
  FreeMap free = *in.partition.free;
  std::vector<JobView> special;
  if (OverrideOrder(in, special)) {
    for (const JobView& v : special) {
      if (auto pl = Place(config_.placement, v.gpus(), free)) {
        d.start.push_back({v.index, std::move(*pl)});  // its index entry goes stale
      } else if (blocking_) {
        break;
      }
    }
    return d;
  }
  index_.ForEach([&](const JobView& v, bool* erase) {
    if (auto pl = Place(config_.placement, v.gpus(), free)) {
      d.start.push_back({v.index, std::move(*pl)});
      *erase = true;
      return true;
    }
    return !blocking_;
  });
  return d;
}

}  // namespace schedmate::policy
