#pragma once
// LucidPolicy ("lucid"): interference-aware job packing with a duration-ordered queue, designed
// from the Lucid paper (ASPLOS'23) and its artifact's policy; not a line-by-line port.
// Rationale: many DL jobs leave their GPUs half idle; packing two compatible jobs on the same
// GPUs raises throughput, but only if they do not slow each other much.
//  - Order: estimated service, estimate x GPUs (estimator, else JobRecord::estimate, else 1 h),
//    then queue-entry order (Lucid orders by its EBM estimate x gpu_num).
//  - Packing is switched on only under contention: when the GPUs wanted by pending jobs exceed
//    the free GPUs (Lucid switches sharing off when its throughput predictor expects a light
//    load). Off: strict order, stop at the first job that does not fit.
//  - On: each pending job of at most one node first looks for a partner among running jobs that
//    run alone, in start order: same GPU count, GPU memory of both within 24 GiB, Lucid sharing
//    scores summing to <= 2, its own estimated service at most twice the partner's (so a long
//    job does not ride on a short one), and measured co-located speeds that are good: each >= 0.5
//    and together >= 1.1 (more work done than alone). Otherwise it is placed alone if it fits;
//    the walk does not stop at jobs that do not fit.
//  - Never preempts. The co-located pair runs at the measured rates until one ends; the other
//    then runs alone again (the simulator handles that).
// Not modelled: Lucid's profiling cluster (new jobs briefly profiled on reserved nodes).

#include <vector>

#include "policy/colocation_model.h"
#include "policy/policy_registry.h"
#include "policy/queue_order_policy.h"

namespace schedmate::policy {

struct PackingRules {
  double gpu_memory_mib = 24576;  // RTX 3090, Lucid's benchmark GPU
  int max_share_score = 2;
  double max_priority_ratio = 2.0;
  double min_rate = 0.5;
  double min_combined_rate = 1.1;
};

// Finds a running job `job` may share GPUs with under `rules`; kNoJob if none. `taken` marks
// jobs already paired in this call (by index; may be shorter than the index).
JobIndex FindPackingPartner(const JobView& job, int64_t job_priority,
                            std::span<const JobView> running,
                            const std::vector<int64_t>& priority_by_index,
                            const std::vector<char>& taken, const ColocationModel& model,
                            const PackingRules& rules);

class LucidPolicy : public SchedulingPolicy {
 public:
  explicit LucidPolicy(const PolicyConfig& config);
  std::string_view Name() const override { return "lucid"; }
  Decisions Schedule(const SchedulingInput& input) override;

 private:
  int64_t Priority(const JobView& v, SimTime now);
  PolicyConfig config_;
  ColocationModel fallback_model_;
  const ColocationModel* model_;
  PackingRules rules_;
  std::vector<int64_t> priority_;  // by job index, -1 = unknown
};

}  // namespace schedmate::policy
