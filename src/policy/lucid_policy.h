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
//    and together >= 1.1 (more work done than alone). Only the first 32 candidates of the job's
//    GPU count are examined, to bound the cost of a call under a long queue. Otherwise it is placed
//    alone if it fits; the walk does not stop at jobs that do not fit.
//  - Never preempts. The co-located pair runs at the measured rates until one ends; the other
//    then runs alone again (the simulator handles that).
// Not modelled: Lucid's profiling cluster (new jobs briefly profiled on reserved nodes).

#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "policy/colocation_model.h"
#include "policy/pending_index.h"
#include "policy/policy_registry.h"

namespace schedmate::policy {

// How many queued jobs past the first one that could not start a packing/backfilling walk looks
// at per call.
inline constexpr int kScanDepth = 256;

struct PackingRules {
  double gpu_memory_mib = 24576;  // RTX 3090, Lucid's benchmark GPU
  int max_share_score = 2;
  double max_priority_ratio = 2.0;
  double min_rate = 0.5;
  double min_combined_rate = 1.1;
  // Among the candidates examined (PartnerCandidates::Take), take the one whose pairing adds the
  // least expected completion time to the two jobs (PairingLoss), ties to the earliest started;
  // false: Lucid's rule, the earliest started candidate that passes the checks above.
  bool least_slowdown = false;
};

// Expected completion time that packing a job of estimated service `job` with a running job of
// estimated service `partner` (< 0: unknown, taken as longer) at `rates` adds, in the services'
// unit (both jobs hold the same GPUs): the job runs job / a instead of job, and the partner loses
// (1 - b) of every second they overlap, for at most the job's job / a.
double PairingLoss(int64_t job, int64_t partner, PairRates rates);

// Per-policy memo of what packing decisions need about jobs: a workload id per job (model,
// dataset, batch size, amp, utilisation, GPU memory), its sharing score, and the model's rates
// per pair of workloads, so a call does not repeat string-keyed lookups.
class PackingCache {
 public:
  explicit PackingCache(const ColocationModel& model) : model_(model) {}
  int32_t Workload(const JobView& v);
  int ShareScore(const JobView& v) { return scores_[Workload(v)]; }
  // Rates of `a` and `b` sharing GPUs (a's first).
  PairRates Rates(const JobView& a, const JobView& b);

 private:
  using Key = std::tuple<std::string, std::string, int32_t, int32_t, double, double>;
  const ColocationModel& model_;
  std::map<Key, int32_t> ids_;
  std::vector<int32_t> by_job_;  // -1 unknown
  std::vector<int> scores_;      // by workload id
  std::map<std::pair<int32_t, int32_t>, PairRates> rates_;
};

// Running jobs that could take a co-runner, grouped by GPU count, in start order; built once per
// call. Entries paired during the call are marked taken.
class PartnerCandidates {
 public:
  explicit PartnerCandidates(std::span<const JobView> running);
  // The first candidate `job` may share with under `rules` (at most `max_checks` candidates of
  // its GPU count are examined, bounding the cost under long queues); marks it taken. kNoJob if
  // none. `priority_of(j)` is a job's estimated service (< 0 unknown). A workload that found no
  // partner at some priority is not searched again in this call for that priority or higher
  // until a candidate is taken (the answer could only be "no" again).
  JobIndex Take(const JobView& job, int64_t job_priority,
                const std::function<int64_t(JobIndex)>& priority_of, PackingCache& cache,
                const PackingRules& rules, int max_checks = 32);
  bool empty() const { return available_ == 0; }

 private:
  JobIndex TakeAt(std::vector<const JobView*>& list, int32_t gpus, size_t i);
  std::map<int32_t, std::vector<const JobView*>> by_gpus_;
  std::map<int32_t, size_t> first_free_;  // leading taken entries skipped
  // (workload, gpus) -> lowest priority that found no partner.
  std::map<std::pair<int32_t, int32_t>, int64_t> failed_;
  size_t available_ = 0;
};

class LucidPolicy : public SchedulingPolicy {
 public:
  explicit LucidPolicy(const PolicyConfig& config);
  std::string_view Name() const override { return "lucid"; }
  Decisions Schedule(const SchedulingInput& input) override;

 private:
  int64_t Priority(const JobView& v, SimTime now);
  PolicyConfig config_;
  PendingIndex index_;
  ColocationModel fallback_model_;
  const ColocationModel* model_;
  PackingCache cache_;
  PackingRules rules_;
  std::vector<int64_t> priority_;  // by job index, -1 = unknown
};

}  // namespace schedmate::policy
