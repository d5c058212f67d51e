#include "policy/lucid_policy.h"

#include <algorithm>
#include <optional>

#include "policy/placer.h"

namespace schedmate::policy {

PartnerCandidates::PartnerCandidates(std::span<const JobView> running) {
  for (const JobView& r : running) {
    if (r.status->shared_with != kNoJob || r.status->placement.share_with != kNoJob) continue;
    by_gpus_[r.gpus()].push_back(&r);
    ++available_;
  }
}

int32_t PackingCache::Workload(const JobView& v) {
  if (static_cast<size_t>(v.index) >= by_job_.size()) by_job_.resize(v.index + 1, -1);
  int32_t& id = by_job_[v.index];
  if (id < 0) {
    const JobRecord& r = *v.record;
    Key k{r.model, r.dataset, r.batch_size, r.amp, r.gpu_util, r.gmem_mib};
    auto [it, inserted] = ids_.emplace(std::move(k), static_cast<int32_t>(scores_.size()));
    if (inserted) scores_.push_back(model_.ShareScore(r));
    id = it->second;
  }
  return id;
}

PairRates PackingCache::Rates(const JobView& a, const JobView& b) {
  const auto key = std::make_pair(Workload(a), Workload(b));
  auto it = rates_.find(key);
  if (it == rates_.end()) it = rates_.emplace(key, model_.Rates(*a.record, *b.record)).first;
  return it->second;
}

double PairingLoss(int64_t job, int64_t partner, PairRates rates) {
  const double p = static_cast<double>(std::max<int64_t>(0, job));
  const double own = p / rates.a;  // the job's run time while packed
  const double overlap = partner < 0 ? own : std::min(own, static_cast<double>(partner) / rates.b);
  return own - p + overlap * (1.0 - rates.b);
}

JobIndex PartnerCandidates::TakeAt(std::vector<const JobView*>& list, int32_t gpus, size_t i) {
  const JobIndex partner = list[i]->index;
  list[i] = nullptr;
  --available_;
  size_t& ff = first_free_[gpus];
  while (ff < list.size() && list[ff] == nullptr) ++ff;
  failed_.clear();
  return partner;
}

JobIndex PartnerCandidates::Take(const JobView& job, int64_t job_priority,
                                 const std::function<int64_t(JobIndex)>& priority_of,
                                 PackingCache& cache, const PackingRules& rules, int max_checks) {
  auto it = by_gpus_.find(job.gpus());
  if (it == by_gpus_.end()) return kNoJob;
  const int32_t workload = cache.Workload(job);
  if (auto f = failed_.find({workload, job.gpus()});
      f != failed_.end() && job_priority >= f->second)
    return kNoJob;
  auto& list = it->second;
  const int job_score = cache.ShareScore(job);
  int checks = 0;
  std::optional<size_t> best;  // least_slowdown: the candidate of least PairingLoss so far
  double best_loss = 0;
  for (size_t i = first_free_[job.gpus()]; i < list.size() && checks < max_checks; ++i) {
    const JobView* r = list[i];
    if (r == nullptr) continue;
    ++checks;
    if (job.record->gmem_mib + r->record->gmem_mib > rules.gpu_memory_mib) continue;
    if (job_score + cache.ShareScore(*r) > rules.max_share_score) continue;
    const int64_t rp = priority_of(r->index);
    if (rp >= 0 && static_cast<double>(job_priority) > rules.max_priority_ratio * rp) continue;
    const PairRates rates = cache.Rates(job, *r);
    if (rates.a < rules.min_rate || rates.b < rules.min_rate ||
        rates.a + rates.b < rules.min_combined_rate)
      continue;
    if (!rules.least_slowdown) return TakeAt(list, job.gpus(), i);
    const double loss = PairingLoss(job_priority, rp, rates);
    if (!best || loss < best_loss) {
      best = i;
      best_loss = loss;
    }
  }
  if (best) return TakeAt(list, job.gpus(), *best);
  auto [f, inserted] = failed_.emplace(std::make_pair(workload, job.gpus()), job_priority);
  if (!inserted) f->second = std::min(f->second, job_priority);
  return kNoJob;
}

LucidPolicy::LucidPolicy(const PolicyConfig& config)
    : config_(config),
      index_([this](const JobView& v, SimTime now) {
        return std::make_pair(Priority(v, now), int64_t{0});
      }),
      model_(config.colocation ? config.colocation : &fallback_model_),
      cache_(*model_) {}

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
  index_.Update(in);
  int64_t wanted = 0;
  for (const JobView& v : in.pending) wanted += v.gpus();
  FreeMap free = *in.partition.free;
  const bool packing = wanted > free.total_free();
  PartnerCandidates partners(in.running);
  auto priority_of = [this](JobIndex j) {
    return static_cast<size_t>(j) < priority_.size() ? priority_[j] : int64_t{-1};
  };
  int skipped = 0;
  index_.ForEach([&](const JobView& v, bool* erase) {
    if (packing && v.gpus() <= in.partition.gpus_per_node && !partners.empty()) {
      const JobIndex partner = partners.Take(v, priority_of(v.index), priority_of, cache_, rules_);
      if (partner != kNoJob) {
        Placement pl;
        pl.share_with = partner;
        d.start.push_back({v.index, std::move(pl)});
        *erase = true;
        return true;
      }
    }
    if (auto pl = Place(config_.placement, v.gpus(), free)) {
      d.start.push_back({v.index, std::move(*pl)});
      *erase = true;
      return true;
    }
    // Strict order without packing; with packing go on while anything could still start, for
    // at most kScanDepth jobs past the first that did not start (as Slurm bounds its queue walk
    // with default_queue_depth / bf_max_job_test), so a call stays cheap under a long queue.
    return packing && (free.total_free() > 0 || !partners.empty()) && ++skipped <= kScanDepth;
  });
  return d;
}

}  // namespace schedmate::policy
