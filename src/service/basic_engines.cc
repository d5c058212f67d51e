#include "service/basic_engines.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/strings.h"

namespace schedmate::service {

std::string_view FailureClassName(FailureClass c) {
  switch (c) {
    case FailureClass::kInfra:
      return "infra";
    case FailureClass::kApp:
      return "app";
    case FailureClass::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view PlannedActionKindName(PlannedAction::Kind k) {
  switch (k) {
    case PlannedAction::Kind::kDrainNode:
      return "drain";
    case PlannedAction::Kind::kRequeue:
      return "requeue";
    case PlannedAction::Kind::kHold:
      return "hold";
    case PlannedAction::Kind::kNotifyUser:
      return "notify";
    case PlannedAction::Kind::kNotifyAdmin:
      return "notify_admin";
  }
  return "notify";
}

// ---------------------------------------------------------------- BasicJobAdvisor

Result<std::unique_ptr<BasicJobAdvisor>> BasicJobAdvisor::Create(store::HistoryStore* history,
                                                                 int64_t max_history) {
  std::unique_ptr<BasicJobAdvisor> advisor(new BasicJobAdvisor());
  if (history != nullptr) {
    store::ListJobsOptions opts;
    opts.finished_only = true;
    opts.limit = max_history;
    SM_ASSIGN_OR_RETURN(auto jobs, history->ListJobs(opts));
    for (const auto& j : jobs) {
      if (j.job.state == JobState::kCompleted) advisor->Add(j.job.user, j.job.name, j.job.duration);
    }
  }
  return advisor;
}

void BasicJobAdvisor::Add(const std::string& user, const std::string& name, Duration d) {
  if (name.empty() || d <= Duration::Zero()) return;
  auto push = [&](std::vector<int64_t>& v) {
    v.push_back(d.seconds());
    if (v.size() > 200) v.erase(v.begin());  // recent jobs matter most
  };
  push(by_user_name_[user + "\t" + name]);
  push(by_name_[name]);
}

namespace {
int64_t Median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int64_t Quantile(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(std::floor(q * static_cast<double>(v.size() - 1)));
  return v[i];
}
}  // namespace

Result<Prediction> BasicJobAdvisor::Predict(const JobContext& job, SimTime now) {
  Prediction p;
  p.engine = "basic-history";
  p.made_at = now;
  const std::vector<int64_t>* matches = nullptr;
  std::string basis;
  if (auto it = by_user_name_.find(job.user + "\t" + job.name); it != by_user_name_.end()) {
    matches = &it->second;
    basis = fmt::format("{} past run(s) of '{}' by {}", it->second.size(), job.name, job.user);
  } else if (auto it2 = by_name_.find(job.name); it2 != by_name_.end()) {
    matches = &it2->second;
    basis = fmt::format("{} past run(s) of '{}' by any user", it2->second.size(), job.name);
  }
  if (matches != nullptr && !matches->empty()) {
    int64_t med = std::max<int64_t>(1, Median(*matches));
    p.duration = Duration::Seconds(med);
    p.low = Duration::Seconds(Quantile(*matches, 0.1));
    p.high = Duration::Seconds(Quantile(*matches, 0.9));
    p.confidence = std::min(0.9, 0.3 + 0.1 * static_cast<double>(matches->size()));
    p.explanation = fmt::format("median of {}: {}", basis, FormatDuration(p.duration));
    return p;
  }
  if (job.time_limit_min && *job.time_limit_min > 0) {
    p.duration = Duration::Minutes(*job.time_limit_min) / 2;
    p.low = Duration::Minutes(*job.time_limit_min) / 10;
    p.high = Duration::Minutes(*job.time_limit_min);
    p.confidence = 0.15;
    p.explanation =
        fmt::format("no similar past job; half the requested limit of {} min", *job.time_limit_min);
    return p;
  }
  p.duration = Duration::Hours(1);
  p.low = Duration::Minutes(5);
  p.high = Duration::Hours(4);
  p.confidence = 0.05;
  p.explanation = "no similar past job and no time limit; 1-hour prior";
  return p;
}

void BasicJobAdvisor::Observe(const JobContext& job, Duration actual, JobState state) {
  if (state == JobState::kCompleted) Add(job.user, job.name, actual);
}

// ---------------------------------------------------------------- BasicLogTracker

BasicLogTracker::BasicLogTracker(BasicLogTrackerOptions options)
    : options_(options),
      step_re_(std::make_unique<re2::RE2>(
          R"((?i)\b(?:global_step|step|iter|iteration)\b\s*[:=#]?\s*(\d+)(?:\s*/\s*(\d+))?)")),
      loss_re_(std::make_unique<re2::RE2>(
          R"((?i)\bloss\b\s*[:=]?\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?))")),
      step_time_re_(std::make_unique<re2::RE2>(
          R"((?i)\b(?:step_time|time/step|sec/step|s/it)\b\s*[:=]?\s*([0-9]*\.?[0-9]+)\s*(ms|s)?)")),
      its_re_(std::make_unique<re2::RE2>(R"(([0-9]*\.?[0-9]+)\s*it/s)")) {}

BasicLogTracker::~BasicLogTracker() = default;

void BasicLogTracker::ParseLine(std::string_view line, State& s, SimTime now) {
  if (line.size() > 4096) line = line.substr(0, 4096);
  re2::StringPiece in(line.data(), line.size());
  std::string step_text, total_text, num, unit;
  if (RE2::PartialMatch(in, *step_re_, &step_text, &total_text)) {
    if (auto step = ParseInt(step_text)) {
      if (!s.latest.step || *step != *s.latest.step) s.last_progress = now;
      s.latest.step = *step;
      if (auto total = ParseInt(total_text); total && *total > 0) s.latest.total_steps = *total;
      if (s.first_step < 0) {
        s.first_step = *step;
        s.first_step_at = now;
      }
    }
  }
  if (RE2::PartialMatch(in, *loss_re_, &num)) {
    if (auto v = ParseDouble(num); v && std::isfinite(*v)) s.latest.loss = *v;
  }
  if (RE2::PartialMatch(in, *step_time_re_, &num, &unit)) {
    if (auto v = ParseDouble(num)) s.latest.step_time_s = unit == "ms" ? *v / 1000 : *v;
  } else if (RE2::PartialMatch(in, *its_re_, &num)) {
    if (auto v = ParseDouble(num); v && *v > 0) s.latest.step_time_s = 1.0 / *v;
  }
}

Result<LogMetrics> BasicLogTracker::Observe(const std::string& key, const std::string& path,
                                            SimTime now) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("log not found: " + path);
  auto [it, inserted] = state_.try_emplace(key);
  State& s = it->second;
  if (inserted) s.last_progress = now;
  in.seekg(0, std::ios::end);
  int64_t size = static_cast<int64_t>(in.tellg());
  if (size < s.offset) {  // truncated (requeue rewrote it): start over
    s = State();
    s.last_progress = now;
  }
  if (size - s.offset > static_cast<int64_t>(options_.max_read_bytes)) {
    s.offset = size - static_cast<int64_t>(options_.max_read_bytes);
    s.partial.clear();
  }
  if (size > s.offset) {
    std::string data(static_cast<size_t>(size - s.offset), '\0');
    in.seekg(s.offset);
    in.read(data.data(), static_cast<std::streamsize>(data.size()));
    data.resize(static_cast<size_t>(in.gcount()));
    s.offset += static_cast<int64_t>(data.size());
    data.insert(0, s.partial);
    size_t last_nl = data.rfind('\n');
    s.partial = last_nl == std::string::npos ? data : data.substr(last_nl + 1);
    if (s.partial.size() > 4096) s.partial.clear();
    if (last_nl != std::string::npos) {
      for (auto line : Split(std::string_view(data).substr(0, last_nl), '\n')) {
        // Progress bars redraw with '\r'; the last segment is the current state.
        auto cr = line.rfind('\r');
        ParseLine(cr == std::string_view::npos ? line : line.substr(cr + 1), s, now);
      }
    }
  }
  LogMetrics& m = s.latest;
  m.at = now;
  m.bytes_read = s.offset;
  m.note.clear();
  if (m.step && m.total_steps && *m.total_steps > 0) {
    m.progress =
        std::clamp(static_cast<double>(*m.step) / static_cast<double>(*m.total_steps), 0.0, 1.0);
  }
  // Seconds per step measured by observation, for ETA and slowdown.
  double observed_rate = 0;
  if (m.step && s.first_step >= 0 && *m.step > s.first_step && now > s.first_step_at) {
    observed_rate =
        (now - s.first_step_at).seconds_f() / static_cast<double>(*m.step - s.first_step);
  }
  double rate = m.step_time_s.value_or(observed_rate);
  if (m.step && m.total_steps && rate > 0 && *m.total_steps >= *m.step) {
    m.eta = Duration::FromSecondsF(rate * static_cast<double>(*m.total_steps - *m.step));
  }
  if (rate > 0) {
    if (s.early_rate <= 0 && m.step && s.first_step >= 0 && *m.step - s.first_step >= 5) {
      s.early_rate = rate;
    }
    m.slowdown = s.early_rate > 0 && rate > options_.slowdown_ratio * s.early_rate;
    if (m.slowdown) m.note = fmt::format("slowdown x{:.1f}", rate / s.early_rate);
  }
  m.stalled = m.step.has_value() && now - s.last_progress >= options_.stall_after;
  if (m.stalled) m.note = "stalled for " + FormatDuration(now - s.last_progress);
  return m;
}

void BasicLogTracker::Forget(const std::string& key) { state_.erase(key); }

// ---------------------------------------------------------------- BasicFailureDiagnoser

namespace {

// The path in the last line before `before` that reports saving a checkpoint ("saved checkpoint
// to ckpt/step_1200.pt", "Saving model checkpoint: /ckpt/run3/"); nullopt when none.
std::optional<std::string> FindCheckpointLine(const std::vector<std::string_view>& lines,
                                              size_t before) {
  static const re2::RE2 kSaved(
      R"((?i)\b(sav(e|ed|ing)|wrote|writ(e|ing|ten))\b.*\b(checkpoint|ckpt))");
  static const re2::RE2 kFailed(R"((?i)(fail|error|unable|cannot|could not))");
  static const re2::RE2 kPath(
      R"(([\w.~+-]*/[^\s'",;)\]]+|[\w.+-]+\.(?:pt|pth|ckpt|safetensors|bin)\b))");
  for (size_t i = std::min(before, lines.size()); i-- > 0;) {
    re2::StringPiece line(lines[i].data(), lines[i].size());
    if (line.size() > 4096 || !re2::RE2::PartialMatch(line, kSaved) ||
        re2::RE2::PartialMatch(line, kFailed)) {
      continue;
    }
    std::string path, last;
    while (re2::RE2::FindAndConsume(&line, kPath, &path)) last = path;
    while (!last.empty() && (last.back() == '.' || last.back() == ':')) last.pop_back();
    if (!last.empty() && last.find("://") == std::string::npos) return last;
  }
  return std::nullopt;
}

}  // namespace

BasicFailureDiagnoser::BasicFailureDiagnoser() {
  auto add = [](std::vector<Rule>& rules, const char* re, FailureClass cls, const char* category,
                const char* reason) {
    rules.push_back(Rule{std::make_unique<re2::RE2>(re), cls, category, reason});
  };
  add(infra_rules_, R"((?i)\bXid\b[^0-9]{0,20}(\d+)?)", FailureClass::kInfra, "gpu_xid",
      "NVIDIA Xid error reported by the GPU driver");
  add(infra_rules_, R"((?i)(uncorrectable|double[- ]bit)\s+ECC|ECC\s+error)", FailureClass::kInfra,
      "ecc", "GPU memory ECC error");
  add(infra_rules_, R"((?i)fallen off the bus|GPU is lost|no CUDA-capable device is detected)",
      FailureClass::kInfra, "gpu_lost", "GPU disappeared from the node");
  add(infra_rules_,
      R"((?i)NCCL.*(unhandled system error|remote process exited|Connection reset|ibv_))",
      FailureClass::kInfra, "nccl_network", "NCCL communication failure (network or peer node)");
  add(app_rules_, R"((?i)CUDA out of memory|OutOfMemoryError)", FailureClass::kApp, "cuda_oom",
      "the job ran out of GPU memory");
  add(app_rules_, R"(^\s*([A-Za-z_][A-Za-z0-9_.]*(Error|Exception))(:|$))", FailureClass::kApp,
      "python_exception", "the program raised an exception");
  add(app_rules_, R"((?i)segmentation fault|core dumped)", FailureClass::kApp, "segfault",
      "the program crashed (segmentation fault)");
  add(app_rules_, R"((?i)\b(error|fatal)\b)", FailureClass::kApp, "error_line",
      "the program reported an error");
}

BasicFailureDiagnoser::~BasicFailureDiagnoser() = default;

Result<Diagnosis> BasicFailureDiagnoser::Diagnose(const FailedJob& job, std::string_view log) {
  Diagnosis d;
  d.engine = "basic-signatures";
  auto lines = Split(log, '\n');
  auto finish = [&](const Rule& rule, size_t index) {
    d.cls = rule.cls;
    d.category = rule.category;
    d.evidence_line = static_cast<int64_t>(index + 1);
    std::string ev(Trim(lines[index]));
    if (ev.size() > 300) ev.resize(300);
    d.evidence = ev;
    d.reason = fmt::format("{} (line {}: {})", rule.reason, d.evidence_line, ev);
  };
  // Infrastructure first: one Xid line outweighs the application tracebacks it causes.
  for (size_t i = 0; i < lines.size() && d.cls == FailureClass::kUnknown; ++i) {
    for (const auto& rule : infra_rules_) {
      if (RE2::PartialMatch(re2::StringPiece(lines[i].data(), lines[i].size()), *rule.re)) {
        finish(rule, i);
        break;
      }
    }
  }
  if (d.cls == FailureClass::kUnknown && job.state == "NODE_FAIL") {
    d.cls = FailureClass::kInfra;
    d.category = "node_fail";
    d.reason = "Slurm reports NODE_FAIL: the node stopped responding";
  }
  if (d.cls == FailureClass::kInfra) {
    // Blame the node the evidence names, else the job's only node.
    for (const auto& n : job.nodes) {
      if (!d.evidence.empty() && d.evidence.find(n) != std::string::npos) d.node = n;
    }
    if (d.node.empty() && job.nodes.size() == 1) d.node = job.nodes.front();
    d.checkpoint = FindCheckpointLine(
        lines, d.evidence_line > 0 ? static_cast<size_t>(d.evidence_line - 1) : lines.size());
    PlannedAction drain;
    drain.kind = PlannedAction::Kind::kDrainNode;
    drain.node = d.node;
    drain.reason = fmt::format("{} in job {}", d.category, job.job_id);
    if (!d.node.empty()) d.plan.push_back(drain);
    if (job.retries_used >= job.retry_budget) {
      PlannedAction hold;
      hold.kind = PlannedAction::Kind::kHold;
      hold.reason = fmt::format(
          "infrastructure failure ({}) after {} requeue(s) by schedmate; retry budget of {} used",
          d.category, job.retries_used, job.retry_budget);
      d.plan.push_back(hold);
      PlannedAction admin;
      admin.kind = PlannedAction::Kind::kNotifyAdmin;
      admin.reason =
          fmt::format("job {} failed repeatedly on infrastructure: {}", job.job_id, hold.reason);
      admin.hint =
          "check the nodes it ran on, then `scontrol release " + job.job_id + "` or cancel it";
      d.plan.push_back(std::move(admin));
      return d;
    }
    PlannedAction requeue;
    requeue.kind = PlannedAction::Kind::kRequeue;
    requeue.attempt = job.retries_used + 1;
    if (!d.node.empty()) requeue.exclude_nodes.push_back(d.node);
    requeue.checkpoint = d.checkpoint;
    requeue.reason = fmt::format("infrastructure failure ({}), not the job's fault", d.category);
    d.plan.push_back(std::move(requeue));
    PlannedAction user;
    user.kind = PlannedAction::Kind::kNotifyUser;
    user.reason = fmt::format("your job hit an infrastructure failure ({}) and was requeued; {}",
                              d.category, d.reason);
    d.plan.push_back(std::move(user));
    return d;
  }
  // Application: rules in priority order; within a rule the LAST match (a traceback ends with
  // the exception that killed the program).
  for (const auto& rule : app_rules_) {
    for (size_t i = lines.size(); i-- > 0;) {
      if (RE2::PartialMatch(re2::StringPiece(lines[i].data(), lines[i].size()), *rule.re)) {
        finish(rule, i);
        break;
      }
    }
    if (d.cls != FailureClass::kUnknown) break;
  }
  if (d.cls == FailureClass::kUnknown) {
    if (job.state == "OUT_OF_MEMORY") {
      d.cls = FailureClass::kApp;
      d.category = "host_oom";
      d.reason = "the job exceeded its memory allocation";
    } else if (job.state == "TIMEOUT") {
      d.cls = FailureClass::kApp;
      d.category = "timeout";
      d.reason = "the job reached its time limit";
    } else {
      d.reason = fmt::format("exit code {} with no recognised error in the log", job.exit_code);
    }
  }
  PlannedAction notify;
  notify.kind = PlannedAction::Kind::kNotifyUser;
  notify.reason = d.reason;
  d.plan.push_back(std::move(notify));
  return d;
}

}  // namespace schedmate::service
