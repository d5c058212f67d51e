#include "service/component_adapters.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "advisor/builtin_extractor.h"
#include "advisor/fingerprint.h"
#include "advisor/history_estimator.h"
#include "core/strings.h"
#include "failure/failure_handler.h"
#include "failure/llm_failure_classifier.h"
#include "failure/recovery_planner.h"
#include "failure/signature_set.h"
#include "llm/engine.h"
#include "llm/llm_setup.h"
#include "service/log_ranks.h"
#include "tracker/line_classifier.h"
#include "tracker/metric_extractor.h"
#include "tracker/metric_tracker.h"
#include "tracker/signals.h"

namespace schedmate::service {

// ---------------------------------------------------------------- AdvisorJobAdvisor

namespace {

JobRecord RecordOf(const JobContext& c) {
  JobRecord j;
  j.id = c.job_id;
  j.user = c.user;
  j.vc = c.partition;
  j.name = c.name;
  j.gpus = GpuAmount::Whole(c.gpus);
  j.nodes = c.nodes;
  j.submit = c.submit;
  if (c.time_limit_min) j.time_limit = Duration::Minutes(*c.time_limit_min);
  return j;
}

}  // namespace

AdvisorJobAdvisor::AdvisorJobAdvisor()
    : estimator_(std::make_unique<advisor::HistoryEstimator>()),
      extractor_(std::make_unique<advisor::BuiltinMetadataExtractor>()) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "schedmate-noroot-XXXXXX").string();
  if (mkdtemp(tmpl.data()) != nullptr) empty_root_ = tmpl;
}
AdvisorJobAdvisor::~AdvisorJobAdvisor() {
  std::error_code ec;
  if (!empty_root_.empty()) std::filesystem::remove(empty_root_, ec);
}

Result<std::unique_ptr<AdvisorJobAdvisor>> AdvisorJobAdvisor::Create(store::HistoryStore& history) {
  std::unique_ptr<AdvisorJobAdvisor> a(new AdvisorJobAdvisor());
  store::ListJobsOptions opts;
  opts.finished_only = true;
  opts.limit = 50000;
  SM_ASSIGN_OR_RETURN(auto jobs, history.ListJobs(opts));
  for (const auto& s : jobs) {
    if (!s.finish) continue;
    advisor::JobFingerprint fp = advisor::FingerprintOf(s.job);
    if (!s.fingerprint.empty()) fp.workload = s.fingerprint;
    a->estimator_->ObserveWithFingerprint(s.job, *s.finish, fp);
  }
  return a;
}

Result<Prediction> AdvisorJobAdvisor::Predict(const JobContext& job, SimTime now) {
  JobRecord record = RecordOf(job);
  std::optional<advisor::JobMetadata> metadata;
  if (!job.script.empty()) {
    advisor::JobSource source;
    source.script_text = job.script;
    source.script_name = job.name.empty() ? "job.sh" : job.name + ".sh";
    std::error_code ec;
    if (!job.work_dir.empty() && std::filesystem::is_directory(job.work_dir, ec)) {
      source.root = job.work_dir;
    } else {
      // Without the job's directory the script is read alone: files it names are never looked
      // up in the service's own working directory.
      source.root = empty_root_;
    }
    auto meta = extractor_->Extract(source);
    if (meta.ok()) {
      meta->ApplyWorkloadTo(record);
      metadata = std::move(meta).value();
    }
  }
  // With metadata, its semantics ride along (the semantic cold start of duration_priors.h).
  advisor::JobFingerprint fp =
      metadata ? advisor::FingerprintOf(record, *metadata) : advisor::FingerprintOf(record);
  advisor::DetailedEstimate d = estimator_->EstimateDetailed(record, fp);
  Prediction p;
  p.duration = d.estimate.duration;
  p.low = d.estimate.low;
  p.high = d.estimate.high;
  p.confidence = d.estimate.confidence;
  p.explanation = d.tier + ": " + d.estimate.explanation;
  p.engine = "advisor-history";
  p.made_at = now;
  p.fingerprint = fp.workload;
  return p;
}

void AdvisorJobAdvisor::Observe(const JobContext& job, Duration actual, JobState state) {
  JobRecord record = RecordOf(job);
  record.duration = actual;
  record.state = state;
  advisor::JobFingerprint fp = advisor::FingerprintOf(record);
  if (!job.fingerprint.empty()) fp.workload = job.fingerprint;
  estimator_->ObserveWithFingerprint(record, job.submit + actual, fp);
}

// ---------------------------------------------------------------- TrackerLogTracker

struct TrackerLogTracker::State {
  State(tracker::LineClassifier& c, tracker::MetricExtractor& e) : tracker(c, e) {}
  tracker::MetricTracker tracker;
  tracker::SignalAnalyzer signals;
  LogRankScanner ranks;
  int64_t offset = 0;
  int64_t line_no = 0;
  std::string partial;
};

TrackerLogTracker::TrackerLogTracker(Duration stall_after, double slowdown_ratio,
                                     size_t max_read_bytes)
    : stall_after_(stall_after),
      slowdown_ratio_(slowdown_ratio),
      max_read_bytes_(max_read_bytes),
      classifier_(std::make_unique<tracker::BuiltinLineClassifier>()),
      extractor_(std::make_unique<tracker::BuiltinMetricExtractor>()) {}
TrackerLogTracker::~TrackerLogTracker() = default;

Result<LogMetrics> TrackerLogTracker::Observe(const std::string& key, const std::string& path,
                                              SimTime now) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("log not found: " + path);
  auto& slot = state_[key];
  auto fresh = [&] {
    slot = std::make_unique<State>(*classifier_, *extractor_);
    tracker::SignalOptions opts;
    opts.min_stall_s = stall_after_.seconds_f();
    opts.slowdown_share = slowdown_ratio_ - 1.0;
    slot->signals = tracker::SignalAnalyzer(opts);
    slot->tracker.SetSink(
        [s = slot.get()](const tracker::ProgressRecord& r) { s->signals.Add(r); });
  };
  if (!slot) fresh();
  in.seekg(0, std::ios::end);
  int64_t size = static_cast<int64_t>(in.tellg());
  if (size < slot->offset) fresh();  // truncated: a requeue rewrote the log
  State& s = *slot;
  if (size - s.offset > static_cast<int64_t>(max_read_bytes_)) {
    // Too much at once (a 10 GB log): keep the newest bytes; line numbers become approximate.
    s.offset = size - static_cast<int64_t>(max_read_bytes_);
    s.partial.clear();
  }
  double now_s = now.seconds_f();
  if (size > s.offset) {
    std::string data(static_cast<size_t>(size - s.offset), '\0');
    in.seekg(s.offset);
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    data.resize(static_cast<size_t>(in.gcount()));
    uint64_t base = static_cast<uint64_t>(s.offset) - s.partial.size();
    s.offset += static_cast<int64_t>(data.size());
    data.insert(0, s.partial);
    size_t last_nl = data.rfind('\n');
    s.partial = last_nl == std::string::npos ? data : data.substr(last_nl + 1);
    if (s.partial.size() > (size_t{1} << 16)) s.partial.clear();
    if (last_nl != std::string::npos) {
      size_t pos = 0;
      while (pos <= last_nl) {
        size_t nl = data.find('\n', pos);
        std::string_view line = std::string_view(data).substr(pos, nl - pos);
        s.ranks.AddLine(line);
        s.tracker.AddLine(line, ++s.line_no, base + pos, now_s);
        pos = nl + 1;
      }
    }
    s.tracker.FlushPending();
  }
  LogMetrics m;
  m.at = now;
  m.bytes_read = s.offset;
  m.ranks = s.ranks.Ranks();
  const auto& latest = s.tracker.Latest();
  if (!latest) return m;
  const auto& v = latest->v;
  m.step = v.step;
  m.total_steps = v.total_steps;
  m.loss = v.loss;
  m.step_time_s = v.step_time_s;
  tracker::Signals sig = s.signals.Compute(*latest, now_s);
  m.progress = sig.progress;
  if (sig.eta_s) m.eta = Duration::FromSecondsF(*sig.eta_s);
  // Too few records to know the job's usual interval (one line, then silence: a hang at start-up
  // looks like this): the service's own threshold decides alone.
  if (!sig.usual_interval_s && sig.since_last_progress_s &&
      *sig.since_last_progress_s > stall_after_.seconds_f()) {
    sig.stalled = true;
  }
  m.stalled = sig.stalled;
  m.slowdown = sig.slowdown;
  if (sig.stalled && sig.since_last_progress_s) {
    m.note = "stalled for " + FormatDuration(Duration::FromSecondsF(*sig.since_last_progress_s));
  } else if (sig.slowdown && sig.throughput_trend) {
    m.note = fmt::format("slowdown: throughput {:+.0f}% vs baseline", *sig.throughput_trend * 100);
  } else if (sig.loss_nan) {
    m.note = "loss is NaN/inf";
  } else if (sig.loss_exploding) {
    m.note = "loss exploding";
  }
  return m;
}

void TrackerLogTracker::Forget(const std::string& key) { state_.erase(key); }

// ---------------------------------------------------------------- FailureHandlerDiagnoser

namespace {
// Directory entries looked at when searching a job's directory for its newest checkpoint.
constexpr size_t kMaxCheckpointScanEntries = 20000;
}  // namespace

FailureHandlerDiagnoser::FailureHandlerDiagnoser() = default;
FailureHandlerDiagnoser::~FailureHandlerDiagnoser() = default;

Result<std::unique_ptr<FailureHandlerDiagnoser>> FailureHandlerDiagnoser::Create(
    Duration backoff_base, Duration backoff_cap, std::shared_ptr<llm::LlmSetup> llm) {
  std::unique_ptr<FailureHandlerDiagnoser> d(new FailureHandlerDiagnoser());
  d->llm_ = std::move(llm);
  d->backoff_base_ = backoff_base;
  d->backoff_cap_ = std::max(backoff_base, backoff_cap);
  SM_ASSIGN_OR_RETURN(failure::SignatureSet set, failure::SignatureSet::Builtin());
  d->signatures_ = std::make_unique<failure::SignatureSet>(std::move(set));
  d->handler_ = std::make_unique<failure::FailureHandler>(*d->signatures_, /*examples=*/nullptr);
  return d;
}

Result<Diagnosis> FailureHandlerDiagnoser::Diagnose(const FailedJob& job, std::string_view log) {
  failure::LogView view = failure::LogView::FromString(std::string(log));
  std::string engine = "failure-handler";
  std::optional<failure::Diagnosis> by_llm;
  if (llm_ != nullptr) {
    auto r = failure::DiagnoseWithLlm(llm_->chat(), llm_->chat_model(), *signatures_,
                                      /*examples=*/nullptr, {}, view);
    if (r.ok()) {
      by_llm = std::move(r).value();
      engine += " " + llm::LlmEngineLabel(llm_->chat_model());
    } else {
      engine += " " + llm::FallbackReason(r.status());
    }
  }
  failure::Diagnosis fd;
  if (by_llm) {
    fd = std::move(*by_llm);
  } else {
    SM_ASSIGN_OR_RETURN(fd, handler_->Diagnose(view));
  }
  Diagnosis d;
  d.engine = engine;
  d.category = fd.category;
  switch (fd.label) {
    case failure::FailureLabel::kInfrastructure:
      d.cls = FailureClass::kInfra;
      break;
    case failure::FailureLabel::kApplication:
      d.cls = FailureClass::kApp;
      break;
    case failure::FailureLabel::kUnknown:
      d.cls = FailureClass::kUnknown;
      break;
  }
  if (fd.root_cause) {
    d.evidence_line = fd.root_cause->line_no;
    d.evidence = std::string(Trim(fd.root_cause->text)).substr(0, 300);
  }
  if (d.cls == FailureClass::kUnknown && job.state == "NODE_FAIL") {
    // Slurm itself saw the node die; the log (often silent) cannot contradict that.
    d.cls = FailureClass::kInfra;
    d.category = "node_fail";
    fd.label = failure::FailureLabel::kInfrastructure;
    fd.drain_suspect = true;
    fd.explanation = "Slurm reports NODE_FAIL: the node stopped responding";
  }
  if (d.cls == FailureClass::kUnknown && fd.category.empty()) {
    if (job.state == "TIMEOUT") {
      d.cls = FailureClass::kApp;
      d.category = "timeout";
      fd.label = failure::FailureLabel::kApplication;
      fd.explanation = "the job reached its time limit";
    } else if (job.state == "OUT_OF_MEMORY") {
      d.cls = FailureClass::kApp;
      d.category = "host_oom";
      fd.label = failure::FailureLabel::kApplication;
      fd.explanation = "the job exceeded its memory allocation";
    }
  }
  d.reason = fd.explanation.empty()
                 ? fmt::format("exit code {}; no failure recognised in the log", job.exit_code)
                 : fd.explanation;
  if (!d.evidence.empty()) d.reason += fmt::format(" (line {}: {})", d.evidence_line, d.evidence);
  if (!fd.hint.empty()) d.reason += "; next: " + fd.hint;

  failure::JobContext ctx;
  if (!fd.checkpoint && !job.work_dir.empty()) {
    // The log names no saved checkpoint: the newest one in the job's directory (bounded scan).
    auto found = failure::FindLatestCheckpointInDir(job.work_dir, kMaxCheckpointScanEntries);
    if (found.ok() && found->has_value()) ctx.checkpoint = **found;
  }
  d.checkpoint = fd.checkpoint ? fd.checkpoint : ctx.checkpoint;
  ctx.job_id = job.job_id;
  ctx.nodes = job.nodes;
  ctx.restarts = job.retries_used;  // the budget that binds is schedmate's own requeues
  failure::RecoveryPolicy policy;
  policy.max_infra_retries = job.retry_budget;
  policy.backoff_base = backoff_base_;
  policy.backoff_cap = backoff_cap_;
  failure::RecoveryPlan plan = failure::PlanRecovery(fd, ctx, policy);
  for (const auto& a : plan) {
    PlannedAction p;
    p.reason = a.reason.empty() ? d.reason : a.reason;
    p.hint = a.hint;
    switch (a.kind) {
      case failure::RecoveryAction::Kind::kDrainNode:
        p.kind = PlannedAction::Kind::kDrainNode;
        p.node = a.node;
        p.reason =
            fmt::format("{} in job {}", d.category.empty() ? "failure" : d.category, job.job_id);
        if (d.node.empty()) d.node = a.node;
        break;
      case failure::RecoveryAction::Kind::kRequeue:
        p.kind = PlannedAction::Kind::kRequeue;
        p.delay = a.delay;
        p.attempt = a.attempt;
        p.exclude_nodes = a.exclude_nodes;
        p.checkpoint = a.checkpoint;
        break;
      case failure::RecoveryAction::Kind::kHold:
        p.kind = PlannedAction::Kind::kHold;
        break;
      case failure::RecoveryAction::Kind::kNotifyUser:
        p.kind = PlannedAction::Kind::kNotifyUser;
        break;
      case failure::RecoveryAction::Kind::kNotifyAdmin:
        p.kind = PlannedAction::Kind::kNotifyAdmin;
        break;
    }
    d.plan.push_back(std::move(p));
  }
  if (d.plan.empty()) {
    PlannedAction notify;
    notify.reason = d.reason;
    d.plan.push_back(std::move(notify));
  }
  return d;
}

}  // namespace schedmate::service
