#pragma once
// PendingIndex: an ordered index of a partition's pending jobs kept up to date from
// SchedulingInput::delta, so policies need not sort the whole queue on every call.
// Keys are computed once, when a job enters the pending list (by the caller's key function), and
// end with the job's queue-entry sequence number, which breaks every tie. Entries of jobs that
// left the pending list (started or rejected) go stale and are dropped lazily while iterating.
// Not thread-safe; one per policy instance (= per partition).

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "policy/scheduling_policy.h"

namespace schedmate::policy {

struct QueueKey {
  int64_t primary = 0;
  int64_t secondary = 0;
  int64_t seq = 0;  // JobStatus::queue_seq
  JobIndex job = kNoJob;
  auto operator<=>(const QueueKey&) const = default;
};

class PendingIndex {
 public:
  using KeyFn = std::function<std::pair<int64_t, int64_t>(const JobView&, SimTime)>;
  explicit PendingIndex(KeyFn key) : key_(std::move(key)) {}

  // Brings the index up to date with `input` (rebuilds on the first call or without a delta).
  void Update(const SchedulingInput& input);
  // Visits live entries in key order until `visit` returns false. `visit` must not touch the
  // index; it may ask for the current entry to be dropped by setting *erase.
  void ForEach(const std::function<bool(const JobView&, bool* erase)>& visit);
  const JobView& View(JobIndex j) const { return views_[j]; }

 private:
  void Insert(const JobView& v, SimTime now);
  bool Stale(const QueueKey& k) const;
  KeyFn key_;
  std::set<QueueKey> queue_;
  std::vector<JobView> views_;
};

}  // namespace schedmate::policy
