#pragma once
// FifoPolicy ("fifo"): first come, first served, strictly in order, no backfilling.
// Rationale: the baseline every cluster scheduler is compared with (Lucid's FIFO). Order: submit
// time, then the order jobs entered the queue (trace order for equal submit times). The walk
// stops at the first job that does not fit, so a large job at the head blocks the queue
// (head-of-line blocking) exactly as in Lucid. Never preempts.

#include "policy/queue_order_policy.h"

namespace schedmate::policy {

class FifoPolicy : public QueueOrderPolicy {
 public:
  explicit FifoPolicy(const PolicyConfig& config) : QueueOrderPolicy(config, /*blocking=*/true) {}
  std::string_view Name() const override { return "fifo"; }

 protected:
  std::pair<int64_t, int64_t> KeyOf(const JobView& job, SimTime) override {
    return {job.record->submit.micros(), 0};
  }
};

}  // namespace schedmate::policy
