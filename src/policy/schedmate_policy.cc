#include "policy/schedmate_policy.h"

#include <algorithm>

#include "policy/placer.h"

namespace schedmate::policy {

SchedmatePolicy::SchedmatePolicy(const PolicyConfig& config)
    : config_(config), model_(config.colocation ? config.colocation : &fallback_model_) {
  rules_.min_rate = 0.8;
  rules_.min_combined_rate = 1.1;
}

Duration SchedmatePolicy::Estimate(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) >= estimate_us_.size()) {
    estimate_us_.resize(v.index + 1, -1);
    priority_.resize(v.index + 1, -1);
  }
  if (estimate_us_[v.index] < 0) {
    Duration est = Duration::Hours(1);
    if (config_.estimator) {
      est = config_.estimator->Estimate(*v.record, now).duration;
    } else if (v.record->estimate) {
      est = *v.record->estimate;
    }
    estimate_us_[v.index] = std::max<int64_t>(1, est.micros());
    priority_[v.index] = estimate_us_[v.index] / 1000 * v.gpus();
  }
  return Duration::Micros(estimate_us_[v.index]);
}

std::optional<Placement> SchedmatePolicy::PlaceAvoidingFailed(const SchedulingInput& in,
                                                              int32_t gpus, FreeMap& free) const {
  if (!in.partition.recently_failed_nodes.empty()) {
    FreeMap avoid = free;
    for (int32_t node : in.partition.recently_failed_nodes) {
      const int32_t f = avoid.Free(node);
      if (f > 0) avoid.Take(node, f);
    }
    if (auto pl = Place(config_.placement, gpus, avoid)) {
      for (const auto& s : pl->nodes) free.Take(s.node, s.gpus);
      return pl;
    }
  }
  return Place(config_.placement, gpus, free);
}

Decisions SchedmatePolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  struct Item {
    int key0;
    int64_t priority;
    int64_t seq;
    const JobView* view;
  };
  std::vector<Item> order;
  order.reserve(in.pending.size());
  int64_t wanted = 0;
  for (const JobView& v : in.pending) {
    Estimate(v, in.now);
    order.push_back(
        {v.status->failure_restarts > 0 ? 0 : 1, priority_[v.index], v.status->queue_seq, &v});
    wanted += v.gpus();
  }
  Duration min_running_left = Duration::Infinite();
  for (const JobView& v : in.running) {
    const Duration est = Estimate(v, in.now);
    const Duration ran = in.now - v.status->first_start;
    min_running_left = std::min(min_running_left, std::max(Duration::Zero(), est - ran));
  }
  std::sort(order.begin(), order.end(), [](const Item& a, const Item& b) {
    if (a.key0 != b.key0) return a.key0 < b.key0;
    return a.priority != b.priority ? a.priority < b.priority : a.seq < b.seq;
  });
  FreeMap free = *in.partition.free;
  const bool contention = wanted > free.total_free();

  // Un-pack slowed co-located jobs when there is room and no contention.
  if (!contention) {
    for (const JobView& v : in.running) {
      if (v.status->placement.share_with == kNoJob) continue;  // owners stay put
      if (v.status->rate >= 0.95) continue;
      const Duration left =
          Duration::Micros(estimate_us_[v.index]) - (in.now - v.status->first_start);
      if (left < Duration::Minutes(10)) continue;
      if (auto pl = PlaceAvoidingFailed(in, v.gpus(), free)) {
        d.preempt.push_back({v.index, "schedmate: un-pack a slowed co-located job"});
        d.start.push_back({v.index, std::move(*pl)});
      }
    }
  }

  std::vector<char> taken;
  bool blocked = false;
  for (const Item& it : order) {
    const JobView& v = *it.view;
    if (contention && v.gpus() <= in.partition.gpus_per_node) {
      const JobIndex partner =
          FindPackingPartner(v, it.priority, in.running, priority_, taken, *model_, rules_);
      if (partner != kNoJob) {
        if (static_cast<size_t>(partner) >= taken.size()) taken.resize(partner + 1, 0);
        taken[partner] = 1;
        Placement pl;
        pl.share_with = partner;
        d.start.push_back({v.index, std::move(pl)});
        continue;
      }
    }
    if (blocked && Duration::Micros(estimate_us_[v.index]) > min_running_left) continue;
    if (auto pl = PlaceAvoidingFailed(in, v.gpus(), free)) {
      d.start.push_back({v.index, std::move(*pl)});
    } else {
      blocked = true;
    }
  }
  return d;
}

}  // namespace schedmate::policy
