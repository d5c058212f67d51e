#include "policy/schedmate_policy.h"

#include <algorithm>

#include "policy/placer.h"

namespace schedmate::policy {

SchedmatePolicy::SchedmatePolicy(const PolicyConfig& config)
    : config_(config),
      index_([this](const JobView& v, SimTime now) {
        Estimate(v, now);
        // Jobs restarted after a node failure first, then estimated service.
        return std::make_pair(int64_t{v.status->failure_restarts > 0 ? 0 : 1}, priority_[v.index]);
      }),
      model_(config.colocation ? config.colocation : &fallback_model_),
      cache_(*model_) {
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
  index_.Update(in);
  int64_t wanted = 0;
  for (const JobView& v : in.pending) wanted += v.gpus();
  Duration min_running_left = Duration::Infinite();
  for (const JobView& v : in.running) {
    const Duration est = Estimate(v, in.now);
    const Duration ran = in.now - v.status->first_start;
    min_running_left = std::min(min_running_left, std::max(Duration::Zero(), est - ran));
  }
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

  PartnerCandidates partners(in.running);
  auto priority_of = [this](JobIndex j) {
    return static_cast<size_t>(j) < priority_.size() ? priority_[j] : int64_t{-1};
  };
  bool blocked = false;
  int scanned_after_block = 0;
  index_.ForEach([&](const JobView& v, bool* erase) {
    if (contention && v.gpus() <= in.partition.gpus_per_node && !partners.empty()) {
      const JobIndex partner = partners.Take(v, priority_[v.index], priority_of, cache_, rules_);
      if (partner != kNoJob) {
        Placement pl;
        pl.share_with = partner;
        d.start.push_back({v.index, std::move(pl)});
        *erase = true;
        return true;
      }
    }
    const bool may_start = !blocked || Duration::Micros(estimate_us_[v.index]) <= min_running_left;
    if (may_start) {
      if (auto pl = PlaceAvoidingFailed(in, v.gpus(), free)) {
        d.start.push_back({v.index, std::move(*pl)});
        *erase = true;
        return true;
      }
      blocked = true;
    }
    // Bounded walk past the first blocked job (see kScanDepth).
    return (free.total_free() > 0 || (contention && !partners.empty())) &&
           (!blocked || ++scanned_after_block <= kScanDepth);
  });
  return d;
}

}  // namespace schedmate::policy
