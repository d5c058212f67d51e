#pragma once
// Companion: the loop `schedmate serve --slurm` runs beside slurmctld.
//
// Each Tick() asks Slurm for the queue and nodes (and reads newly finished runs from the jobcomp
// file or sacct), then:
//   new job        -> batch script + resources to the JobAdvisor; prediction (with its
//                     explanation) stored in the HistoryStore (once per job, kept across restarts)
//   running job    -> LogTracker on its StdOut (validated: regular file owned by the job's user);
//                     latest metrics in memory, samples stored every metrics_interval
//   finished run   -> actual duration recorded (history grows; the advisor observes it);
//                     each run handled once (run key "<id>@<start>" stored)
//   failed run     -> the log tail is COPIED first (requeue truncates it), then diagnosed; the
//                     failure is committed, and each action is recorded before it is executed
//                     (a crash can lose an action, marked "interrupted" at the next start, never
//                     repeat one; an action whose record cannot be written is not executed:
//                     outcome "not_recorded", counted in StoreHealth); then the whole plan runs
//                     within policy (actions.* config):
//                       drain    capped by max_drained_nodes (nodes whose reason starts
//                                "schedmate" count)
//                       requeue  within retries_per_job (schedmate's own requeues of the job):
//                                released at now + backoff (the plan's delay, else
//                                backoff_base x 2^retries, capped), ExcNodeList += the implicated
//                                nodes unless that leaves the job no usable node, the checkpoint
//                                named in the record, the Comment and the user's notice (Slurm
//                                cannot change the job's command or environment: resuming is up
//                                to the job, which can read its Comment); never while the job
//                                runs again (Slurm requeued it itself)
//                       hold     after the budget (hold_after_budget) or when the planner asks
//                                for an unclear failure (hold_unknown): `scontrol requeuehold`,
//                                the reason in the record and the Comment
//                       notify   user / operators: recorded with the hint (API /v1/actions)
//                     a delayed requeue is nudged (StartTime=now) once its release time has
//                     passed, so it starts then rather than at Slurm's next scheduling cycle;
//                     dry-run records the full plan ("would requeue, attempt 1/3, starts in 2m,
//                     excluding gpu1") without touching Slurm. Runs that ended more than 10
//                     minutes before they were seen, or before this database first watched the
//                     cluster, are diagnosed but never acted on
//   pending jobs   -> a start-time estimate each (StartTimeEstimator) beside Slurm's reason
// and publishes an immutable ServiceView for the API.
//
// Thread-safety: Tick()/Run() on one thread. View(), EstimateSubmission() and ResumeNode() may be
// called from any thread (the API's); engine and store calls are serialised by one mutex.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "service/anomalies.h"
#include "service/gpu_probe.h"
#include "service/leader.h"
#include "service/log_access.h"
#include "service/ports.h"
#include "service/queue_orderer.h"
#include "service/remaining_time.h"
#include "service/service_config.h"
#include "service/service_store.h"
#include "service/start_estimator.h"
#include "service/submit_advice.h"
#include "slurm/slurm_backend.h"
#include "store/history_store.h"

namespace schedmate::service {

struct JobView {
  slurm::SlurmJob job;
  std::optional<Prediction> prediction;
  std::optional<LogMetrics> metrics;
  std::optional<StartEstimate> start_estimate;
  std::optional<RemainingTime> remaining;  // running jobs: how much longer (remaining_time.h)
  std::optional<JobUsage> usage;           // latest probe of a running job (service/gpu_probe.h)
  std::string log_path;                    // the validated StdOut ("" until known)
  std::string log_problem;                 // why the log is not tracked, when it is not
  JobLogScope log_scope;  // whose log it is and where it may lie (what Slurm reports)
};

struct PredictionErrorStats {
  int64_t count = 0;
  double sum_abs_error_s = 0;
  double sum_abs_rel_error = 0;  // |pred - actual| / actual
};

// The order mode's state for the API (GET /v1/scheduling) and the dashboard.
struct SchedulingView {
  SchedulingMode mode = SchedulingMode::kAdvise;
  std::string policy;
  int max_changes_per_pass = 0;
  Duration max_wait;
  std::string priority_type;         // slurm.conf's PriorityType ("" until asked)
  std::optional<SimTime> last_pass;  // last ordering pass
  std::vector<RankedJob> ranking;    // of the last pass, by partition then rank
  int64_t planned = 0;               // changes the last pass wanted (before the cap)
  int64_t applied = 0;               // changes the last pass made (or recorded, dry run)
  int64_t deferred = 0;              // left for later passes by the cap
  int64_t changes_total = 0;         // priority changes made since start
  int64_t restored_total = 0;        // priorities put back since start
  int64_t outstanding = 0;           // jobs holding a priority schedmate set
  std::map<std::string, std::string> left_alone;  // pending job -> why it is not reordered
  Duration longest_wait;                          // longest current wait among pending jobs
  std::string last_error;
};

// What a restore did (RestorePriorities).
struct RestoreSummary {
  int64_t restored = 0;    // put back
  int64_t not_needed = 0;  // the job started, ended, is gone or already had its original
  int64_t skipped = 0;     // someone else changed the priority since (theirs stands), or held
  int64_t failed = 0;      // Slurm refused; still outstanding
};

// How the companion's stores (ServiceStore, HistoryStore) have answered: every failed read or
// write is counted; an action whose record could not be written is not executed.
struct StoreHealth {
  int64_t errors = 0;                    // failed store calls since start
  std::string last_error;                // "recording a requeue action for job 9: ..." ("" = none)
  std::optional<SimTime> last_error_at;  // when
  bool degraded = false;                 // a store call failed within the last 10 minutes
};

// What the API shows: a consistent snapshot taken at the end of a tick.
struct ServiceView {
  std::string cluster = "default";  // the cluster this companion watches (slurm.clusters)
  SimTime updated_at;
  int64_t ticks = 0;
  int64_t generation = 0;  // grows with every published view (several may share `ticks`)
  bool slurm_ok = false;
  std::string last_error;
  Duration last_tick;                   // how long the last tick took
  std::vector<JobView> jobs;            // sorted by id
  std::vector<slurm::SlurmNode> nodes;  // sorted by name
  std::vector<FailureRecord> failures;  // most recent first (bounded)
  std::vector<ActionRecord> actions;    // most recent first (bounded)
  PredictionErrorStats prediction_error;
  std::map<FailureClass, int64_t> failures_by_class;
  // Which engine diagnosed them: "builtin", "llm", or "llm_fallback" (the LLM was asked and
  // failed; the built-in diagnosis was used). See FailureEngineKind().
  std::map<std::string, int64_t> failures_by_engine;
  std::map<std::pair<ActionKind, ActionOutcome>, int64_t> actions_by_kind;
  int64_t estimates_served = 0;
  int64_t tracked_logs = 0;
  bool dry_run = false;
  SchedulingView scheduling;
  std::vector<Anomaly> anomalies;     // of this pass (service/anomalies.h)
  std::vector<slurm::QosLimits> qos;  // sacctmgr's QOS limits (for why; empty without slurmdbd)
  std::vector<slurm::AssocLimits> assocs;  // sacctmgr's associations (for why; likewise)
  StoreHealth store;
  LeaderStatus leadership;  // role on a shared store (SQLite: always the leader)
};

struct CompanionDeps {
  slurm::SlurmBackend& backend;
  store::HistoryStore& history;
  ServiceStore& store;
  JobAdvisor& advisor;
  LogTracker& tracker;
  FailureDiagnoser& diagnoser;
  const Clock& clock;
  UsageProbe* usage = nullptr;  // may be null: no idle-GPU or over-request anomalies
  // A shared store's election (leader.h); null: the only instance, always the leader.
  Leadership* leadership = nullptr;
};

// "llm_fallback" for a Diagnosis::engine naming an LLM failure ("... (llm unavailable: ...)",
// "... (llm answer rejected: ...)"), "llm" for one the LLM answered ("... llm (MODEL)"), else
// "builtin".
std::string FailureEngineKind(std::string_view engine);

class Companion {
 public:
  // Every reference in `deps` must outlive the Companion.
  Companion(CompanionDeps deps, ServiceConfig config);

  // Restores cursors and recent failures/actions from the store, and puts back the original
  // priority of every job an earlier process reordered and did not restore (it was killed):
  // every start begins from Slurm's own priorities. Call once before Tick(). kInvalidArgument
  // for an unusable scheduling configuration.
  Status Load();
  // Order mode's undo: every pending job that still holds a priority schedmate set gets its
  // original back (priority/basic, or a priority someone had set: the recorded value;
  // priority/multifactor: hold + release, so the plugin computes it again). Jobs whose priority
  // someone else changed since keep it. Each restore is an action of kind "restore" with
  // `why` as its reason. Call after Run() returned (serve does on SIGTERM/SIGINT) or instead of
  // it (`serve --restore`). Thread-safe.
  Result<RestoreSummary> RestorePriorities(const std::string& why);
  // What Load() put back (zero when nothing was outstanding).
  const RestoreSummary& RestoredAtLoad() const { return restored_at_load_; }
  // One pass (see the file comment). Returns the Slurm error when the queue could not be read
  // (the previous view stays, marked slurm_ok=false).
  Status Tick();
  // Ticks every poll_interval until Stop().
  void Run();
  void Stop();

  std::shared_ptr<const ServiceView> View() const;

  // For POST /v1/estimate (job_submit.lua). Thread-safe.
  Result<SubmitAdvice> EstimateSubmission(const JobContext& job);
  // Operator action through the API: resume a node schedmate drained (its store says so, and
  // Slurm still shows it drained with a "schedmate" reason); recorded like every action.
  // kNotFound for a node Slurm does not list, kFailedPrecondition for any other node; neither
  // reaches Slurm. Thread-safe.
  Status ResumeNode(const std::string& node, const std::string& who);

  // Called with every action once its outcome is known (also skipped, dry-run and failed ones),
  // on the thread that runs it, under the engine lock: keep it short (one log line). Set it
  // before Run(). Not called for actions restored by Load().
  void SetActionSink(std::function<void(const ActionRecord&)> sink) {
    action_sink_ = std::move(sink);
  }
  // "retries 1/job, backoff 60s..30m, exclude on, hold after budget on, ..." for start-up logs.
  std::string ActionPolicySummary() const;

  const ServiceConfig& config() const { return config_; }

 private:
  // A job being watched: what the API shows of it (the JobView part: remaining is set each pass
  // while it runs, usage is the latest probe while RUNNING) and the companion's own bookkeeping.
  struct Tracked : JobView {
    JobContext context;
    int32_t restarts = 0;
    SimTime last_sample;
    bool start_recorded = false;
    std::optional<SimTime> stored_start_estimate;
    int64_t missing_ticks = 0;
    SimTime last_probe;  // when it was probed (zero: never)
  };
  std::vector<slurm::QosLimits> qos_;
  std::vector<slurm::AssocLimits> assocs_;
  std::optional<SimTime> qos_at_;

  // Cluster names in shared records (slurm.clusters): the default cluster's are unqualified, so
  // a store written before clusters existed keeps its keys. History rows of another cluster are
  // "<cluster>/<job id>" (the history and the advisor learn across clusters; job ids repeat),
  // run keys "<cluster>/<id>@<start>", captured logs "<cluster>-<id>-<start>.log".
  bool DefaultCluster() const;
  std::string HistoryId(const std::string& id) const;
  store::StoredJob StoredFor(const JobContext& c) const;
  std::string RunKeyOf(const slurm::FinishedJob& f) const;
  std::string LogPrefix() const;
  void ObserveNewJob(Tracked& t, SimTime now);
  void RefreshLogPath(Tracked& t);
  void TrackRunning(Tracked& t, SimTime now, std::vector<MetricSample>& samples);
  void HandleFinished(const slurm::FinishedJob& f, SimTime now);
  void HandleFailure(const slurm::FinishedJob& f, Tracked* t, SimTime now);
  // A failed run's log, copied before anything acts on the job (a requeue truncates it).
  struct CapturedLog {
    std::string text;       // the tail read ("" when none could be read)
    std::string copy_path;  // the private copy ("" when none was written)
    std::string note;       // why there is no text or copy ("" when both are there)
  };
  CapturedLog CaptureLog(const slurm::FinishedJob& f, const Tracked* t);
  FailureRecord RecordFailure(const slurm::FinishedJob& f, const Diagnosis& d,
                              const std::string& copy_path, SimTime now);

  // One recovery plan being run: what its earlier steps did, for the later ones.
  struct PlanRun {
    const slurm::FinishedJob& f;
    const Diagnosis& d;
    SimTime now;
    bool stale = false;  // nothing but notices is executed; records are not announced
    bool held = false;   // at most one hold per plan
    std::optional<ActionOutcome> requeue_outcome;  // the plan's requeue (nullopt = none yet)
    std::string requeue_problem;  // why a planned requeue did not happen (for the notice)
  };
  // Runs `d.plan` step by step through the executors below (one per kind).
  void ExecutePlan(const slurm::FinishedJob& f, const Diagnosis& d, SimTime now, bool stale);
  // Each executor decides within policy, runs the step through RunAction and returns the final
  // record (its outcome, detail and structured fields).
  ActionRecord ExecuteStale(const PlannedAction& step, ActionRecord a, PlanRun& run);
  ActionRecord ExecuteDrain(const PlannedAction& step, ActionRecord a, PlanRun& run);
  ActionRecord ExecuteRequeue(const PlannedAction& step, ActionRecord a, PlanRun& run);
  ActionRecord ExecuteHold(ActionRecord a, const std::string& reason, PlanRun& run);
  ActionRecord ExecuteHoldStep(const PlannedAction& step, ActionRecord a, PlanRun& run);
  ActionRecord ExecuteNotifyUser(const PlannedAction& step, ActionRecord a, PlanRun& run);
  ActionRecord ExecuteNotifyAdmin(const PlannedAction& step, ActionRecord a, PlanRun& run);
  // A kind that is not a recovery step (resume, priority, restore): a diagnoser that plans one is
  // wrong, so it is recorded as skipped ("not_recovery"), never run.
  ActionRecord ExecuteNotRecovery(const PlannedAction& step, ActionRecord a, PlanRun& run);
  using Executor = ActionRecord (Companion::*)(const PlannedAction&, ActionRecord, PlanRun&);
  // The executor of a plan step of this kind.
  static Executor ExecutorFor(ActionKind kind);
  // Nodes drained by schedmate now (Slurm's reason starts "schedmate", or drained this session).
  int DrainedBySchedmate() const;

  // Whether RunAction tells the action sink (a backlog of stale runs is recorded, not announced).
  enum class Announce { kYes, kNo };
  // Records `a` first; executes `act` only when `a` is kPlanned, the record was written and this
  // is not a dry run; then records the outcome. `act` returns the detail to record ("requeued,
  // attempt 1/3, ...") and may correct the record's exclude_nodes to what Slurm actually got.
  // A record that cannot be written makes the outcome kNotRecorded (nothing was executed) and
  // counts a store error; a failed outcome update leaves the row "planned", which the next
  // start marks interrupted (never repeated).
  using ActionFn = std::function<Result<std::string>(ActionRecord&)>;
  ActionRecord RunAction(ActionRecord a, const ActionFn& act, Announce announce = Announce::kYes);
  // Counts a failed store call (`what` names it: "recording a drain action for job 9"). Returns
  // s.ok().
  bool StoreOk(const Status& s, std::string_view what);
  // backoff_base x 2^retries_done, at most backoff_cap.
  Duration Backoff(int retries_done) const;
  // Why a requeue/hold of this finished run must not happen now: `word` "job_active" (it runs
  // again: Slurm requeued it itself) or "job_gone" (purged), `text` for people.
  struct Refusal {
    std::string word;
    std::string text;
  };
  // nullopt when the requeue/hold may happen.
  std::optional<Refusal> NotActionable(const slurm::FinishedJob& f);
  // `wanted` (sorted, unique) unless excluding it would leave fewer usable nodes in the job's
  // partition than the job needs; then {} and `note` says why.
  std::vector<std::string> UsableExclusions(const slurm::FinishedJob& f,
                                            const std::vector<std::string>& wanted,
                                            std::string& note) const;
  void EstimateStarts(SimTime now);
  // Probes running jobs through deps_.usage: each at most every usage.interval, at most
  // usage.max_jobs_per_pass per pass, the longest unprobed first (ties by id).
  void RecordUsage(const JobUsage& u, const std::string& job_id);
  void ProbeUsage(SimTime now);
  // sacctmgr's QOS limits, asked at most once a minute and only while a pending job waits on a
  // QOS limit (why names the limit's value).
  void RefreshQos(SimTime now);
  // Order mode: one ranking and bounded priority plan per pass (queue_orderer.h), applied.
  void OrderQueue(SimTime now);
  // The job's PriorityRecord, created (original, nice, explicit?) at first sight.
  PriorityRecord& PriorityFor(const slurm::SlurmJob& job, SimTime now,
                              const std::vector<std::string>* computed);
  Result<RestoreSummary> RestoreLocked(const std::string& why);
  Result<std::string> PriorityTypeLocked();
  // The nudge described at awaiting_release_, for one job seen in the queue.
  void NudgeRelease(const slurm::SlurmJob& job, SimTime now);
  // One priority change of the order mode's plan, recorded and (unless dry-run) applied.
  void ApplyPriorityChange(const PriorityChange& c, SimTime now);
  void Publish(SimTime now, bool slurm_ok, const std::string& error, Duration took);
  void RememberFailure(const FailureRecord& f);
  void RememberAction(const ActionRecord& a);

  CompanionDeps deps_;
  ServiceConfig config_;
  StartEstimateRunner start_estimator_;  // in the pass, or on its worker at scale

  std::mutex engine_mu_;   // tracker, diagnoser, stores, backend actions, tracked_ (held by Tick)
  std::mutex advisor_mu_;  // the advisor alone (taken after engine_mu_ when both are held)
  std::map<std::string, Tracked> tracked_;
  std::vector<slurm::SlurmNode> nodes_;
  slurm::FinishedCursor cursor_;
  SimTime watch_since_;  // first start of this database; earlier runs are never acted on
  std::vector<FailureRecord> recent_failures_;
  std::vector<ActionRecord> recent_actions_;
  std::set<std::string> drained_this_session_;
  // Jobs schedmate requeued with a delay -> the release time it set. Once Slurm's EligibleTime
  // has passed and the job still waits for BeginTime, the loop nudges it (StartTime=now) so it
  // starts now rather than at Slurm's next scheduling cycle. Rebuilt from the actions at Load().
  std::map<std::string, SimTime> awaiting_release_;
  std::function<void(const ActionRecord&)> action_sink_;
  // Order mode.
  std::optional<QueueOrderer> orderer_;
  std::map<std::string, PriorityRecord> priorities_;  // tracked pending jobs' records
  std::map<std::string, int64_t> dry_planned_;        // dry run: last value recorded per job
  std::string priority_type_;                         // "" until asked
  bool restore_pending_ = false;  // an earlier process left priorities to put back
  // Shared store (leader_companion.cc): the last election result; a takeover's reconciliation
  // still to finish (no acting until it has).
  LeaderStatus leadership_;
  bool reconcile_pending_ = false;
  bool Shared() const { return deps_.leadership != nullptr && deps_.leadership->Current().shared; }
  // Renews leadership; false when this tick must not act (a follower's pass ran instead).
  bool LeaderTurn(SimTime now);
  void FollowerPass(SimTime now);
  // Cursor and recent failures/actions from the store (Load, and a takeover).
  Status LoadSharedState();
  RestoreSummary restored_at_load_;
  SchedulingView scheduling_;
  PredictionErrorStats prediction_error_;
  std::map<FailureClass, int64_t> failures_by_class_;
  std::map<std::string, int64_t> failures_by_engine_;
  std::map<std::pair<ActionKind, ActionOutcome>, int64_t> actions_by_kind_;
  StoreHealth store_health_;
  std::atomic<int64_t> estimates_served_{0};
  int64_t ticks_ = 0;
  int64_t published_ = 0;  // views published (ServiceView::generation)
  bool slurm_ok_ = false;
  std::string last_error_;
  Duration last_tick_;

  mutable std::mutex view_mu_;
  std::shared_ptr<const ServiceView> view_;
  AnomalyDetector anomaly_detector_{config_.anomalies};  // first-seen times across passes
                                                         // (Publish, tick thread)

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stop_ = false;
};

// Slurm's final state -> the core JobState.
JobState JobStateFromSlurm(const std::string& state);

}  // namespace schedmate::service
