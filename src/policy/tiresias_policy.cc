#include "policy/tiresias_policy.h"

#include <algorithm>

#include "policy/placer.h"

namespace schedmate::policy {

void TiresiasPolicy::AddPending(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) >= views_.size()) views_.resize(v.index + 1);
  views_[v.index] = v;
  const int q = v.AttainedGpuSecondsAt(now) > tc_.threshold_gpu_seconds ? 1 : 0;
  pending_[q].insert({v.record->submit.micros(), v.status->queue_seq, v.index});
}

void TiresiasPolicy::AddRunning(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) >= views_.size()) views_.resize(v.index + 1);
  views_[v.index] = v;
  max_run_seq_ = std::max(max_run_seq_, v.status->run_seq);
  const Key k{v.record->submit.micros(), v.status->run_seq, v.index};
  if (v.AttainedGpuSecondsAt(now) > tc_.threshold_gpu_seconds) {
    running_[1].insert(k);
    return;
  }
  running_[0].insert(k);
  // First instant at which attained GPU-seconds exceed the threshold:
  // attained_us + gpus * (t - updated) >= (threshold + 1) * 1e6.
  const JobStatus& s = *v.status;
  const int64_t need = (tc_.threshold_gpu_seconds + 1) * 1'000'000 - s.attained_gpu_us;
  const int64_t g = std::max<int64_t>(1, s.gpus);
  const int64_t dt = (need + g - 1) / g;
  crossings_.push({s.updated + Duration::Micros(std::max<int64_t>(0, dt)), s.run_seq, v.index});
}

bool TiresiasPolicy::PendingStale(const Key& k) const {
  const JobStatus& s = *views_[std::get<2>(k)].status;
  return s.state != RunState::kPending || s.queue_seq != std::get<1>(k);
}

bool TiresiasPolicy::RunningStale(const Key& k) const {
  const JobStatus& s = *views_[std::get<2>(k)].status;
  return s.state != RunState::kRunning || s.run_seq != std::get<1>(k);
}

Decisions TiresiasPolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  if (in.first_call || in.delta == nullptr) {
    for (auto& s : pending_) s.clear();
    for (auto& s : running_) s.clear();
    crossings_ = {};
    max_run_seq_ = 0;
    for (const JobView& v : in.pending) AddPending(v, in.now);
    for (const JobView& v : in.running) AddRunning(v, in.now);
  } else {
    const size_t k = in.delta->entered_pending.size();
    for (size_t i = in.pending.size() - std::min(k, in.pending.size()); i < in.pending.size(); ++i)
      AddPending(in.pending[i], in.now);
    // Jobs started since the last call are the tail of the running span (start order).
    size_t first_new = in.running.size();
    while (first_new > 0 && in.running[first_new - 1].status->run_seq > max_run_seq_) --first_new;
    for (size_t i = first_new; i < in.running.size(); ++i) AddRunning(in.running[i], in.now);
  }
  // Demote running jobs that crossed the threshold.
  while (!crossings_.empty() && crossings_.top().time <= in.now) {
    const Crossing c = crossings_.top();
    crossings_.pop();
    const Key k{views_[c.job].record->submit.micros(), c.run_seq, c.job};
    if (running_[0].erase(k) > 0 && !RunningStale(k)) running_[1].insert(k);
  }

  int64_t quota = in.partition.total_gpus;
  std::vector<JobIndex> selected;
  std::vector<JobIndex> preempt;
  for (int q = 0; q < 2; ++q) {
    auto rit = running_[q].begin();
    auto pit = pending_[q].begin();
    while (true) {
      while (rit != running_[q].end() && RunningStale(*rit)) rit = running_[q].erase(rit);
      while (pit != pending_[q].end() && PendingStale(*pit)) pit = pending_[q].erase(pit);
      const bool has_r = rit != running_[q].end();
      const bool has_p = pit != pending_[q].end() && quota > 0;
      if (!has_r && !has_p) break;
      // Running before pending on equal submit time.
      const bool take_running = has_r && (!has_p || std::get<0>(*rit) <= std::get<0>(*pit));
      if (take_running) {
        const JobView& v = views_[std::get<2>(*rit)];
        if (v.gpus() <= quota) {
          quota -= v.gpus();
        } else {
          preempt.push_back(v.index);
        }
        ++rit;
      } else {
        const JobView& v = views_[std::get<2>(*pit)];
        if (v.gpus() <= quota) {
          quota -= v.gpus();
          selected.push_back(v.index);
        }
        ++pit;
      }
    }
  }
  FreeMap free = *in.partition.free;
  for (JobIndex j : preempt) {
    Release(views_[j].status->placement, free);
    d.preempt.push_back({j, "tiresias: jobs with less attained service need the GPUs"});
  }
  for (JobIndex j : selected) {
    if (auto pl = Place(config_.placement, views_[j].gpus(), free)) {
      d.start.push_back({j, std::move(*pl)});
    }
  }
  // Wake up for the next demotion of a job that is still running.
  while (!crossings_.empty()) {
    const Crossing& c = crossings_.top();
    const JobStatus& s = *views_[c.job].status;
    if (s.state == RunState::kRunning && s.run_seq == c.run_seq) {
      d.wake_at = c.time;
      break;
    }
    crossings_.pop();
  }
  return d;
}

}  // namespace schedmate::policy
