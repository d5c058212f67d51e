#pragma once
// ServiceStore: the companion's own durable tables (module "service" in the same database as the
// HistoryStore's jobs and predictions, SQLite or PostgreSQL: store/db.h): processed finished runs,
// failures with their diagnosis and captured log, every action with its reason and outcome, metric
// samples of running jobs, start-time estimates against actual starts, and small cursors (the
// jobcomp offset).
//
// Durability comes from the Db (SQLite's WAL, PostgreSQL's commit): what a call committed survives
// kill -9.
// Shared stores: with a fence set (SetFence, by the leader, leader.h) every action record and
// outcome is written in a transaction that first checks the lease still names this instance with
// this epoch; the epoch is stored with the action (the fencing token).
// Thread-safety: one ServiceStore per thread (it wraps one Db connection).
// Clusters (slurm.clusters): a ServiceStore reads and writes one cluster's rows (every row carries
// its cluster; several stores, one per cluster, may share a database and even a connection).
// Rows written before clusters existed belong to kDefaultCluster.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "service/ports.h"
#include "store/db.h"

namespace schedmate::service {

// The cluster of a configuration without slurm.clusters, and of rows older than clusters.
inline constexpr std::string_view kDefaultCluster = "default";
// Cluster names: 1..64 of [A-Za-z0-9_.-], starting with a letter or digit (they appear in SQL
// literals, metric labels, URLs and file names).
bool ValidClusterName(std::string_view name);
// 'name' as an SQL string literal (only for names ValidClusterName accepts).
std::string ClusterLiteral(std::string_view name);

// The "service" module's migrations, oldest first (tests open stores of earlier versions).
std::span<const store::Migration> ServiceMigrations();

struct FailureRecord {
  int64_t id = 0;
  std::string run_key;  // "<job id>@<start seconds>"
  std::string job_id;
  SimTime at;         // when schedmate handled it
  std::string state;  // Slurm's final state
  int32_t exit_code = 0;
  std::string node_list;
  FailureClass cls = FailureClass::kUnknown;  // stored by FailureClassName
  std::string category;
  std::string reason;
  int64_t evidence_line = 0;
  std::string evidence;
  std::string log_copy;  // path of the captured log ("" when none could be read)
  std::string engine;
  std::string checkpoint;  // where a retry should resume from, as the log names it ("" = none)
};

struct ActionRecord {
  int64_t id = 0;
  SimTime at;
  std::string job_id;
  std::string node;
  ActionKind kind = ActionKind::kNotifyUser;  // stored by ActionKindName (action.h)
  std::string reason;
  bool dry_run = false;
  // Stored by ActionOutcomeName. kInterrupted: recorded, then schedmate stopped before it
  // finished: never retried, may or may not have happened in Slurm.
  ActionOutcome outcome = ActionOutcome::kPlanned;
  std::string detail;  // for people: what was done ("requeued, attempt 1/3, ...") / why not
  // requeue only:
  int32_t attempt = 0;                     // 1-based retry number, 0 for other kinds
  int32_t budget = 0;                      // actions.retries_per_job when it was planned
  std::optional<Duration> delay;           // the backoff: release_at - at
  std::optional<SimTime> release_at;       // when the retry may start (now + backoff)
  std::vector<std::string> exclude_nodes;  // the ExcNodeList schedmate asked for
  std::string checkpoint;                  // resume point told to the user ("" = none)
  // Why a policy or the job's state said no (kSkipped), as a word: "stale", "disabled",
  // "already_drained", "drain_cap", "budget_used", "job_active", "job_gone",
  // "changed_by_someone", "no_store" (the budget could not be read), "" otherwise.
  std::string skip_reason;
  // notify_user only: what became of the same plan's requeue step, which the notice reports
  // (nullopt: the plan had none, or it had not run). Stored by ActionOutcomeName ('' = nullopt).
  std::optional<ActionOutcome> requeue_outcome;
  int64_t epoch = 0;  // the leader's lease epoch it was recorded under (0: not shared)
};

// The leadership a shared store's writer proves on every action write (leader.h).
struct LeaseFence {
  std::string holder;  // the instance id
  int64_t epoch = 0;
};

// One probe of a running job's GPUs (gpu_probe.h): the mean utilisation (0..1) over the GPUs
// that reported one, and how many did.
struct UsageSample {
  std::string job_id;
  SimTime at;
  int32_t gpus = 0;
  double gpu_util = 0;
};

struct MetricSample {
  std::string job_id;
  SimTime at;
  std::optional<int64_t> step;
  std::optional<double> loss;
  std::optional<double> step_time_s;
  std::optional<double> progress;
  std::optional<double> eta_s;
  bool stalled = false;
  bool slowdown = false;
};

struct StartEstimateRecord {
  std::string job_id;
  SimTime submit;
  SimTime first_at, first_start;       // first estimate made, and what it said
  SimTime last_at, last_start;         // latest
  std::optional<SimTime> slurm_start;  // Slurm's own expected start (squeue --start), latest
  std::optional<SimTime> actual_start;
};

// A pending job the order mode has looked at: its priority before schedmate changed anything
// (what a restore puts back) and what schedmate set since.
struct PriorityRecord {
  std::string job_id;
  SimTime submit;                  // a reused job id with another submit time is another job
  int64_t original = 0;            // Slurm's priority when schedmate first saw the job pending
  int64_t nice = 0;                // the job's Nice then
  bool explicit_priority = false;  // an operator/user had set the priority (not Slurm's plugin)
  std::string left_alone;          // why schedmate never reorders it ("" = it may)
  std::optional<int64_t> ours;     // the value schedmate last set (nullopt: never changed)
  SimTime first_seen;
  // "" while schedmate's value stands; "restoring" while a hold/release restore runs (a crash
  // there leaves the job held: the next restore releases it); after a restore: "restored",
  // "not_needed" (started, ended or gone), "skipped" (someone else changed it since), "failed".
  std::string restore;
};

class ServiceStore {
 public:
  // Applies the "service" migrations to `db` (not owned; must outlive the store); the store
  // reads and writes the rows of `cluster` (kInvalidArgument for a name ValidClusterName refuses).
  static Result<std::unique_ptr<ServiceStore>> Attach(store::Db& db,
                                                      std::string_view cluster = kDefaultCluster);
  const std::string& cluster() const { return cluster_; }

  // With a fence, AddAction and UpdateActionResult refuse (kFailedPrecondition "not the leader")
  // unless the lease row still has this holder and epoch; nullopt: no check (single instance).
  void SetFence(std::optional<LeaseFence> fence) { fence_ = std::move(fence); }

  Result<std::optional<std::string>> GetValue(const std::string& key);
  Status SetValue(const std::string& key, const std::string& value);

  Result<bool> IsRunHandled(const std::string& run_key);
  // Claims a run (recorded "not done"); FinishRun marks its handling complete.
  Status MarkRunHandled(const std::string& run_key, const std::string& job_id,
                        const std::string& state);
  Status FinishRun(const std::string& run_key);
  // Drops the claims of runs whose handling never finished (a leader died mid-way), so the new
  // leader handles them again. Returns how many.
  Result<int64_t> ReleaseUnfinishedRuns();

  Result<int64_t> AddFailure(const FailureRecord& f);
  Result<int64_t> AddAction(const ActionRecord& a);
  // Outcome, detail, skip_reason and exclude_nodes of action `a.id` (what the execution found).
  Status UpdateActionResult(const ActionRecord& a);
  // Most recent first, at most `limit`. An action row whose kind or outcome this build does not
  // know is kDataLoss naming the row and the value.
  Result<std::vector<FailureRecord>> RecentFailures(int64_t limit);
  Result<std::vector<ActionRecord>> RecentActions(int64_t limit);
  // True when schedmate's latest drain of `node` (done, or interrupted: it may have happened) has
  // not been followed by a resume of its own. Dry-run drains never count.
  Result<bool> NodeDrainedBySchedmate(const std::string& node);
  // Requeues schedmate did (done, planned or interrupted) for one job.
  Result<int64_t> CountRequeues(const std::string& job_id);
  // Marks actions left "planned" by a process that died between recording and finishing them as
  // "interrupted" (called once at start-up, before any new action). Returns how many.
  Result<int64_t> MarkInterruptedActions();
  // Actions still "planned" (intents not finished), oldest first.
  Result<std::vector<ActionRecord>> OpenIntents();

  // Order mode (queue_orderer.h): originals and schedmate's values, kept across restarts.
  Result<std::optional<PriorityRecord>> FindPriority(const std::string& job_id);
  Status PutPriority(const PriorityRecord& r);  // insert or replace
  // Records a value schedmate set (and clears any restore outcome: it is outstanding again).
  Status SetOurPriority(const std::string& job_id, int64_t value);
  Status SetPriorityRestore(const std::string& job_id, const std::string& outcome);
  // Records with a value of schedmate's not yet restored ("" or "restoring"), oldest first.
  Result<std::vector<PriorityRecord>> OutstandingPriorities();

  Status AddMetrics(const std::vector<MetricSample>& samples);  // one transaction
  // Oldest first, the latest `limit` samples.
  Result<std::vector<MetricSample>> MetricSeries(const std::string& job_id, int64_t limit);

  Status AddUsage(const UsageSample& u);  // upsert by (job, time)
  // The mean of the job's usage samples in [since, until) (probes are evenly spaced, so this is
  // the time average); nullopt when none.
  Result<std::optional<double>> MeanGpuUtilisation(const std::string& job_id, SimTime since,
                                                   SimTime until);

  Status PutStartEstimate(const StartEstimateRecord& r);  // upsert (keeps the first_* fields)
  Status SetActualStart(const std::string& job_id, SimTime start);
  Result<std::vector<StartEstimateRecord>> StartEstimates(int64_t limit);

  store::Db& db() { return db_; }

 private:
  ServiceStore(store::Db& db, std::string_view cluster)
      : db_(db), cluster_(cluster), scope_("cluster = " + ClusterLiteral(cluster)) {}
  // service_kv keys of a cluster other than the default one are prefixed with its name.
  std::string Key(const std::string& key) const;
  Status CheckFence();
  static Result<int64_t> InsertedId(store::Statement& st);
  static Result<std::vector<ActionRecord>> ReadActions(store::Statement& st);
  store::Db& db_;
  std::string cluster_;
  std::string scope_;  // "cluster = '<name>'", the condition every query of this store adds
  std::optional<LeaseFence> fence_;
};

}  // namespace schedmate::service
