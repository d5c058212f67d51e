#pragma once
// SjfPolicy ("sjf"): shortest job first with oracle durations (JobRecord::duration), no
// backfilling, never preempts. Rationale: the non-preemptive upper bound on what duration
// knowledge buys (Lucid's SJF). Order: duration, then queue-entry order (Lucid sorts its queue in
// place with a stable sort, which amounts to the same tie rule). Stops at the first job that
// does not fit.

#include "policy/queue_order_policy.h"

namespace schedmate::policy {

class SjfPolicy : public QueueOrderPolicy {
 public:
  explicit SjfPolicy(const PolicyConfig& config) : QueueOrderPolicy(config, /*blocking=*/true) {}
  std::string_view Name() const override { return "sjf"; }

 protected:
  std::pair<int64_t, int64_t> KeyOf(const JobView& job, SimTime) override {
    return {job.record->duration.micros(), 0};
  }
};

}  // namespace schedmate::policy
