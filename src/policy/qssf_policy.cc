#include "policy/qssf_policy.h"

#include <algorithm>

namespace schedmate::policy {

std::pair<int64_t, int64_t> QssfPolicy::KeyOf(const JobView& job, SimTime now) {
  if (static_cast<size_t>(job.index) >= priority_.size()) priority_.resize(job.index + 1, -1);
  int64_t& p = priority_[job.index];
  if (p < 0) {
    Duration est = Duration::Hours(1);
    if (config().estimator != nullptr) {
      est = config().estimator->Estimate(*job.record, now).duration;
    } else if (job.record->estimate) {
      est = *job.record->estimate;
    }
    // Negative estimates (regression output) count as zero here; the estimates reader applies
    // Lucid's "negative -> 1000 s" rule before we see them.
    p = std::max<int64_t>(0, est.micros()) * job.gpus();
  }
  return {p, job.gpus()};
}

bool QssfPolicy::OverrideOrder(const SchedulingInput& in, std::vector<JobView>& order) {
  if (!config().lucid_compat || in.pending.empty()) return false;
  for (const JobView& v : in.pending) {
    if (v.status->enqueued != in.now) return false;
  }
  order.assign(in.pending.begin(), in.pending.end());  // already in queue-entry order
  std::stable_sort(order.begin(), order.end(),
                   [](const JobView& a, const JobView& b) { return a.gpus() < b.gpus(); });
  return true;
}

}  // namespace schedmate::policy
