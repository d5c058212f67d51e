#include "policy/pending_index.h"

namespace schedmate::policy {

void PendingIndex::Insert(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) >= views_.size()) views_.resize(v.index + 1);
  views_[v.index] = v;
  auto [a, b] = key_(v, now);
  queue_.insert(QueueKey{a, b, v.status->queue_seq, v.index});
}

bool PendingIndex::Stale(const QueueKey& k) const {
  const JobStatus& s = *views_[k.job].status;
  return s.state != RunState::kPending || s.queue_seq != k.seq;
}

void PendingIndex::Update(const SchedulingInput& in) {
  bool rebuild = in.first_call || in.delta == nullptr;
  if (!rebuild) {
    // Jobs that entered since the last call are the tail of the pending span, in entry order
    // (only the policy's own decisions take jobs off the pending list).
    const auto& entered = in.delta->entered_pending;
    const size_t k = entered.size();
    rebuild = k > in.pending.size();
    for (size_t i = 0; !rebuild && i < k; ++i) {
      rebuild = in.pending[in.pending.size() - k + i].index != entered[i];
    }
    if (!rebuild) {
      for (size_t i = in.pending.size() - k; i < in.pending.size(); ++i) {
        Insert(in.pending[i], in.now);
      }
      return;
    }
  }
  queue_.clear();
  for (const JobView& v : in.pending) Insert(v, in.now);
}

void PendingIndex::ForEach(const std::function<bool(const JobView&, bool* erase)>& visit) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (Stale(*it)) {
      it = queue_.erase(it);
      continue;
    }
    bool erase = false;
    const bool go_on = visit(views_[it->job], &erase);
    it = erase ? queue_.erase(it) : std::next(it);
    if (!go_on) break;
  }
}

}  // namespace schedmate::policy
