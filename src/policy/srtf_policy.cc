#include "policy/srtf_policy.h"

#include <algorithm>

#include "policy/placer.h"

namespace schedmate::policy {

void SrtfPolicy::Insert(const JobView& v) {
  if (static_cast<size_t>(v.index) >= views_.size()) views_.resize(v.index + 1);
  views_[v.index] = v;
  pending_.insert({v.status->remaining.micros(), v.status->queue_seq, v.index});
}

Decisions SrtfPolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  if (in.first_call || in.delta == nullptr) {
    pending_.clear();
    for (const JobView& v : in.pending) Insert(v);
  } else {
    const size_t k = in.delta->entered_pending.size();
    for (size_t i = in.pending.size() - std::min(k, in.pending.size()); i < in.pending.size(); ++i)
      Insert(in.pending[i]);
  }
  struct Run {
    int64_t remaining;
    int64_t seq;
    const JobView* view;
  };
  std::vector<Run> running;
  running.reserve(in.running.size());
  for (const JobView& v : in.running) {
    running.push_back({v.RemainingAt(in.now).micros(), v.status->run_seq, &v});
  }
  std::sort(running.begin(), running.end(), [](const Run& a, const Run& b) {
    return a.remaining != b.remaining ? a.remaining < b.remaining : a.seq < b.seq;
  });

  int64_t quota = in.partition.total_gpus;
  std::vector<const JobView*> selected;
  std::vector<JobIndex> preempt;
  auto pit = pending_.begin();
  size_t r = 0;
  while (r < running.size() || (pit != pending_.end() && quota > 0)) {
    // Drop index entries of jobs that are no longer pending (started or rejected).
    if (pit != pending_.end()) {
      const JobStatus& s = *views_[std::get<2>(*pit)].status;
      if (s.state != RunState::kPending || s.queue_seq != std::get<1>(*pit)) {
        pit = pending_.erase(pit);
        continue;
      }
    }
    const bool take_pending = pit != pending_.end() && quota > 0 &&
                              (r >= running.size() || std::get<0>(*pit) <= running[r].remaining);
    if (take_pending) {
      const JobView& v = views_[std::get<2>(*pit)];
      if (v.gpus() <= quota) {
        quota -= v.gpus();
        selected.push_back(&v);
      }
      ++pit;
    } else {
      const JobView& v = *running[r].view;
      if (v.gpus() <= quota) {
        quota -= v.gpus();
      } else {
        preempt.push_back(v.index);
      }
      ++r;
    }
  }
  FreeMap free = *in.partition.free;
  for (JobIndex j : preempt) {
    for (const JobView& v : in.running) {
      if (v.index == j) {
        Release(v.status->placement, free);
        break;
      }
    }
    d.preempt.push_back({j, "srtf: jobs with less remaining time need the GPUs"});
  }
  for (const JobView* v : selected) {
    if (auto pl = Place(config_.placement, v->gpus(), free)) {
      d.start.push_back({v->index, std::move(*pl)});
    }
  }
  return d;
}

}  // namespace schedmate::policy
