#include "policy/lucid_policy.h"

#include <algorithm>

#include "policy/placer.h"

namespace schedmate::policy {

JobIndex FindPackingPartner(const JobView& job, int64_t job_priority,
                            std::span<const JobView> running,
                            const std::vector<int64_t>& priority_by_index,
                            const std::vector<char>& taken, const ColocationModel& model,
                            const PackingRules& rules) {
  const int job_score = model.ShareScore(*job.record);
  for (const JobView& r : running) {
    if (r.status->shared_with != kNoJob || r.status->placement.share_with != kNoJob) continue;
    if (static_cast<size_t>(r.index) < taken.size() && taken[r.index]) continue;
    if (r.gpus() != job.gpus()) continue;
    if (job.record->gmem_mib + r.record->gmem_mib > rules.gpu_memory_mib) continue;
    if (job_score + model.ShareScore(*r.record) > rules.max_share_score) continue;
    const int64_t rp =
        static_cast<size_t>(r.index) < priority_by_index.size() ? priority_by_index[r.index] : -1;
    if (rp >= 0 && static_cast<double>(job_priority) > rules.max_priority_ratio * rp) continue;
    const PairRates rates = model.Rates(*job.record, *r.record);
    if (rates.a < rules.min_rate || rates.b < rules.min_rate ||
        rates.a + rates.b < rules.min_combined_rate)
      continue;
    return r.index;
  }
  return kNoJob;
}

LucidPolicy::LucidPolicy(const PolicyConfig& config)
    : config_(config), model_(config.colocation ? config.colocation : &fallback_model_) {}

int64_t LucidPolicy::Priority(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) >= priority_.size()) priority_.resize(v.index + 1, -1);
  int64_t& p = priority_[v.index];
  if (p < 0) {
    Duration est = Duration::Hours(1);
    if (config_.estimator) {
      est = config_.estimator->Estimate(*v.record, now).duration;
    } else if (v.record->estimate) {
      est = *v.record->estimate;
    }
    p = std::max<int64_t>(0, est.micros() / 1000) * v.gpus();  // ms x GPUs
  }
  return p;
}

Decisions LucidPolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  struct Item {
    int64_t priority;
    int64_t seq;
    const JobView* view;
  };
  std::vector<Item> order;
  order.reserve(in.pending.size());
  int64_t wanted = 0;
  for (const JobView& v : in.pending) {
    order.push_back({Priority(v, in.now), v.status->queue_seq, &v});
    wanted += v.gpus();
  }
  for (const JobView& v : in.running) Priority(v, in.now);
  std::sort(order.begin(), order.end(), [](const Item& a, const Item& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.seq < b.seq;
  });
  FreeMap free = *in.partition.free;
  const bool packing = wanted > free.total_free();
  std::vector<char> taken;
  for (const Item& it : order) {
    const JobView& v = *it.view;
    if (packing && v.gpus() <= in.partition.gpus_per_node) {
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
    if (auto pl = Place(config_.placement, v.gpus(), free)) {
      d.start.push_back({v.index, std::move(*pl)});
    } else if (!packing) {
      break;
    }
  }
  return d;
}

}  // namespace schedmate::policy
