#pragma once
// SlurmPolicy ("slurm"): Slurm's multifactor priority plus its backfill scheduler, configured from
// the site's slurm.conf (SlurmConfig), so what-if questions are answered for the scheduler the
// site runs rather than a research policy.
//
// Modelled
//  - Priority (priority/multifactor), recomputed every PriorityCalcPeriod (a job entering the
//    queue gets its priority at once), as Slurm's decay thread does:
//      priority = W_age * age + W_fairshare * fairshare + W_jobsize * size
//               + W_partition * partition + W_qos * qos          (each factor in [0, 1])
//    age = min(now - eligible, PriorityMaxAge) / PriorityMaxAge;
//    fairshare = 2^(-usage / shares) (Slurm's classic formula, flat tree): usage = the user's
//      GPU-seconds (finished jobs, decayed with PriorityDecayHalfLife, plus running jobs'
//      attained service) over all users' usage; shares = 1 / users seen so far (one equal share
//      each; the user is the account when the trace has no user);
//    size = GPUs / partition GPUs (PriorityFavorSmall=YES: 1 - that);
//    partition = PriorityJobFactor / the largest one (1 when none is set);
//    qos = QOS priority / the largest one (0 unless given, see SlurmConfig::qos_priority).
//    priority/basic: order by eligible time (FIFO).
//  - Main scheduler: jobs in priority order start while they fit; it stops at the first job
//    that does not (Slurm's per-partition rule); runs on every event (submit, finish).
//  - Backfill (sched/backfill) every bf_interval when the queue or running set changed since the
//    last pass: a pass walks up to bf_max_job_test pending jobs in priority order and plans each
//    on a timeline of free GPUs built from TIME LIMITS: a running job frees its GPUs at start +
//    its limit, never at its true end (which the planner cannot know); a job without a limit is
//    planned with kNoLimitPlan. A job starts now when its whole limit fits now without delaying
//    any earlier reservation (and its GPUs can be placed on nodes); otherwise it gets a
//    reservation at its earliest fitting start if that is within bf_window. The job then runs
//    its true duration (its limit caps it: callers cap durations at limits).
//  - sched/builtin: the main scheduler only (strict priority order, no backfill).
//  - Live estimates: SlurmConfig::given_priority (Slurm's own numbers, fixed) replaces the
//    formula for the jobs it lists; SlurmConfig::excluded_nodes keeps a job off its excluded
//    nodes when it is placed (the backfill timeline still counts all GPUs).
// Not modelled: fair-share trees and FAIR_TREE ranks, association limits (GrpTRES, MaxJobs),
//  QOS preemption, TRES billing weights (size uses GPUs, not CPUs or nodes), reservations,
//  licences, node features/constraints, memory, job dependencies beyond the Eligible time, the
//  main scheduler's queue depth and time budget, bf_continue (a pass is instantaneous here, so
//  it has nothing to continue), bf_max_job_user/part, heterogeneous nodes (the planner counts
//  GPUs; placement on nodes is checked only for jobs starting now), partitions with node
//  subsets (one pool of nodes is shared by all partitions; with several VCs each VC gets its own
//  instance, so fair share is then per VC).
// Ties: equal priority -> earlier eligible time -> lower job index (trace order), as Slurm
//  breaks them by submit time and then job id.
// Never preempts. Deterministic: no randomness.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policy/placer.h"
#include "policy/policy_registry.h"
#include "policy/scheduling_policy.h"
#include "policy/slurm_config.h"

namespace schedmate::policy {

// Plan length of a job without a time limit (Slurm would use the partition's MaxTime; INFINITE
// means it never frees its GPUs within any window).
inline constexpr Duration kNoLimitPlan = Duration::Hours(365 * 24);

class SlurmPolicy : public SchedulingPolicy {
 public:
  SlurmPolicy(const PolicyConfig& base, const SlurmConfig& config);
  std::string_view Name() const override { return "slurm"; }
  Decisions Schedule(const SchedulingInput& input) override;
  void OnJobFinished(const JobRecord& job, SimTime finish) override;

  // Counters for tests and reports.
  int64_t backfill_passes() const { return backfill_passes_; }
  int64_t backfill_starts() const { return backfill_starts_; }

 private:
  struct Entry {
    double priority = 0;
    int64_t eligible_us = 0;
    JobIndex index = kNoJob;
    const JobRecord* record = nullptr;
    int32_t gpus = 0;
    int32_t user = 0;  // UserId()
  };
  static bool Before(const Entry& a, const Entry& b);
  double Priority(const Entry& e, SimTime now, int64_t partition_gpus) const;
  double FairShare(int32_t user) const;
  int32_t UserId(const JobRecord& job);
  void Recalculate(const SchedulingInput& input);
  void Insert(const JobView& view, const SchedulingInput& input);
  void DecayUsage(SimTime now);
  // Places e's GPUs on `free` (taking them), avoiding its excluded nodes; nullopt if they do not
  // fit.
  std::optional<Placement> PlaceJob(const Entry& e, FreeMap& free) const;
  // Backfill over `order` (jobs not started by the main pass), starting what fits now.
  void Backfill(const SchedulingInput& input, FreeMap& free, std::vector<StartDecision>& starts);

  PolicyConfig base_;
  SlurmConfig config_;
  std::vector<Entry> queue_;     // pending jobs, priority order
  std::vector<uint8_t> queued_;  // by JobIndex: in queue_
  SimTime next_calc_ = SimTime::Zero();
  // Fair share, by UserId(): decayed usage (GPU-seconds) of finished jobs as of usage_time_, and
  // the attained service of running jobs at the last recalculation.
  std::unordered_map<std::string, int32_t> user_ids_;
  std::vector<double> usage_;
  std::vector<double> running_usage_;
  double total_usage_ = 0;
  double running_total_ = 0;
  SimTime usage_time_ = SimTime::Zero();
  int64_t max_partition_factor_ = 1;
  int64_t max_qos_priority_ = 0;
  // Backfill bookkeeping.
  SimTime last_backfill_ = SimTime::Zero();
  bool backfill_ran_ = false;
  uint64_t signature_ = 0;  // of the pending/running sets at the last pass
  std::vector<std::pair<int64_t, int32_t>> main_started_;  // (plan length, GPUs) this call
  int64_t backfill_passes_ = 0;
  int64_t backfill_starts_ = 0;
};

}  // namespace schedmate::policy
