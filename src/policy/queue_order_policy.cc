#include "policy/queue_order_policy.h"

namespace schedmate::policy {

void QueueOrderPolicy::Insert(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) >= views_.size()) views_.resize(v.index + 1);
  views_[v.index] = v;
  auto [a, b] = KeyOf(v, now);
  queue_.insert(QueueKey{a, b, v.status->queue_seq, v.index});
}

bool QueueOrderPolicy::Stale(const QueueKey& k) const {
  const JobStatus& s = *views_[k.job].status;
  return s.state != RunState::kPending || s.queue_seq != k.seq;
}

Decisions QueueOrderPolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  if (in.first_call || in.delta == nullptr) {
    queue_.clear();
    for (const JobView& v : in.pending) Insert(v, in.now);
  } else {
    // Jobs that entered since the last call are the tail of the pending span, in entry order
    // (only this policy's decisions take jobs off the pending list).
    const auto& entered = in.delta->entered_pending;
    const size_t k = entered.size();
    bool tail_ok = k <= in.pending.size();
    for (size_t i = 0; tail_ok && i < k; ++i) {
      tail_ok = in.pending[in.pending.size() - k + i].index == entered[i];
    }
    if (tail_ok) {
      for (size_t i = in.pending.size() - k; i < in.pending.size(); ++i)
        Insert(in.pending[i], in.now);
    } else {
      queue_.clear();
      for (const JobView& v : in.pending) Insert(v, in.now);
    }
  }
  FreeMap free = *in.partition.free;
  std::vector<JobView> special;
  if (OverrideOrder(in, special)) {
    for (const JobView& v : special) {
      auto pl = Place(config_.placement, v.gpus(), free);
      if (pl) {
        d.start.push_back({v.index, std::move(*pl)});  // its index entry goes stale
      } else if (blocking_) {
        break;
      }
    }
    return d;
  }
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (Stale(*it)) {
      it = queue_.erase(it);
      continue;
    }
    const JobView& v = views_[it->job];
    auto pl = Place(config_.placement, v.gpus(), free);
    if (pl) {
      d.start.push_back({v.index, std::move(*pl)});
      it = queue_.erase(it);
    } else if (blocking_) {
      break;
    } else {
      ++it;
    }
  }
  return d;
}

}  // namespace schedmate::policy
