#pragma once
// QssfPolicy ("qssf"): quasi-shortest-service-first (Helios, SC'21; Lucid's baseline).
// Rationale: without oracle durations, order by *estimated* service, estimate x GPUs, so small
// short jobs go first. The estimate comes from the configured DurationEstimator (e.g. "file":
// the --estimates column, Lucid's per-GPU EBM/LightGBM value) or, without one, from
// JobRecord::estimate, else 1 h. It is taken once, when the job enters the queue.
// Order: priority = estimate x GPUs, then GPUs, then queue-entry order (Lucid's stable in-place
// sorts by gpu_num then priority amount to this). No backfilling; never preempts.
// Lucid-compatible mode keeps one more Lucid rule: when every queued job arrived in the current
// step, Lucid orders by GPU count only (it assigns priorities only when older jobs wait).

#include <vector>

#include "policy/queue_order_policy.h"

namespace schedmate::policy {

class QssfPolicy : public QueueOrderPolicy {
 public:
  explicit QssfPolicy(const PolicyConfig& config) : QueueOrderPolicy(config, /*blocking=*/true) {}
  std::string_view Name() const override { return "qssf"; }

 protected:
  std::pair<int64_t, int64_t> KeyOf(const JobView& job, SimTime now) override;
  bool OverrideOrder(const SchedulingInput& input, std::vector<JobView>& order) override;

 private:
  std::vector<int64_t> priority_;  // by job index; -1 = not yet estimated
};

}  // namespace schedmate::policy
