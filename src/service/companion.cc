#include "service/companion.h"

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/file_util.h"
#include "core/strings.h"
#include "service/log_access.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::service {

std::string FailureEngineKind(std::string_view engine) {
  if (engine.find("(llm ") != std::string_view::npos) return "llm_fallback";
  if (engine.find("llm (") != std::string_view::npos) return "llm";
  return "builtin";
}

namespace {

constexpr size_t kRecentLimit = 200;
constexpr Duration kStaleFailure = Duration::Minutes(10);
constexpr int64_t kForgetAfterMissingTicks = 3;
constexpr Duration kStoreDegradedFor = Duration::Minutes(10);  // /healthz after a store error
constexpr const char* kCursorKey = "finished_cursor";
constexpr const char* kWatchSinceKey = "watch_since_us";

bool IsFailureState(const std::string& s) {
  return s == "FAILED" || s == "NODE_FAIL" || s == "OUT_OF_MEMORY" || s == "TIMEOUT" ||
         s == "BOOT_FAIL";
}

// Slurm's Reason= is one line; keep it short and printable.
std::string ShortReason(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (out.size() >= 200) break;
    out += (static_cast<unsigned char>(c) < 0x20 || c == '"') ? ' ' : c;
  }
  return out;
}

std::string JoinNodes(const std::vector<std::string>& nodes) {
  std::string out;
  for (const auto& n : nodes) out += (out.empty() ? "" : ",") + n;
  return out;
}

// "45s", "2m", "2m30s", "1h", "1h05m": how long a retry waits, for people.
std::string ShortDelay(Duration d) {
  int64_t s = (d.micros() + 999'999) / 1'000'000;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600)
    return s % 60 == 0 ? fmt::format("{}m", s / 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
  int64_t m = (s % 3600) / 60;
  return m == 0 ? fmt::format("{}h", s / 3600) : fmt::format("{}h{:02}m", s / 3600, m);
}

std::string WithHint(std::string reason, const std::string& hint) {
  if (!hint.empty()) reason += "; next: " + hint;
  return reason;
}

// A planner writes the user's notice before anything ran ("... and was requeued; ..."). Once the
// plan's requeue has run (`outcome`: its action's outcome, nullopt when the plan had none), the
// notice says what happened to it.
std::string NoticeAfterRequeue(std::string reason, std::optional<ActionOutcome> outcome,
                               const std::string& problem) {
  if (!outcome) return reason;
  std::string fact = *outcome == ActionOutcome::kDone ? "was requeued"
                     : *outcome == ActionOutcome::kDryRun
                         ? "would be requeued (dry run: nothing was done)"
                         : "was not requeued (" + problem + ")";
  constexpr std::string_view kClaim = "and was requeued";
  if (auto at = reason.find(kClaim); at != std::string::npos) {
    reason.replace(at, kClaim.size(), "and " + fact);
  } else if (*outcome != ActionOutcome::kDone) {
    reason += "; the job " + fact;
  }
  return reason;
}

store::StoredJob StoredFromContext(const JobContext& c) {
  store::StoredJob s;
  s.job.id = c.job_id;
  s.job.user = c.user;
  s.job.vc = c.partition;
  s.job.name = c.name;
  s.job.gpus = GpuAmount::Whole(c.gpus);
  s.job.nodes = c.nodes;
  s.job.submit = c.submit;
  if (c.time_limit_min) s.job.time_limit = Duration::Minutes(*c.time_limit_min);
  s.fingerprint = c.fingerprint;
  s.source = "slurm";
  return s;
}

}  // namespace

JobState JobStateFromSlurm(const std::string& state) {
  if (state == "COMPLETED") return JobState::kCompleted;
  if (state == "FAILED" || state == "BOOT_FAIL") return JobState::kFailed;
  if (state == "CANCELLED") return JobState::kCancelled;
  if (state == "TIMEOUT" || state == "DEADLINE") return JobState::kTimeout;
  if (state == "NODE_FAIL") return JobState::kNodeFail;
  if (state == "PREEMPTED") return JobState::kPreempted;
  if (state == "OUT_OF_MEMORY") return JobState::kOutOfMemory;
  return JobState::kUnknown;
}

Companion::Companion(CompanionDeps deps, ServiceConfig config)
    : deps_(deps), config_(std::move(config)), start_estimator_(config_.start_estimates) {
  auto view = std::make_shared<ServiceView>();
  view->dry_run = config_.dry_run;
  view_ = view;
  scheduling_.mode = config_.scheduling_mode;
  scheduling_.policy = config_.order.policy;
  scheduling_.max_changes_per_pass = config_.order.max_changes;
  scheduling_.max_wait = config_.order.max_wait;
}

bool Companion::DefaultCluster() const { return config_.cluster_name == kDefaultCluster; }
std::string Companion::HistoryId(const std::string& id) const {
  return DefaultCluster() ? id : config_.cluster_name + "/" + id;
}
store::StoredJob Companion::StoredFor(const JobContext& c) const {
  store::StoredJob s = StoredFromContext(c);
  s.job.id = HistoryId(s.job.id);
  return s;
}
std::string Companion::RunKeyOf(const slurm::FinishedJob& f) const {
  return DefaultCluster() ? f.RunKey() : config_.cluster_name + "/" + f.RunKey();
}
std::string Companion::LogPrefix() const {
  return DefaultCluster() ? "" : config_.cluster_name + "-";
}

Status Companion::Load() {
  std::lock_guard lock(engine_mu_);
  SM_ASSIGN_OR_RETURN(QueueOrderer orderer, QueueOrderer::Create(config_.order));
  orderer_.emplace(std::move(orderer));
  // Runs that ended before this database first watched the cluster are history, not incidents.
  SM_ASSIGN_OR_RETURN(auto since, deps_.store.GetValue(kWatchSinceKey));
  if (since && ParseInt(*since)) {
    watch_since_ = SimTime::FromMicros(*ParseInt(*since));
  } else {
    watch_since_ = deps_.clock.Now();
    SM_RETURN_IF_ERROR(deps_.store.SetValue(kWatchSinceKey, std::to_string(watch_since_.micros())));
  }
  // Actions a killed process recorded but never finished are not retried: say so. (A shared
  // store's leader may be acting now: a new leader reconciles them instead, leader.h.)
  if (!Shared()) SM_RETURN_IF_ERROR(deps_.store.MarkInterruptedActions().status());
  SM_RETURN_IF_ERROR(LoadSharedState());
  // Captured logs are other users' output: only the service's user may read them.
  SM_RETURN_IF_ERROR(EnsurePrivateDir(config_.CapturedLogDir()));
  // Priorities an earlier process set and never put back (it was killed): back to Slurm's own
  // now, or at the first tick when Slurm does not answer yet. (Shared store: the leader's.)
  SM_ASSIGN_OR_RETURN(auto outstanding, deps_.store.OutstandingPriorities());
  if (!outstanding.empty() && !config_.dry_run && !Shared()) {
    auto restored = RestoreLocked(
        "restart after an unclean stop: putting back the priorities "
        "an earlier schedmate set");
    restore_pending_ = !restored.ok() || restored->failed > 0;
    if (restored.ok()) restored_at_load_ = *restored;
  }
  // What was recorded before a restart is visible at once, before the first tick.
  Publish(deps_.clock.Now(), /*slurm_ok=*/false, "not polled yet", Duration::Zero());
  return Status::Ok();
}

Status Companion::LoadSharedState() {
  SM_ASSIGN_OR_RETURN(auto cursor, deps_.store.GetValue(kCursorKey));
  if (cursor) {
    auto parts = Split(*cursor, ':');
    if (auto v = ParseInt(parts[0])) cursor_.offset = *v;
    if (parts.size() > 1)
      if (auto v = ParseInt(parts[1])) cursor_.skipped_lines = *v;
  }
  SM_ASSIGN_OR_RETURN(recent_failures_, deps_.store.RecentFailures(kRecentLimit));
  SM_ASSIGN_OR_RETURN(recent_actions_, deps_.store.RecentActions(kRecentLimit));
  failures_by_class_.clear();
  failures_by_engine_.clear();
  actions_by_kind_.clear();
  for (const auto& f : recent_failures_) {
    ++failures_by_class_[f.cls];
    ++failures_by_engine_[FailureEngineKind(f.engine)];
  }
  for (const auto& a : recent_actions_) {
    ++actions_by_kind_[{a.kind, a.outcome}];
    // A delayed requeue done within the last hour may still wait for its release.
    if (a.kind == ActionKind::kRequeue && a.outcome == ActionOutcome::kDone && a.release_at &&
        *a.release_at + Duration::Hours(1) > deps_.clock.Now() &&
        !awaiting_release_.count(a.job_id)) {
      awaiting_release_[a.job_id] = *a.release_at;
    }
  }
  return Status::Ok();
}

std::shared_ptr<const ServiceView> Companion::View() const {
  std::lock_guard lock(view_mu_);
  return view_;
}

void Companion::RefreshLogPath(Tracked& t) {
  auto shown = deps_.backend.ShowJob(t.job.id);
  if (!shown.ok()) {
    t.log_problem = shown.status().message();
    return;
  }
  t.job.std_out = shown->std_out;
  if (t.context.work_dir.empty()) t.context.work_dir = shown->work_dir;
  t.log_scope = JobLogScope{t.job.user.empty() ? shown->user : t.job.user,
                            shown->work_dir.empty() ? t.job.work_dir : shown->work_dir,
                            shown->std_out, shown->std_err};
  Status ok = CheckJobLog(shown->std_out, t.log_scope);
  // A running job's log may not exist for a moment; keep the path and retry next tick.
  if (ok.ok() || ok.code() == StatusCode::kNotFound) {
    t.log_path = shown->std_out;
    t.log_problem = ok.ok() ? "" : ok.message();
  } else {
    t.log_path.clear();
    t.log_problem = ok.message();
  }
}

void Companion::ObserveNewJob(Tracked& t, SimTime now) {
  const slurm::SlurmJob& j = t.job;
  t.restarts = j.restarts;
  t.context.job_id = j.id;
  t.context.name = j.name;
  t.context.user = j.user;
  t.context.partition = j.partition;
  t.context.gpus = j.gpus;
  t.context.nodes = j.nodes;
  t.context.time_limit_min = j.time_limit_min;
  t.context.work_dir = j.work_dir;
  t.context.submit = j.submit;
  bool live = j.state == "PENDING" || j.state == "RUNNING";
  // Finished jobs need their StdOut only if they failed; HandleFailure asks then.
  if (j.state == "RUNNING") RefreshLogPath(t);
  // A prediction made before a restart is reused: one prediction per job.
  auto stored = deps_.history.ListPredictions(HistoryId(j.id));
  if (stored.ok() && !stored->empty()) {
    const auto& p = stored->back();
    t.prediction =
        Prediction{p.duration, p.low, p.high, p.confidence, p.explanation, p.estimator, p.made_at};
  }
  auto existing = deps_.history.FindJob(HistoryId(j.id));
  if (!existing.ok() || !existing->has_value() || (*existing)->job.submit != j.submit) {
    StoreOk(deps_.history.PutJob(StoredFor(t.context)), "storing job " + j.id);
    t.prediction.reset();  // a reused job id is a new job
  } else {
    t.context.fingerprint = (*existing)->fingerprint;
  }
  if (t.prediction || !live) return;
  if (auto script = deps_.backend.BatchScript(j.id); script.ok())
    t.context.script = std::move(*script);
  Result<Prediction> prediction = Status::Unavailable("not predicted");
  {
    std::lock_guard advisor_lock(advisor_mu_);
    prediction = deps_.advisor.Predict(t.context, now);
  }
  if (!prediction.ok()) return;
  prediction->made_at = now;
  t.prediction = *prediction;
  if (!prediction->fingerprint.empty()) {
    t.context.fingerprint = prediction->fingerprint;
    StoreOk(deps_.history.PutJob(StoredFor(t.context)), "storing job " + j.id);
  }
  store::StoredPrediction sp;
  sp.job_id = HistoryId(j.id);
  sp.made_at = now;
  sp.estimator = prediction->engine;
  sp.duration = prediction->duration;
  sp.low = prediction->low;
  sp.high = prediction->high;
  sp.confidence = prediction->confidence;
  sp.explanation = prediction->explanation;
  StoreOk(deps_.history.PutPrediction(sp), "storing the prediction of job " + j.id);
  t.context.script.clear();  // not needed any more; keeps memory flat
  t.context.script.shrink_to_fit();
}

void Companion::TrackRunning(Tracked& t, SimTime now, std::vector<MetricSample>& samples) {
  if (t.log_path.empty()) {
    if (t.log_problem.empty() || IContains(t.log_problem, "no log at")) RefreshLogPath(t);
    if (t.log_path.empty()) return;
  }
  auto m = deps_.tracker.Observe(t.job.id, t.log_path, now);
  if (!m.ok()) {
    t.log_problem = m.status().message();
    return;
  }
  t.log_problem.clear();
  t.metrics = *m;
  if (now - t.last_sample >= config_.metrics_interval || t.last_sample == SimTime()) {
    t.last_sample = now;
    MetricSample s;
    s.job_id = t.job.id;
    s.at = now;
    s.step = m->step;
    s.loss = m->loss;
    s.step_time_s = m->step_time_s;
    s.progress = m->progress;
    if (m->eta) s.eta_s = m->eta->seconds_f();
    s.stalled = m->stalled;
    s.slowdown = m->slowdown;
    samples.push_back(std::move(s));
  }
}

bool Companion::StoreOk(const Status& s, std::string_view what) {
  if (s.ok()) return true;
  ++store_health_.errors;
  store_health_.last_error = fmt::format("{}: {}", what, s.message());
  store_health_.last_error_at = deps_.clock.Now();
  fmt::print(stderr, "schedmate serve: store: {}\n", store_health_.last_error);
  return false;
}

ActionRecord Companion::RunAction(ActionRecord a, const ActionFn& act, Announce announce) {
  // Recorded first (planned, with what it would do), then executed: a crash in between loses
  // the action (Load() marks it interrupted), never repeats it. Without a record, no execution.
  auto id = deps_.store.AddAction(a);
  std::string what = fmt::format("recording a {} action{}", ActionKindName(a.kind),
                                 a.job_id.empty() ? " for node " + a.node : " for job " + a.job_id);
  if (!StoreOk(id.status(), what)) {
    a.outcome = ActionOutcome::kNotRecorded;
    a.detail = "not executed: its record could not be written (" + id.status().message() + ")";
  } else {
    a.id = *id;
  }
  if (a.outcome == ActionOutcome::kPlanned) {
    if (config_.dry_run) {
      a.dry_run = true;
      a.outcome = ActionOutcome::kDryRun;
    } else {
      Result<std::string> done = act(a);
      a.outcome = done.ok() ? ActionOutcome::kDone : ActionOutcome::kFailed;
      if (!done.ok()) {
        a.detail = done.status().message();
      } else if (!done->empty()) {
        a.detail = *done;
      }
    }
    // Unwritten, the row stays "planned": the next start marks it interrupted, never repeats it.
    StoreOk(deps_.store.UpdateActionResult(a),
            "recording the outcome of action " + std::to_string(a.id));
  }
  RememberAction(a);
  if (action_sink_ && announce == Announce::kYes) action_sink_(a);
  return a;
}

std::string Companion::ActionPolicySummary() const {
  const ServiceConfig& c = config_;
  auto on = [](bool b) { return b ? "on" : "off"; };
  return fmt::format(
      "drain {} (at most {} node(s)), requeue {} ({} per job, backoff {}..{}, exclude failed nodes "
      "{}), hold after budget {}, hold unclear failures {}, job comments {}{}",
      on(c.drain_on_infra), c.max_drained_nodes, on(c.requeue_on_infra), c.retries_per_job,
      ShortDelay(c.backoff_base), ShortDelay(c.backoff_cap), on(c.exclude_failed_nodes),
      on(c.hold_after_budget), on(c.hold_unknown), on(c.annotate_comment),
      c.dry_run ? "; DRY RUN: actions are recorded, never executed" : "");
}

Duration Companion::Backoff(int retries_done) const {
  Duration d = config_.backoff_base;
  for (int i = 0; i < retries_done && d < config_.backoff_cap; ++i) d = d * 2;
  return std::min(d, config_.backoff_cap);
}

std::optional<Companion::Refusal> Companion::NotActionable(const slurm::FinishedJob& f) {
  auto shown = deps_.backend.ShowJob(f.id);
  if (!shown.ok()) {
    if (shown.status().code() == StatusCode::kNotFound) {
      return Refusal{"job_gone",
                     "the job is gone from slurmctld (purged after MinJobAge); nothing to requeue "
                     "or hold"};
    }
    return std::nullopt;  // let the action itself try and report what Slurm says
  }
  const std::string& st = shown->state;
  if (st == "RUNNING" || st == "COMPLETING" || st == "CONFIGURING" || st == "SUSPENDED" ||
      (st == "COMPLETED" && shown->restarts > 0)) {
    return Refusal{
        "job_active",
        fmt::format("the job is {} again (Slurm requeued it itself); not interrupting it",
                    ToLower(st))};
  }
  return std::nullopt;
}

std::vector<std::string> Companion::UsableExclusions(const slurm::FinishedJob& f,
                                                     const std::vector<std::string>& wanted,
                                                     std::string& note) const {
  if (wanted.empty()) return {};
  int need = std::max<int>(1, static_cast<int>(f.node_names.size()));
  int left = 0;
  for (const auto& n : nodes_) {
    if (!f.partition.empty() && !n.partitions.empty() &&
        std::find(n.partitions.begin(), n.partitions.end(), f.partition) == n.partitions.end()) {
      continue;
    }
    if (!n.available() || drained_this_session_.count(n.name)) continue;
    if (std::find(wanted.begin(), wanted.end(), n.name) != wanted.end()) continue;
    ++left;
  }
  if (left < need) {
    note = fmt::format(
        "not excluding {}: that would leave {} usable node(s) in partition {} for a job that "
        "needs {}",
        JoinNodes(wanted), left, f.partition.empty() ? "(any)" : f.partition, need);
    return {};
  }
  std::vector<std::string> out = wanted;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Companion::RememberAction(const ActionRecord& a) {
  recent_actions_.insert(recent_actions_.begin(), a);
  if (recent_actions_.size() > kRecentLimit) recent_actions_.pop_back();
  ++actions_by_kind_[{a.kind, a.outcome}];
}

void Companion::RememberFailure(const FailureRecord& f) {
  recent_failures_.insert(recent_failures_.begin(), f);
  if (recent_failures_.size() > kRecentLimit) recent_failures_.pop_back();
  ++failures_by_class_[f.cls];
  ++failures_by_engine_[FailureEngineKind(f.engine)];
}

int Companion::DrainedBySchedmate() const {
  int drained = 0;
  for (const auto& n : nodes_) {
    if (n.drained() && StartsWith(n.reason, "schedmate")) ++drained;
  }
  for (const auto& n : drained_this_session_) {
    bool counted = std::any_of(nodes_.begin(), nodes_.end(), [&](const slurm::SlurmNode& x) {
      return x.name == n && x.drained();
    });
    if (!counted) ++drained;
  }
  return drained;
}

namespace {

ActionRecord Skip(ActionRecord a, std::string_view why, std::string detail) {
  a.outcome = ActionOutcome::kSkipped;
  a.skip_reason = std::string(why);
  a.detail = std::move(detail);
  return a;
}

bool Happened(ActionOutcome o) { return o == ActionOutcome::kDone || o == ActionOutcome::kDryRun; }

}  // namespace

ActionRecord Companion::ExecuteStale(const PlannedAction& step, ActionRecord a, PlanRun& run) {
  const slurm::FinishedJob& f = run.f;
  a = Skip(std::move(a), "stale",
           f.end + Duration::Seconds(2) < watch_since_
               ? "run ended before schedmate started watching this cluster; not acting on it"
               : fmt::format("run ended {} before schedmate saw it; not acting on stale failures",
                             FormatDuration(run.now - f.end)));
  if (step.kind == ActionKind::kRequeue) {
    run.requeue_problem = a.detail;
    run.requeue_outcome = a.outcome;
  }
  return RunAction(std::move(a), nullptr, Announce::kNo);
}

ActionRecord Companion::ExecuteDrain(const PlannedAction& step, ActionRecord a, PlanRun&) {
  a.node = step.node;
  a.reason = ShortReason("schedmate: " + step.reason);
  bool already = drained_this_session_.count(step.node) > 0;
  for (const auto& n : nodes_) already = already || (n.name == step.node && n.drained());
  int drained = DrainedBySchedmate();
  if (!config_.drain_on_infra) {
    a = Skip(std::move(a), "disabled", "actions.drain_on_infra is false");
  } else if (already) {
    a = Skip(std::move(a), "already_drained", "node already drained");
  } else if (drained >= config_.max_drained_nodes) {
    a = Skip(
        std::move(a), "drain_cap",
        fmt::format("cap reached: {} node(s) drained by schedmate (actions.max_drained_nodes={})",
                    drained, config_.max_drained_nodes));
  } else {
    a.detail = "would drain " + step.node;
  }
  std::string node = step.node, reason = a.reason;
  a = RunAction(std::move(a), [&](ActionRecord&) -> Result<std::string> {
    SM_RETURN_IF_ERROR(deps_.backend.DrainNode(node, reason));
    return "drained " + node;
  });
  if (Happened(a.outcome)) drained_this_session_.insert(node);
  return a;
}

ActionRecord Companion::ExecuteRequeue(const PlannedAction& step, ActionRecord a, PlanRun& run) {
  const slurm::FinishedJob& f = run.f;
  const int budget = config_.retries_per_job;
  a.budget = budget;
  run.requeue_outcome = ActionOutcome::kSkipped;  // until the requeue below runs
  auto used_or = deps_.store.CountRequeues(f.id);
  std::optional<ActionRecord> settled;  // decided before Slurm is asked
  if (!config_.requeue_on_infra) {
    settled = Skip(std::move(a), "disabled", "actions.requeue_on_infra is false");
  } else if (!StoreOk(used_or.status(), "counting the requeues of job " + f.id)) {
    // Without the count the budget cannot be kept: no requeue.
    settled = Skip(std::move(a), "no_store",
                   "retry budget unknown (store: " + used_or.status().message() + ")");
  } else if (*used_or >= budget) {
    std::string why =
        fmt::format("retry budget used: {} requeue(s) by schedmate (actions.retries_per_job={})",
                    *used_or, budget);
    run.requeue_problem = why;
    if (config_.hold_after_budget && !run.held) {
      return ExecuteHold(std::move(a), why + "; held for a person to look", run);
    }
    settled = Skip(std::move(a), "budget_used", why);
  }
  if (settled) {
    if (run.requeue_problem.empty()) run.requeue_problem = settled->detail;
    return RunAction(std::move(*settled), nullptr);
  }
  const int used = static_cast<int>(*used_or);
  const int attempt = used + 1;
  const Duration delay = step.delay ? std::max(*step.delay, Duration::Zero()) : Backoff(used);
  std::string exclude_note;
  std::vector<std::string> exclude;
  if (config_.exclude_failed_nodes) exclude = UsableExclusions(f, step.exclude_nodes, exclude_note);
  a.attempt = attempt;
  a.delay = delay;
  a.release_at = run.now + delay;
  a.exclude_nodes = exclude;
  const std::string checkpoint = step.checkpoint.value_or("");
  a.checkpoint = checkpoint;
  // "attempt 2/3, starts in 2m, excluding gpu1; resume from ckpt/x.pt (...)"
  auto describe = [&](const std::vector<std::string>& excluded) {
    std::string what = fmt::format("attempt {}/{}, starts in {}", attempt, budget,
                                   delay <= Duration::Zero() ? "0s (at once)" : ShortDelay(delay));
    if (!excluded.empty()) what += ", excluding " + JoinNodes(excluded);
    if (!checkpoint.empty()) {
      what += "; resume from " + checkpoint + " (the job's own command must pick it up)";
    }
    if (!exclude_note.empty()) what += "; " + exclude_note;
    return what;
  };
  if (auto why = NotActionable(f)) {
    a = Skip(std::move(a), why->word, why->text);
    run.requeue_problem = why->text;
  } else {
    a.detail = "would requeue, " + describe(exclude);
  }
  slurm::RequeueOptions options;
  options.delay = delay;
  options.exclude_nodes = exclude;
  if (config_.annotate_comment) {
    options.comment =
        ShortReason(fmt::format("schedmate: requeued after {} (attempt {}/{}){}",
                                run.d.category.empty() ? "a failure" : run.d.category, attempt,
                                budget, checkpoint.empty() ? "" : "; resume from " + checkpoint));
  }
  a = RunAction(std::move(a), [&](ActionRecord& rec) -> Result<std::string> {
    SM_ASSIGN_OR_RETURN(slurm::ActionReport report, deps_.backend.Requeue(f.id, options));
    // What Slurm got: the job's own ExcNodeList entries stay out of the record.
    std::vector<std::string> ours;
    for (const auto& n : report.excluded)
      if (std::find(exclude.begin(), exclude.end(), n) != exclude.end()) ours.push_back(n);
    rec.exclude_nodes = ours;
    std::string out =
        (report.already_pending ? "updated the job Slurm had requeued itself, " : "requeued, ") +
        describe(ours);
    for (const auto& w : report.warnings) out += "; warning: " + w;
    return out;
  });
  run.requeue_outcome = a.outcome;
  if (a.outcome == ActionOutcome::kDone && delay > Duration::Zero()) {
    awaiting_release_[f.id] = run.now + delay;
  }
  if (!Happened(a.outcome) && run.requeue_problem.empty()) run.requeue_problem = a.detail;
  return a;
}

ActionRecord Companion::ExecuteHold(ActionRecord a, const std::string& reason, PlanRun& run) {
  const slurm::FinishedJob& f = run.f;
  a.kind = ActionKind::kHold;
  a.reason = reason;
  run.held = true;
  if (run.d.cls != FailureClass::kInfra && !config_.hold_unknown) {
    a = Skip(std::move(a), "disabled",
             "actions.hold_unknown is false: the operators are notified instead");
  } else if (run.d.cls == FailureClass::kInfra && !config_.hold_after_budget) {
    a = Skip(std::move(a), "disabled", "actions.hold_after_budget is false");
  } else if (auto why = NotActionable(f)) {
    a = Skip(std::move(a), why->word, why->text);
  } else {
    a.detail = fmt::format(
        "would hold: requeue the job held (scontrol requeuehold {}); it waits until a person "
        "runs `scontrol release {}`",
        f.id, f.id);
  }
  std::string comment =
      config_.annotate_comment ? ShortReason("schedmate: held: " + reason) : std::string();
  return RunAction(std::move(a), [&](ActionRecord&) -> Result<std::string> {
    SM_ASSIGN_OR_RETURN(slurm::ActionReport report, deps_.backend.HoldForReview(f.id, comment));
    std::string out = fmt::format(
        "held{} (Reason=job_requeued_in_held_state): waits until a person runs `scontrol "
        "release {}` or cancels it",
        report.already_pending ? " the job Slurm had requeued itself" : "", f.id);
    for (const auto& w : report.warnings) out += "; warning: " + w;
    return out;
  });
}

ActionRecord Companion::ExecuteNotifyUser(const PlannedAction& step, ActionRecord a, PlanRun& run) {
  const Diagnosis& d = run.d;
  a.reason = NoticeAfterRequeue(WithHint(step.reason, step.hint), run.requeue_outcome,
                                run.requeue_problem);
  if (d.checkpoint && a.reason.find(*d.checkpoint) == std::string::npos) {
    a.reason += "; resume from " + *d.checkpoint;
  }
  if (d.checkpoint) a.checkpoint = *d.checkpoint;
  a.requeue_outcome = run.requeue_outcome;
  a.outcome = ActionOutcome::kDone;
  a.detail = "recorded for the user (API /v1/failures, /v1/actions)";
  bool requeued = run.requeue_outcome && Happened(*run.requeue_outcome);
  if (!run.requeue_problem.empty() && !requeued) {
    a.detail += "; NOTE: the job was not requeued: " + run.requeue_problem;
  }
  return RunAction(std::move(a), nullptr, run.stale ? Announce::kNo : Announce::kYes);
}

ActionRecord Companion::ExecuteNotifyAdmin(const PlannedAction& step, ActionRecord a,
                                           PlanRun& run) {
  a.reason = WithHint(step.reason, step.hint);
  a.outcome = ActionOutcome::kDone;
  a.detail = "recorded for the operators (API /v1/actions, schedmate_actions_total)";
  return RunAction(std::move(a), nullptr, run.stale ? Announce::kNo : Announce::kYes);
}

ActionRecord Companion::ExecuteHoldStep(const PlannedAction& step, ActionRecord a, PlanRun& run) {
  if (run.held) return a;  // one hold per plan: a second one is neither recorded nor run
  return ExecuteHold(std::move(a), step.reason, run);
}

ActionRecord Companion::ExecuteNotRecovery(const PlannedAction& step, ActionRecord a, PlanRun&) {
  return RunAction(Skip(std::move(a), "not_recovery",
                        fmt::format("{} is not a recovery action", ActionKindName(step.kind))),
                   nullptr);
}

Companion::Executor Companion::ExecutorFor(ActionKind kind) {
  switch (kind) {
    case ActionKind::kDrainNode:
      return &Companion::ExecuteDrain;
    case ActionKind::kRequeue:
      return &Companion::ExecuteRequeue;
    case ActionKind::kHold:
      return &Companion::ExecuteHoldStep;
    case ActionKind::kNotifyUser:
      return &Companion::ExecuteNotifyUser;
    case ActionKind::kNotifyAdmin:
      return &Companion::ExecuteNotifyAdmin;
    case ActionKind::kResume:
    case ActionKind::kPriority:
    case ActionKind::kRestore:
      break;
  }
  return &Companion::ExecuteNotRecovery;
}

void Companion::ExecutePlan(const slurm::FinishedJob& f, const Diagnosis& d, SimTime now,
                            bool stale) {
  PlanRun run{f, d, now, stale};
  for (const PlannedAction& step : d.plan) {
    ActionRecord a;
    a.at = now;
    a.job_id = f.id;
    a.kind = step.kind;
    a.reason = step.reason;
    a.dry_run = config_.dry_run;
    a.outcome = ActionOutcome::kPlanned;
    const bool notice =
        step.kind == ActionKind::kNotifyUser || step.kind == ActionKind::kNotifyAdmin;
    if (stale && !notice) {
      ExecuteStale(step, std::move(a), run);
      continue;
    }
    (this->*ExecutorFor(step.kind))(step, std::move(a), run);
  }
}

Companion::CapturedLog Companion::CaptureLog(const slurm::FinishedJob& f, const Tracked* t) {
  // squeue only knows StdOut as a pattern (%x-%j.out): use scontrol's expansion.
  // The log is read only as the job's own file (log_access.h), never on the service's authority.
  std::string log_path = t != nullptr ? t->log_path : "";
  JobLogScope scope = t != nullptr ? t->log_scope : JobLogScope{};
  if (scope.user.empty()) scope.user = t != nullptr ? t->job.user : f.user;
  if (log_path.empty()) {
    if (auto shown = deps_.backend.ShowJob(f.id); shown.ok()) {
      log_path = shown->std_out;
      scope.work_dir = shown->work_dir;
      scope.std_out = shown->std_out;
      scope.std_err = shown->std_err;
      if (scope.user.empty()) scope.user = shown->user;
    }
  }
  if (scope.work_dir.empty()) scope.work_dir = f.work_dir;
  CapturedLog out;
  if (log_path.empty()) {
    out.note = "no StdOut path known";
    return out;
  }
  auto tail = ReadJobLogTail(log_path, scope, static_cast<size_t>(config_.capture_bytes));
  if (!tail.ok()) {
    out.note = tail.status().message();
    return out;
  }
  out.text = std::move(tail->text);
  // 0600 in the 0700 logs directory, whatever the original's mode (log_access.h).
  auto copy =
      WriteCapturedLog(config_.CapturedLogDir(),
                       fmt::format("{}{}-{}.log", LogPrefix(), f.id, f.start.seconds()), out.text);
  if (copy.ok()) {
    out.copy_path = *copy;
  } else {
    out.note = "not captured: " + copy.status().message();
  }
  return out;
}

FailureRecord Companion::RecordFailure(const slurm::FinishedJob& f, const Diagnosis& d,
                                       const std::string& copy_path, SimTime now) {
  FailureRecord rec;
  rec.run_key = RunKeyOf(f);
  rec.job_id = f.id;
  rec.at = now;
  rec.state = f.state;
  rec.exit_code = f.exit_code;
  rec.node_list = f.node_list;
  rec.cls = d.cls;
  rec.category = d.category;
  rec.reason = d.reason;
  rec.evidence_line = d.evidence_line;
  rec.evidence = d.evidence;
  rec.log_copy = copy_path;
  rec.engine = d.engine;
  rec.checkpoint = d.checkpoint.value_or("");
  for (const auto& step : d.plan)
    if (rec.checkpoint.empty() && step.checkpoint) rec.checkpoint = *step.checkpoint;
  auto id = deps_.store.AddFailure(rec);
  if (StoreOk(id.status(), "recording the failure of job " + f.id)) rec.id = *id;
  RememberFailure(rec);
  return rec;
}

void Companion::HandleFailure(const slurm::FinishedJob& f, Tracked* t, SimTime now) {
  // 1. Copy the log before anything else: a requeue truncates it.
  CapturedLog log = CaptureLog(f, t);
  // 2. Diagnose.
  auto used = deps_.store.CountRequeues(f.id);
  StoreOk(used.status(), "counting the requeues of job " + f.id);
  const FailedJob fj{
      .job_id = f.id,
      .name = f.name,
      .state = f.state,
      .exit_code = f.exit_code,
      .exit_signal = f.exit_signal,
      .nodes = f.node_names,
      .ran = f.end - f.start,
      .restarts = t != nullptr ? t->job.restarts : 0,
      .retries_used = static_cast<int32_t>(used.value_or(0)),  // the requeue step checks again
      .retry_budget = config_.retries_per_job,
      .work_dir = t != nullptr && !t->context.work_dir.empty() ? t->context.work_dir : f.work_dir};
  Diagnosis d;
  if (auto diag = deps_.diagnoser.Diagnose(fj, log.text); diag.ok()) {
    d = std::move(*diag);
  } else {
    d.reason = "diagnosis failed: " + diag.status().message();
    PlannedAction notify;
    notify.reason = d.reason;
    d.plan.push_back(std::move(notify));
  }
  if (!log.note.empty()) d.reason += " [log: " + log.note + "]";
  RecordFailure(f, d, log.copy_path, now);
  // 3. Act within policy (each action recorded before it runs).
  ExecutePlan(f, d, now,
              /*stale=*/now - f.end > kStaleFailure ||
                  f.end + Duration::Seconds(2) < watch_since_);  // Slurm times are whole seconds
}

void Companion::HandleFinished(const slurm::FinishedJob& f, SimTime now) {
  const std::string run_key = RunKeyOf(f);
  auto handled = deps_.store.IsRunHandled(run_key);
  if (!handled.ok() || *handled) return;
  // Mark first: at most once, even if we crash below.
  if (!deps_.store.MarkRunHandled(run_key, f.id, f.state).ok()) return;
  auto it = tracked_.find(f.id);
  Tracked* t = it != tracked_.end() ? &it->second : nullptr;
  Duration ran = f.end - f.start;
  JobState state = JobStateFromSlurm(f.state);
  auto existing = deps_.history.FindJob(HistoryId(f.id));
  if (existing.ok() && !existing->has_value()) {
    const JobContext c{.job_id = f.id,
                       .name = f.name,
                       .user = f.user,
                       .partition = f.partition,
                       .nodes = static_cast<int32_t>(f.node_names.size()),
                       .time_limit_min = f.time_limit_min,
                       .submit = f.submit};
    StoreOk(deps_.history.PutJob(StoredFor(t != nullptr ? t->context : c)), "storing job " + f.id);
  }
  StoreOk(deps_.history.RecordFinish(HistoryId(f.id), f.end, ran, state),
          "recording the end of job " + f.id);
  JobContext ctx = t != nullptr ? t->context : JobContext{f.id, f.name, f.user, f.partition};
  {
    std::lock_guard advisor_lock(advisor_mu_);
    deps_.advisor.Observe(ctx, ran, state);
  }
  if (t != nullptr && t->prediction && state == JobState::kCompleted && ran > Duration::Zero()) {
    double err = std::abs((t->prediction->duration - ran).seconds_f());
    prediction_error_.count++;
    prediction_error_.sum_abs_error_s += err;
    prediction_error_.sum_abs_rel_error += err / std::max(1.0, ran.seconds_f());
  }
  if (IsFailureState(f.state)) HandleFailure(f, t, now);
  StoreOk(deps_.store.FinishRun(run_key), "finishing run " + run_key);
  deps_.tracker.Forget(f.id);
  if (t != nullptr) t->metrics.reset();
}

void Companion::NudgeRelease(const slurm::SlurmJob& job, SimTime now) {
  auto it = awaiting_release_.find(job.id);
  if (it == awaiting_release_.end()) return;
  if (job.state != "PENDING" || StartsWith(job.reason, "JobHeld") ||
      job.reason == "job_requeued_in_held_state") {
    awaiting_release_.erase(it);  // started, ended or held by someone: nothing to nudge
    return;
  }
  // Slurm's own EligibleTime decides (whole seconds); schedmate's release time is the fallback.
  SimTime release = job.eligible ? *job.eligible : it->second;
  if (job.reason != "BeginTime" || release > now) return;
  awaiting_release_.erase(it);
  if (config_.dry_run) return;
  Status s = deps_.backend.StartNow(job.id);
  if (!s.ok()) fmt::print(stderr, "schedmate serve: releasing job {}: {}\n", job.id, s.message());
}

void Companion::EstimateStarts(SimTime now) {
  std::vector<NodeCapacity> caps;
  for (const auto& n : nodes_) caps.push_back({n.name, n.gpus_total, n.available()});
  std::vector<RunningJobLoad> running;
  std::vector<PendingJobRequest> pending;
  for (auto& [id, t] : tracked_) {
    Duration predicted = t.prediction ? t.prediction->duration : Duration::Hours(1);
    std::optional<Duration> limit;
    if (t.job.time_limit_min) limit = Duration::Minutes(*t.job.time_limit_min);
    if (limit && predicted > *limit) predicted = *limit;
    t.remaining.reset();
    if (t.job.state == "RUNNING" && t.job.start) {
      // A running job's end: its log's ETA, else the advisor's distribution given its age.
      t.remaining = EstimateRemaining(now, *t.job.start, t.metrics, t.prediction, limit);
      running.push_back({id, t.job.node_names, t.job.gpus_per_node, *t.job.start,
                         (now - *t.job.start) + t.remaining->remaining, limit});
    } else if (t.job.state == "PENDING") {
      pending.push_back({id, t.job.priority, t.job.submit, std::max(1, t.job.nodes),
                         t.job.gpus_per_node, predicted, t.job.reason, t.job.eligible,
                         t.job.excluded_nodes, limit});
    }
  }
  auto estimates =
      start_estimator_.Run({now, std::move(caps), std::move(running), std::move(pending)});
  for (auto& e : estimates) {
    // A background fast-forward's snapshot may be older than this pass (start_estimator.h).
    auto it = tracked_.find(e.job_id);
    if (it == tracked_.end() || it->second.job.state != "PENDING") continue;
    Tracked& t = it->second;
    if (e.start) {
      bool changed = !t.stored_start_estimate ||
                     std::abs((*t.stored_start_estimate - *e.start).seconds()) >= 30;
      if (changed) {
        StartEstimateRecord r;
        r.job_id = e.job_id;
        r.submit = t.job.submit;
        r.first_at = r.last_at = now;
        r.first_start = r.last_start = *e.start;
        r.slurm_start = t.job.expected_start;
        if (deps_.store.PutStartEstimate(r).ok()) t.stored_start_estimate = *e.start;
      }
    }
    t.start_estimate = std::move(e);
  }
}

namespace {

constexpr int64_t kBasicPriorityTop = 4294901760;  // priority/basic numbers jobs down from here
constexpr int64_t kBasicPriorityBand = 100'000'000;

bool IsHeld(const slurm::SlurmJob& j) {
  return j.priority == 0 || StartsWith(j.reason, "JobHeld") ||
         j.reason == "job_requeued_in_held_state";
}

}  // namespace

Result<std::string> Companion::PriorityTypeLocked() {
  if (priority_type_.empty()) {
    SM_ASSIGN_OR_RETURN(priority_type_, deps_.backend.PriorityType());
    scheduling_.priority_type = priority_type_;
  }
  return priority_type_;
}

PriorityRecord& Companion::PriorityFor(const slurm::SlurmJob& job, SimTime now,
                                       const std::vector<std::string>* computed) {
  auto it = priorities_.find(job.id);
  if (it != priorities_.end() && it->second.submit == job.submit) return it->second;
  auto stored = deps_.store.FindPriority(job.id);
  if (stored.ok() && stored->has_value() && (*stored)->submit == job.submit) {
    return priorities_[job.id] = **stored;
  }
  PriorityRecord r;
  r.job_id = job.id;
  r.submit = job.submit;
  r.original = job.priority;
  r.nice = job.nice;
  r.first_seen = now;
  if (computed != nullptr) {  // priority/multifactor: sprio lists the jobs it computes
    r.explicit_priority = !std::binary_search(computed->begin(), computed->end(), job.id);
  } else {  // priority/basic numbers jobs downwards from 0xffff0000
    r.explicit_priority =
        job.priority > kBasicPriorityTop || job.priority <= kBasicPriorityTop - kBasicPriorityBand;
  }
  if (job.nice != 0 && !config_.reorder_nice) {
    r.left_alone =
        fmt::format("the user set --nice={} (scheduling.reorder_nice is false)", job.nice);
  } else if (r.explicit_priority && !config_.reorder_explicit_priority) {
    r.left_alone = fmt::format(
        "its priority {} was set explicitly (scheduling.reorder_explicit_priority is false)",
        job.priority);
  }
  StoreOk(deps_.store.PutPriority(r), "recording the priority of job " + job.id);
  return priorities_[job.id] = r;
}

void Companion::OrderQueue(SimTime now) {
  scheduling_.last_error.clear();
  auto type = PriorityTypeLocked();
  if (!type.ok()) {
    scheduling_.last_error = "reading PriorityType: " + type.status().message();
    return;
  }
  // Under multifactor, a job sprio does not list had its priority set by someone.
  std::optional<std::vector<std::string>> computed;
  bool any_new = false;
  for (const auto& [id, t] : tracked_) {
    if (t.missing_ticks == 0 && t.job.state == "PENDING" && !priorities_.count(id)) any_new = true;
  }
  if (any_new && *type == "priority/multifactor") {
    auto ids = deps_.backend.ComputedPriorityJobs();
    if (!ids.ok()) {
      scheduling_.last_error = "sprio: " + ids.status().message();
      return;
    }
    computed = std::move(*ids);
  }
  std::vector<OrderJob> jobs;
  scheduling_.left_alone.clear();
  scheduling_.longest_wait = Duration::Zero();
  std::set<std::string> pending;
  for (auto& [id, t] : tracked_) {
    if (t.missing_ticks > 0 || t.job.state != "PENDING") continue;
    pending.insert(id);
    scheduling_.longest_wait = std::max(scheduling_.longest_wait, now - t.job.submit);
    if (IsHeld(t.job)) {
      scheduling_.left_alone[id] = "held";
      continue;
    }
    PriorityRecord& rec = PriorityFor(t.job, now, computed ? &*computed : nullptr);
    if (rec.left_alone.empty() && rec.ours && *rec.ours != t.job.priority &&
        t.job.priority != rec.original) {
      rec.left_alone = fmt::format(
          "its priority was changed outside schedmate ({} set, Slurm shows {}); left alone",
          *rec.ours, t.job.priority);
      StoreOk(deps_.store.PutPriority(rec), "recording the priority of job " + id);
    }
    if (!rec.left_alone.empty()) {
      scheduling_.left_alone[id] = rec.left_alone;
      continue;
    }
    OrderJob j;
    j.id = id;
    j.user = t.job.user;
    j.partition = t.job.partition;
    j.nodes = std::max(1, t.job.nodes);
    j.gpus_per_node = t.job.gpus_per_node;
    j.gpus = t.job.gpus;
    j.submit = t.job.submit;
    // No prediction yet: the user's limit, else an hour (ranked as a long job).
    j.predicted = t.prediction           ? t.prediction->duration
                  : t.job.time_limit_min ? Duration::Minutes(*t.job.time_limit_min)
                                         : Duration::Hours(1);
    j.priority = t.job.priority;
    j.ours = rec.ours && *rec.ours == t.job.priority;
    jobs.push_back(std::move(j));
  }
  // Records of jobs that left the queue are dropped from memory (the store keeps them).
  for (auto it = priorities_.begin(); it != priorities_.end();) {
    it = pending.count(it->first) ? std::next(it) : priorities_.erase(it);
  }
  for (auto it = dry_planned_.begin(); it != dry_planned_.end();) {
    it = pending.count(it->first) ? std::next(it) : dry_planned_.erase(it);
  }
  std::vector<OrderNode> nodes;
  for (const auto& n : nodes_) {
    nodes.push_back({n.name, n.partitions, n.gpus_total, n.gpus_used, n.available()});
  }
  auto plan = orderer_->Plan({now, nodes, jobs});
  if (!plan.ok()) {
    scheduling_.last_error = plan.status().message();
    return;
  }
  scheduling_.last_pass = now;
  scheduling_.ranking = plan->ranking;
  scheduling_.planned = static_cast<int64_t>(plan->changes.size()) + plan->deferred;
  scheduling_.deferred = plan->deferred;
  scheduling_.applied = 0;
  for (const PriorityChange& c : plan->changes) ApplyPriorityChange(c, now);
  int64_t outstanding = 0;
  for (const auto& [id, r] : priorities_) outstanding += r.ours && r.restore.empty() ? 1 : 0;
  scheduling_.outstanding = outstanding;
}

void Companion::ApplyPriorityChange(const PriorityChange& c, SimTime now) {
  if (config_.dry_run) {
    auto d = dry_planned_.find(c.job_id);
    if (d != dry_planned_.end() && d->second == c.to) return;  // recorded already
    dry_planned_[c.job_id] = c.to;
  }
  ActionRecord a;
  a.at = now;
  a.job_id = c.job_id;
  a.kind = ActionKind::kPriority;
  a.reason = c.reason;
  a.outcome = ActionOutcome::kPlanned;
  a.detail = fmt::format("would set priority {} -> {}", c.from, c.to);
  a = RunAction(a, [&](ActionRecord&) -> Result<std::string> {
    // Recorded before Slurm is asked: a crash in between leaves a record a restore resolves
    // (the job then still has its original, "not_needed"), never a change nobody knows of.
    PriorityRecord& rec = priorities_[c.job_id];
    const PriorityRecord before = rec;
    SM_RETURN_IF_ERROR(deps_.store.SetOurPriority(c.job_id, c.to));
    rec.ours = c.to;
    rec.restore.clear();
    if (Status s = deps_.backend.SetPriority(c.job_id, c.to); !s.ok()) {
      rec = before;  // Slurm kept the value it had: so does the record
      StoreOk(deps_.store.PutPriority(rec), "recording the priority of job " + c.job_id);
      return s;
    }
    return fmt::format("priority {} -> {}", c.from, c.to);
  });
  if (a.outcome == ActionOutcome::kDone) {
    ++scheduling_.changes_total;
    auto t = tracked_.find(c.job_id);
    if (t != tracked_.end()) t->second.job.priority = c.to;  // until the next squeue
  }
  if (a.outcome == ActionOutcome::kDone || a.outcome == ActionOutcome::kDryRun) {
    ++scheduling_.applied;
  }
}

Result<RestoreSummary> Companion::RestorePriorities(const std::string& why) {
  std::lock_guard lock(engine_mu_);
  auto out = RestoreLocked(why);
  Publish(deps_.clock.Now(), slurm_ok_, last_error_, last_tick_);
  return out;
}

Result<RestoreSummary> Companion::RestoreLocked(const std::string& why) {
  RestoreSummary sum;
  SM_ASSIGN_OR_RETURN(auto outstanding, deps_.store.OutstandingPriorities());
  if (outstanding.empty()) return sum;
  SM_ASSIGN_OR_RETURN(auto jobs, deps_.backend.ListJobs());
  SM_ASSIGN_OR_RETURN(std::string type, PriorityTypeLocked());
  std::map<std::string, const slurm::SlurmJob*> by_id;
  for (const auto& j : jobs) by_id[j.id] = &j;
  const SimTime now = deps_.clock.Now();
  for (const PriorityRecord& r : outstanding) {
    auto it = by_id.find(r.job_id);
    const slurm::SlurmJob* j =
        it != by_id.end() && it->second->submit == r.submit ? it->second : nullptr;
    auto settle = [&](const std::string& outcome) {
      StoreOk(deps_.store.SetPriorityRestore(r.job_id, outcome),
              "recording the priority restore of job " + r.job_id);
      if (auto p = priorities_.find(r.job_id); p != priorities_.end()) p->second.restore = outcome;
    };
    ActionRecord a;
    a.at = now;
    a.job_id = r.job_id;
    a.kind = ActionKind::kRestore;
    a.reason = why;
    a.outcome = ActionOutcome::kPlanned;
    if (j == nullptr || j->state != "PENDING") {
      settle("not_needed");
      ++sum.not_needed;
      continue;  // nothing to put back: not worth an action record
    }
    const bool interrupted = r.restore == "restoring";  // a hold/release restore was cut short
    if (interrupted && IsHeld(*j)) {
      a.detail = "would release the job a restore had held";
      a = RunAction(a, [&](ActionRecord&) -> Result<std::string> {
        SM_RETURN_IF_ERROR(deps_.backend.Release(r.job_id));
        return "released: priority/multifactor computes its priority again";
      });
    } else if (j->priority == r.original) {
      settle("not_needed");
      ++sum.not_needed;
      continue;
    } else if (!r.ours || j->priority != *r.ours || IsHeld(*j)) {
      a.outcome = ActionOutcome::kSkipped;
      a.skip_reason = "changed_by_someone";
      a.detail = fmt::format(
          "priority is {} (schedmate set {}): changed or held by someone else since, left as is",
          j->priority, r.ours.value_or(0));
      settle("skipped");
      ++sum.skipped;
      RunAction(a, nullptr);
      continue;
    } else if (type == "priority/multifactor" && !r.explicit_priority) {
      a.detail = fmt::format("would hold and release (priority {}: multifactor recomputes it)",
                             j->priority);
      a = RunAction(a, [&](ActionRecord&) -> Result<std::string> {
        SM_RETURN_IF_ERROR(deps_.store.SetPriorityRestore(r.job_id, "restoring"));
        SM_RETURN_IF_ERROR(deps_.backend.Hold(r.job_id));
        SM_RETURN_IF_ERROR(deps_.backend.Release(r.job_id));
        return fmt::format("held and released: priority/multifactor computes it again (was {})",
                           j->priority);
      });
    } else {
      a.detail = fmt::format("would set priority {} -> {} (the original)", j->priority, r.original);
      a = RunAction(a, [&](ActionRecord&) -> Result<std::string> {
        SM_RETURN_IF_ERROR(deps_.backend.SetPriority(r.job_id, r.original));
        return fmt::format("priority {} -> {} (the original)", j->priority, r.original);
      });
    }
    if (a.outcome == ActionOutcome::kDone) {
      settle("restored");
      ++sum.restored;
      ++scheduling_.restored_total;
    } else if (a.outcome == ActionOutcome::kFailed) {
      ++sum.failed;
    }
  }
  scheduling_.outstanding = 0;
  for (const auto& [id, r] : priorities_) scheduling_.outstanding += r.ours && r.restore.empty();
  return sum;
}

Status Companion::Tick() {
  Stopwatch watch;
  SimTime now = deps_.clock.Now();
  if (deps_.leadership != nullptr && !LeaderTurn(now)) return Status::Ok();
  auto jobs = deps_.backend.ListJobs();
  Result<std::vector<slurm::SlurmNode>> nodes =
      jobs.ok() ? deps_.backend.ListNodes() : Result<std::vector<slurm::SlurmNode>>(jobs.status());
  if (!jobs.ok() || !nodes.ok()) {
    Status s = !jobs.ok() ? jobs.status() : nodes.status();
    std::lock_guard lock(engine_mu_);
    slurm_ok_ = false;
    last_error_ = s.message();
    Publish(now, false, last_error_, Duration::FromSecondsF(watch.ElapsedSeconds()));
    return s;
  }
  std::lock_guard lock(engine_mu_);
  ++ticks_;
  nodes_ = std::move(*nodes);
  // A node drained by schedmate and since resumed (by anyone) no longer counts against the cap.
  // Dry runs never drain, so they keep their simulated drains for the session.
  if (!config_.dry_run) {
    for (const auto& n : nodes_)
      if (!n.drained()) drained_this_session_.erase(n.name);
  }
  std::set<std::string> seen;
  std::vector<MetricSample> samples;
  std::vector<slurm::FinishedJob> finished;
  for (auto& job : *jobs) {
    seen.insert(job.id);
    auto [it, inserted] = tracked_.try_emplace(job.id);
    Tracked& t = it->second;
    bool restarted = !inserted && job.restarts != t.restarts;
    bool was_pending = !inserted && t.job.state == "PENDING";
    std::string keep_out = t.job.std_out;
    t.job = job;
    t.missing_ticks = 0;
    if (!keep_out.empty()) t.job.std_out = keep_out;  // squeue only has the pattern
    if (inserted) {
      ObserveNewJob(t, now);
    } else if (restarted) {
      t.restarts = job.restarts;
      deps_.tracker.Forget(job.id);
      t.metrics.reset();
      t.start_recorded = false;
      t.log_path.clear();
      t.log_problem.clear();
    }
    NudgeRelease(job, now);
    if (job.state == "RUNNING" && (t.log_path.empty() || was_pending) && t.log_problem.empty()) {
      RefreshLogPath(t);
    }
    if (job.start && job.state != "PENDING" && !t.start_recorded) {
      t.start_recorded = StoreOk(deps_.store.SetActualStart(job.id, *job.start),
                                 "recording the start of job " + job.id);
    }
    if (job.state == "RUNNING") {
      TrackRunning(t, now, samples);
    } else if (slurm::IsFinishedState(job.state) && job.start && job.end) {
      slurm::FinishedJob f;
      f.id = job.id;
      f.name = job.name;
      f.user = job.user;
      f.partition = job.partition;
      f.state = job.state;
      f.exit_code = job.exit_code;
      f.exit_signal = job.exit_signal;
      f.node_list = job.node_list;
      f.node_names = job.node_names;
      f.submit = job.submit;
      f.start = *job.start;
      f.end = *job.end;
      f.time_limit_min = job.time_limit_min;
      f.work_dir = job.work_dir;
      finished.push_back(std::move(f));
    }
    if (job.state != "PENDING") t.start_estimate.reset();
  }
  // The jobcomp file / sacct also reports runs that ended while we were not looking.
  std::string error;
  auto more = deps_.backend.ReadFinished(cursor_);
  if (more.ok()) {
    finished.insert(finished.begin(), more->begin(), more->end());
    StoreOk(deps_.store.SetValue(kCursorKey,
                                 fmt::format("{}:{}", cursor_.offset, cursor_.skipped_lines)),
            "saving the finished-jobs cursor");
  } else {
    error = "reading finished jobs: " + more.status().message();
  }
  for (const auto& f : finished) HandleFinished(f, now);
  StoreOk(deps_.store.AddMetrics(samples), "storing metric samples");
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    if (!seen.count(it->first) && ++it->second.missing_ticks > kForgetAfterMissingTicks) {
      deps_.tracker.Forget(it->first);
      it = tracked_.erase(it);
    } else {
      ++it;
    }
  }
  EstimateStarts(now);
  ProbeUsage(now);
  RefreshQos(now);
  if (restore_pending_) {
    auto restored = RestoreLocked(
        "restart after an unclean stop: putting back the priorities "
        "an earlier schedmate set");
    restore_pending_ = !restored.ok() || restored->failed > 0;
  }
  if (config_.scheduling_mode == SchedulingMode::kOrder && !restore_pending_) OrderQueue(now);
  slurm_ok_ = true;
  last_error_ = error;
  Publish(now, true, error, Duration::FromSecondsF(watch.ElapsedSeconds()));
  // A pass at scale allocates and frees tens of MB (the queue, the view it replaces); hand the
  // freed pages of every malloc arena back so RSS follows what is live (glibc; a few ms).
  malloc_trim(0);
  return Status::Ok();
}

// QOS and association limits, for why (once a minute, only while a job waits on one).
void Companion::RefreshQos(SimTime now) {
  if (qos_at_ && now - *qos_at_ < Duration::Minutes(1)) return;
  bool qos = false, assoc = false;
  for (const auto& [id, t] : tracked_) {
    if (t.job.state != "PENDING") continue;
    qos = qos || StartsWith(t.job.reason, "QOS");
    assoc = assoc || StartsWith(t.job.reason, "Assoc");
  }
  if (!qos && !assoc) return;
  qos_at_ = now;
  // Without slurmdbd: none, and why names no value.
  if (qos) {
    if (auto q = deps_.backend.ListQos(); q.ok()) qos_ = std::move(*q);
  }
  if (assoc) {
    if (auto a = deps_.backend.ListAssociations(); a.ok()) assocs_ = std::move(*a);
  }
}

// The probe's GPU readings, kept for `schedmate report` (used GPU-hours, idle waste).
void Companion::RecordUsage(const JobUsage& u, const std::string& job_id) {
  UsageSample sample{.job_id = job_id, .at = u.at};
  double sum = 0;
  for (const GpuSample& g : u.gpus) {
    if (!g.utilization_pct) continue;
    sum += std::clamp(*g.utilization_pct, 0.0, 100.0) / 100.0;
    ++sample.gpus;
  }
  if (sample.gpus == 0) return;  // nothing measured
  sample.gpu_util = sum / sample.gpus;
  StoreOk(deps_.store.AddUsage(sample), "recording GPU usage");
}

void Companion::ProbeUsage(SimTime now) {
  std::vector<std::pair<SimTime, Tracked*>> due;
  for (auto& [id, t] : tracked_) {
    if (t.job.state != "RUNNING" || t.missing_ticks > 0) {
      t.usage.reset();
      t.last_probe = SimTime();
      continue;
    }
    if (deps_.usage == nullptr) continue;
    // Half a poll of slack: a pass a few milliseconds early must not wait a whole extra poll.
    if (t.last_probe == SimTime() ||
        now - t.last_probe + config_.poll_interval / 2 >= config_.usage.interval)
      due.emplace_back(t.last_probe, &t);
  }
  // Longest unprobed first; tracked_ is ordered by id, and stable_sort keeps that for ties.
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (due.size() > static_cast<size_t>(config_.usage.max_jobs_per_pass))
    due.resize(static_cast<size_t>(config_.usage.max_jobs_per_pass));
  if (due.empty()) return;  // also when there is no probe
  // One pass's probes run side by side (usage.parallel at a time), so a job is read in the pass
  // that first sees it running however many others are due; results are applied in `due` order.
  std::vector<const slurm::SlurmJob*> jobs;
  for (auto& [last, t] : due) jobs.push_back(&t->job);
  auto results = ProbeAll(*deps_.usage, jobs, now, config_.usage.parallel);
  // Stamped when the answers are in: the anomaly detector counts a condition's minimum duration
  // from here, never from before the probe could have seen it.
  const SimTime answered = std::max(now, deps_.clock.Now());
  for (size_t i = 0; i < due.size(); ++i) {
    Tracked* t = due[i].second;
    t->last_probe = now;
    if (results[i].ok()) {
      t->usage = std::move(*results[i]);
      t->usage->at = answered;
      RecordUsage(*t->usage, t->job.id);
    } else {
      t->usage = JobUsage{.at = answered, .gpu_error = results[i].status().message()};
    }
  }
}

void Companion::Publish(SimTime now, bool slurm_ok, const std::string& error, Duration took) {
  last_tick_ = took;
  auto view = std::make_shared<ServiceView>();
  view->cluster = config_.cluster_name;
  view->updated_at = now;
  view->ticks = ticks_;
  view->generation = ++published_;
  view->slurm_ok = slurm_ok;
  view->last_error = error;
  view->last_tick = took;
  view->nodes = nodes_;
  view->failures = recent_failures_;
  view->actions = recent_actions_;
  view->prediction_error = prediction_error_;
  view->failures_by_class = failures_by_class_;
  view->failures_by_engine = failures_by_engine_;
  view->actions_by_kind = actions_by_kind_;
  view->estimates_served = estimates_served_.load();
  view->tracked_logs = static_cast<int64_t>(deps_.tracker.Tracked());
  view->dry_run = config_.dry_run;
  view->scheduling = scheduling_;
  view->store = store_health_;
  view->leadership = leadership_;
  view->store.degraded = store_health_.last_error_at.has_value() &&
                         now - *store_health_.last_error_at < kStoreDegradedFor;
  view->jobs.reserve(tracked_.size());
  for (const auto& [id, t] : tracked_) {
    if (t.missing_ticks > 0) continue;
    JobView& v = view->jobs.emplace_back(static_cast<const JobView&>(t));
    if (v.log_scope.user.empty()) v.log_scope = LogScopeOf(t.job);
  }
  std::sort(view->jobs.begin(), view->jobs.end(), [](const JobView& a, const JobView& b) {
    if (a.job.id.size() != b.job.id.size()) return a.job.id.size() < b.job.id.size();
    return a.job.id < b.job.id;
  });
  view->qos = qos_;
  view->assocs = assocs_;
  view->anomalies = anomaly_detector_.Update(*view, now);
  // The previous view (12,000 jobs: milliseconds to free) is released after the lock, so View()
  // callers never wait for it.
  std::shared_ptr<const ServiceView> previous;
  std::lock_guard lock(view_mu_);
  previous = std::exchange(view_, std::move(view));
}

void Companion::Run() {
  // Passes start every poll_interval (a pass that takes longer starts the next one at once), so
  // anomaly minimum durations and probe intervals are met within a poll of their time.
  auto next = std::chrono::steady_clock::now();
  while (true) {
    Status s = Tick();
    if (!s.ok()) fmt::print(stderr, "schedmate serve: tick: {}\n", s.message());
    next += std::chrono::microseconds(config_.poll_interval.micros());
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;
    std::unique_lock lock(run_mu_);
    if (run_cv_.wait_until(lock, next, [&] { return stop_; })) return;
  }
}

void Companion::Stop() {
  std::lock_guard lock(run_mu_);
  stop_ = true;
  run_cv_.notify_all();
}

Result<SubmitAdvice> Companion::EstimateSubmission(const JobContext& job) {
  // Only the advisor's lock: a long tick (slow slurmctld) must not delay job_submit.lua.
  std::lock_guard lock(advisor_mu_);
  SM_ASSIGN_OR_RETURN(Prediction p, deps_.advisor.Predict(job, deps_.clock.Now()));
  ++estimates_served_;
  return AdviseSubmission(p, job.time_limit_min, config_);
}

Status Companion::ResumeNode(const std::string& node, const std::string& who) {
  std::lock_guard lock(engine_mu_);
  if (!slurm::IsValidNodeName(node)) return Status::InvalidArgument("invalid node name: " + node);
  // Only undo what schedmate itself did: a node it drained, still drained for schedmate's reason.
  // Anything else (ALL, unknown names, an operator's maintenance drain) never reaches scontrol.
  auto it = std::find_if(nodes_.begin(), nodes_.end(),
                         [&](const slurm::SlurmNode& n) { return n.name == node; });
  if (it == nodes_.end()) return Status::NotFound("no node " + node + " in Slurm's node list");
  SM_ASSIGN_OR_RETURN(bool ours, deps_.store.NodeDrainedBySchedmate(node));
  if (!ours) {
    return Status::FailedPrecondition(
        fmt::format("schedmate did not drain {}: it resumes only nodes it drained itself", node));
  }
  if (!it->drained()) return Status::FailedPrecondition(node + " is not drained");
  if (!StartsWith(it->reason, "schedmate")) {
    return Status::FailedPrecondition(fmt::format(
        "{} was drained again by someone else (reason '{}'): not resumed", node, it->reason));
  }
  ActionRecord a;
  a.at = deps_.clock.Now();
  a.node = node;
  a.kind = ActionKind::kResume;
  a.reason = "requested through the API by " + who;
  a.outcome = ActionOutcome::kPlanned;
  a = RunAction(a, [&](ActionRecord&) -> Result<std::string> {
    SM_RETURN_IF_ERROR(deps_.backend.ResumeNode(node));
    return "resumed " + node;
  });
  drained_this_session_.erase(node);
  Publish(deps_.clock.Now(), slurm_ok_, last_error_, last_tick_);  // the action shows at once
  if (a.outcome == ActionOutcome::kNotRecorded) return Status::Unavailable(a.detail);
  if (a.outcome == ActionOutcome::kFailed) return Status::FailedPrecondition(a.detail);
  return Status::Ok();
}

}  // namespace schedmate::service
