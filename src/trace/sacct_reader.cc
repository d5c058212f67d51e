// Reader for Slurm accounting exports: `sacct -P -o ...` (pipe-separated with a header) and
// `sacct --json` (openapi dbv0.0.38 and the later shapes whose numbers are {set, infinite,
// number} objects). See trace_reader.h (kSacct) for the mapping.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/strings.h"
#include "trace/csv.h"
#include "trace/reader_internal.h"

namespace schedmate::trace::internal {
namespace {

constexpr int64_t kMicrosPerSecond = 1'000'000;

// One job as read, absolute times in microseconds since 1970 (-1: unknown).
struct RawJob {
  JobRecord job;
  int64_t submit_us = -1;
  int64_t eligible_us = -1;
  int64_t start_us = -1;
};

std::string Excerpt(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

// "Unknown", "None", "" and friends: a time sacct does not know.
bool IsUnsetText(std::string_view s) {
  const std::string t = ToLower(Trim(s));
  return t.empty() || t == "unknown" || t == "none" || t == "n/a";
}

// Slurm's time formats to seconds: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS"
// (sacct prints Elapsed as "[D-]HH:MM:SS"); the last part may have a fraction. false otherwise.
bool ParseSlurmDuration(std::string_view s, double& seconds) {
  s = Trim(s);
  if (s.empty()) return false;
  int64_t days = 0;
  bool has_days = false;
  if (size_t dash = s.find('-'); dash != std::string_view::npos) {
    if (!ParseIntField(s.substr(0, dash), days) || days < 0 || days > 200'000'000) return false;
    has_days = true;
    s = s.substr(dash + 1);
  }
  std::vector<std::string_view> parts = Split(s, ':');
  if (parts.empty() || parts.size() > 3) return false;
  double total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    double v = 0;
    if (i + 1 == parts.size()) {
      if (!ParseRealField(parts[i], v) || v < 0 || v > 1e12) return false;
    } else {
      int64_t iv = 0;
      if (!ParseIntField(parts[i], iv) || iv < 0 || iv > 1'000'000'000) return false;
      v = static_cast<double>(iv);
    }
    total = total * 60 + v;
  }
  static constexpr double kUnit[2][3] = {{60, 1, 1}, {3600, 60, 1}};  // [has_days][parts - 1]
  seconds = static_cast<double>(days) * 86400 + total * kUnit[has_days ? 1 : 0][parts.size() - 1];
  return true;
}

// A job's state: the first word ("CANCELLED by 0" -> CANCELLED), upper case.
std::string StateWord(std::string_view s) {
  s = Trim(s);
  size_t sp = s.find(' ');
  std::string w(s.substr(0, sp));
  for (char& c : w) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return w;
}

// States of jobs that have not finished: they have no run time yet.
bool IsUnfinishedState(std::string_view state) {
  return state == "PENDING" || state == "RUNNING" || state == "REQUEUED" || state == "RESIZING" ||
         state == "SUSPENDED" || state == "CONFIGURING" || state == "COMPLETING" ||
         state == "REQUEUE_HOLD" || state == "REQUEUE_FED" || state == "SIGNALING" ||
         state == "STAGE_OUT" || state == "STOPPED";
}

JobState MapState(std::string_view state) {
  if (state == "DEADLINE" || state == "BOOT_FAIL") return JobState::kFailed;
  return ParseJobState(state);
}

// What kind of row a sacct JobID is.
enum class IdKind { kJob, kStep, kPendingArray, kBad };
IdKind ClassifyJobId(std::string_view id) {
  id = Trim(id);
  if (id.empty()) return IdKind::kBad;
  if (id.find('.') != std::string_view::npos) return IdKind::kStep;          // 123.batch, 123_4.0
  if (id.find('[') != std::string_view::npos) return IdKind::kPendingArray;  // 123_[1-9%2]
  // 123, 123_4, 123+1 (heterogeneous component).
  size_t i = 0;
  auto digits = [&] {
    size_t b = i;
    while (i < id.size() && id[i] >= '0' && id[i] <= '9') ++i;
    return i > b;
  };
  if (!digits()) return IdKind::kBad;
  if (i < id.size() && (id[i] == '_' || id[i] == '+')) {
    ++i;
    if (!digits()) return IdKind::kBad;
  }
  return i == id.size() ? IdKind::kJob : IdKind::kBad;
}

// GPUs, CPUs and nodes from a TRES string "billing=1,cpu=1,gres/gpu=2,gres/gpu:a100=2,node=1".
// Plain gres/gpu wins over the sum of typed entries. Returns an error text or "".
struct Tres {
  std::optional<int64_t> gpus;
  int64_t cpus = 0;
  int64_t nodes = 0;
};
std::string ParseTres(std::string_view s, std::string_view column, Tres& out) {
  int64_t typed = 0;
  bool has_typed = false;
  for (std::string_view item : Split(Trim(s), ',')) {
    item = Trim(item);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return fmt::format("{}: '{}' is not key=value", column, Excerpt(item));
    }
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    const bool gpu_plain = key == "gres/gpu";
    const bool gpu_typed = StartsWith(key, "gres/gpu:");
    if (!gpu_plain && !gpu_typed && key != "cpu" && key != "node") continue;
    int64_t v = 0;
    if (!ParseIntField(value, v)) {
      return fmt::format("{}: {}: '{}' is not a count", column, key, Excerpt(value));
    }
    const double hi = key == "cpu" || key == "node" ? static_cast<double>(INT32_MAX)
                                                    : static_cast<double>(kMaxTraceJobGpus);
    if (v < 0 || static_cast<double>(v) > hi) {
      return OutOfRange(fmt::format("{} {}", column, key), static_cast<double>(v), 0, hi);
    }
    if (gpu_plain) out.gpus = v;
    if (gpu_typed) {
      typed = std::min<int64_t>(typed + v, kMaxTraceJobGpus + 1);
      has_typed = true;
    }
    if (key == "cpu") out.cpus = v;
    if (key == "node") out.nodes = v;
  }
  if (!out.gpus && has_typed) {
    if (typed > kMaxTraceJobGpus) {
      return OutOfRange(fmt::format("{} gres/gpu", column), static_cast<double>(typed), 0,
                        static_cast<double>(kMaxTraceJobGpus));
    }
    out.gpus = typed;
  }
  return "";
}

// Appends the jobs to the table with times relative to the earliest submission, in file order.
// A job's simulated submit time is its Eligible time when that is known and not earlier than
// Submit (held jobs, dependencies, --begin): Slurm's age factor and queue wait start there.
void Finish(std::vector<RawJob>& raw, JobTable& table) {
  int64_t origin = INT64_MAX;
  for (const auto& r : raw) origin = std::min(origin, r.submit_us);
  for (auto& r : raw) {
    int64_t at = r.submit_us;
    if (r.eligible_us >= r.submit_us) at = r.eligible_us;
    r.job.submit = SimTime::FromMicros(at - origin);
    if (r.start_us >= at) r.job.observed_wait = Duration::Micros(r.start_us - at);
    table.jobs.push_back(std::move(r.job));
  }
}

// ---------------------------------------------------------------------------------------------
// sacct -P

// The columns of a `sacct -P` header, -1 when absent.
struct SacctColumns {
  explicit SacctColumns(const HeaderMap& h)
      : id(h.Find({"jobid"})),
        user(h.Find({"user"})),
        account(h.Find({"account"})),
        part(h.Find({"partition"})),
        qos(h.Find({"qos"})),
        name(h.Find({"jobname"})),
        submit(h.Find({"submit"})),
        eligible(h.Find({"eligible"})),
        start(h.Find({"start"})),
        end(h.Find({"end"})),
        elapsed(h.Find({"elapsed"})),
        limit(h.Find({"timelimit"})),
        alloc(h.Find({"alloctres"})),
        req(h.Find({"reqtres"})),
        nnodes(h.Find({"nnodes"})),
        state(h.Find({"state"})) {}

  // The required columns (or pairs of alternatives) the header lacks.
  std::vector<std::string> Missing() const {
    std::vector<std::string> missing;
    if (id < 0) missing.push_back("JobID");
    if (submit < 0) missing.push_back("Submit");
    if (start < 0) missing.push_back("Start");
    if (elapsed < 0 && end < 0) missing.push_back("Elapsed or End");
    if (alloc < 0 && req < 0) missing.push_back("AllocTRES or ReqTRES");
    return missing;
  }

  int id, user, account, part, qos, name, submit, eligible, start, end, elapsed, limit, alloc, req,
      nnodes, state;
};

// Reads the fields of one sacct -P row; the first problem is kept in `why` and every later read
// is skipped once `why` is set.
class SacctRowFields {
 public:
  SacctRowFields(RowParser& p, const SacctColumns& c, std::string& why) : p_(p), c_(c), why_(why) {}

  // A date column in microseconds since 1970; -1 when absent or unset (a problem if `required`).
  int64_t Date(int col, std::string_view what, bool required) {
    if (col < 0 || !why_.empty()) return -1;
    std::string_view t = p_.Text(col);
    if (IsUnsetText(t)) {
      if (required) why_ = fmt::format("{}: no time", what);
      return -1;
    }
    int64_t us = 0;
    if (!ParseDateTimeUtc(t, us)) {
      why_ = fmt::format("{}: '{}' is not a date (YYYY-MM-DDTHH:MM:SS)", what, Excerpt(t));
      return -1;
    }
    if (us < 0 || static_cast<double>(us) > kMaxTraceSeconds * kMicrosPerSecond) {
      why_ = OutOfRange(what, static_cast<double>(us) / kMicrosPerSecond, 0, kMaxTraceSeconds);
      return -1;
    }
    return us;
  }

  // The run time in seconds: Elapsed, else End - Start.
  double Elapsed(int64_t start_us, int64_t end_us) {
    double elapsed = -1;
    if (why_.empty() && c_.elapsed >= 0 && !Trim(p_.Text(c_.elapsed)).empty()) {
      if (!ParseSlurmDuration(p_.Text(c_.elapsed), elapsed)) {
        why_ = fmt::format("elapsed: '{}' is not [D-]HH:MM:SS", Excerpt(p_.Text(c_.elapsed)));
      }
    }
    if (why_.empty() && elapsed < 0) {
      if (start_us < 0 || end_us < 0) {
        why_ = "elapsed: no Elapsed and no Start/End to derive it";
      } else {
        elapsed = static_cast<double>(end_us - start_us) / kMicrosPerSecond;
      }
    }
    if (why_.empty() && (elapsed < 0 || elapsed > kMaxTraceSeconds)) {
      why_ = OutOfRange("elapsed", elapsed, 0, kMaxTraceSeconds);
    }
    return elapsed;
  }

  // The Timelimit column; nullopt when absent, unlimited or not understood by sacct itself.
  std::optional<Duration> TimeLimit() {
    if (!why_.empty() || c_.limit < 0) return std::nullopt;
    const std::string t = ToLower(Trim(p_.Text(c_.limit)));
    if (t.empty() || t == "unlimited" || t == "partition_limit" || t == "invalid") {
      return std::nullopt;
    }
    double limit = 0;
    if (!ParseSlurmDuration(t, limit)) {
      why_ = fmt::format("timelimit: '{}' is not [D-]HH:MM:SS", Excerpt(t));
    } else if (limit > kMaxTraceSeconds) {
      why_ = OutOfRange("timelimit", limit, 0, kMaxTraceSeconds);
    } else {
      return Duration::Micros(static_cast<int64_t>(limit * kMicrosPerSecond));
    }
    return std::nullopt;
  }

  // GPUs, CPUs and nodes: AllocTRES, then ReqTRES for what it lacks, then NNodes.
  Tres Resources() {
    Tres tres;
    if (why_.empty() && c_.alloc >= 0 && !Trim(p_.Text(c_.alloc)).empty()) {
      why_ = ParseTres(p_.Text(c_.alloc), "alloctres", tres);
    }
    if (why_.empty() && !tres.gpus && c_.req >= 0) {
      Tres req;
      why_ = ParseTres(p_.Text(c_.req), "reqtres", req);
      if (why_.empty()) {
        tres.gpus = req.gpus;
        if (tres.cpus == 0) tres.cpus = req.cpus;
        if (tres.nodes == 0) tres.nodes = req.nodes;
      }
    }
    if (why_.empty() && c_.nnodes >= 0 && !Trim(p_.Text(c_.nnodes)).empty()) {
      int64_t n = p_.Int(c_.nnodes, false);
      if (!p_.ok()) {
        why_ = p_.error();
      } else if (n < 0 || n > INT32_MAX) {
        why_ = OutOfRange("nnodes", static_cast<double>(n), 0, INT32_MAX);
      } else {
        tres.nodes = n;
      }
    }
    return tres;
  }

 private:
  RowParser& p_;
  const SacctColumns& c_;
  std::string& why_;
};

// What one non-blank sacct -P row is: a job step (not a row of its own), a finished job, a
// malformed row or a job the trace cannot use (both with `reason`).
struct SacctRow {
  enum class Kind { kStep, kJob, kMalformed, kUnusable };
  Kind kind = Kind::kJob;
  RawJob job;
  std::string reason;
};

SacctRow Rejected(SacctRow::Kind kind, std::string reason) {
  SacctRow row;
  row.kind = kind;
  row.reason = std::move(reason);
  return row;
}

SacctRow ReadSacctRow(std::string_view line, const HeaderMap& h, const SacctColumns& c) {
  using Kind = SacctRow::Kind;
  const std::vector<std::string_view> f = Split(line, '|');
  const std::string_view id = f.size() > static_cast<size_t>(c.id) ? Trim(f[c.id]) : "";
  const IdKind kind = ClassifyJobId(id);
  if (kind == IdKind::kStep) return Rejected(Kind::kStep, "");  // steps share their resources
  if (f.size() != h.size()) {
    return Rejected(Kind::kMalformed,
                    fmt::format("expected {} '|'-separated fields (as the header), got {}",
                                h.size(), f.size()));
  }
  if (kind == IdKind::kBad) {
    return Rejected(Kind::kMalformed,
                    fmt::format("JobID: '{}' is not a Slurm job id", Excerpt(id)));
  }
  if (kind == IdKind::kPendingArray)
    return Rejected(Kind::kUnusable, "array tasks that never started");
  RowParser p(f, h);
  const std::string state = c.state >= 0 ? StateWord(p.Text(c.state)) : "COMPLETED";
  if (IsUnfinishedState(state)) {
    return Rejected(Kind::kUnusable, fmt::format("job not finished ({})", state));
  }
  SacctRow row;
  RawJob& r = row.job;
  JobRecord& job = r.job;
  job.id = std::string(id);
  job.user = std::string(p.Text(c.user));
  job.account = std::string(p.Text(c.account));
  job.vc = std::string(p.Text(c.part));
  job.qos = std::string(p.Text(c.qos));
  job.name = std::string(p.Text(c.name));
  job.state = MapState(state);
  std::string why;
  SacctRowFields fields(p, c, why);
  r.submit_us = fields.Date(c.submit, "submit", /*required=*/true);
  r.eligible_us = fields.Date(c.eligible, "eligible", false);
  const bool never_started = c.start >= 0 && IsUnsetText(p.Text(c.start));
  r.start_us = never_started ? -1 : fields.Date(c.start, "start", false);
  const int64_t end_us = fields.Date(c.end, "end", false);
  if (why.empty() && never_started) {
    return Rejected(Kind::kUnusable, fmt::format("job never started ({})", state));
  }
  const double elapsed = fields.Elapsed(r.start_us, end_us);
  if (std::optional<Duration> limit = fields.TimeLimit()) job.time_limit = *limit;
  const Tres tres = fields.Resources();
  if (!why.empty()) return Rejected(Kind::kMalformed, std::move(why));
  job.duration = Duration::Micros(static_cast<int64_t>(elapsed * kMicrosPerSecond));
  job.gpus = GpuAmount::Whole(tres.gpus.value_or(0));
  job.cpus = static_cast<int32_t>(tres.cpus);
  job.nodes = static_cast<int32_t>(tres.nodes);
  return row;
}

Status ReadSacctPipe(std::string_view contents, ReadContext& ctx) {
  JobTable& table = ctx.table();
  LineCursor lines(contents);
  std::string_view line;
  while (lines.Next(line) && Trim(line).empty()) {
  }
  if (Trim(line).empty()) return ctx.FileError(1, "empty file: no header row");
  const HeaderMap h(Split(line, '|'));
  const SacctColumns columns(h);
  if (std::vector<std::string> missing = columns.Missing(); !missing.empty()) {
    return ctx.FileError(lines.line(),
                         fmt::format("sacct -P header lacks {} (export with sacct -P -o "
                                     "JobID,User,Account,Partition,QOS,Submit,Eligible,"
                                     "Start,End,Elapsed,Timelimit,AllocTRES,ReqTRES,"
                                     "NNodes,State)",
                                     fmt::join(missing, ", ")));
  }
  const int64_t header_line = lines.line();
  std::vector<RawJob> raw;
  raw.reserve(std::min<size_t>(contents.size() / 64 + 1, 1'000'000));
  const int64_t max_jobs = ctx.options().max_jobs > 0 ? ctx.options().max_jobs : INT64_MAX;
  while (static_cast<int64_t>(raw.size()) < max_jobs && lines.Next(line)) {
    if (Trim(line).empty()) continue;
    SacctRow row = ReadSacctRow(line, h, columns);
    if (row.kind == SacctRow::Kind::kStep) continue;
    ++table.rows_read;
    if (row.kind == SacctRow::Kind::kMalformed) {
      SM_RETURN_IF_ERROR(ctx.Malformed(lines.line(), row.reason));
    } else if (row.kind == SacctRow::Kind::kUnusable) {
      ctx.Unusable(lines.line(), row.reason);
    } else {
      raw.push_back(std::move(row.job));
    }
  }
  if (table.rows_read == 0 && raw.empty() && table.rows_skipped == 0) {
    return ctx.FileError(header_line, "sacct export has a header but no jobs");
  }
  Finish(raw, table);
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// sacct --json

// A number, or Slurm's newer {"set": bool, "infinite": bool, "number": N}. nullopt when unset,
// infinite, null or not a number.
std::optional<double> JsonNumber(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_object()) {
    if (j.value("infinite", false)) return std::nullopt;
    if (j.contains("set") && !j["set"].is_boolean()) return std::nullopt;
    if (j.contains("set") && !j["set"].get<bool>()) return std::nullopt;
    if (j.contains("number") && j["number"].is_number()) return j["number"].get<double>();
  }
  return std::nullopt;
}

std::string JsonText(const nlohmann::json& job, const char* key) {
  auto it = job.find(key);
  if (it == job.end() || !it->is_string()) return "";
  return std::string(Trim(it->get<std::string>()));
}

// The 1-based line of each job object, found by its "job_id" key in the raw text (the first one
// at or after the previous job's, so a job is never given an earlier job's line).
class JsonLines {
 public:
  explicit JsonLines(std::string_view text) : text_(text) {}
  int64_t LineOf(int64_t job_id) {
    const std::string key = "\"job_id\"";
    size_t at = pos_;
    while ((at = text_.find(key, at)) != std::string_view::npos) {
      size_t v = at + key.size();
      while (v < text_.size() && (text_[v] == ' ' || text_[v] == ':' || text_[v] == '\n' ||
                                  text_[v] == '\r' || text_[v] == '\t')) {
        ++v;
      }
      size_t e = v;
      while (e < text_.size() && text_[e] >= '0' && text_[e] <= '9') ++e;
      int64_t n = 0;
      if (e > v && ParseIntField(text_.substr(v, e - v), n) && n == job_id) {
        Advance(at);
        return line_;
      }
      at = e > at + key.size() ? e : at + key.size();
    }
    return line_;
  }

 private:
  void Advance(size_t to) {
    line_ += std::count(text_.begin() + static_cast<std::ptrdiff_t>(pos_),
                        text_.begin() + static_cast<std::ptrdiff_t>(to), '\n');
    pos_ = to;
  }
  std::string_view text_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

// GPUs from a TRES list [{"type": "gres", "name": "gpu[:type]", "count": N}, ...].
std::optional<int64_t> JsonGpus(const nlohmann::json& list) {
  if (!list.is_array()) return std::nullopt;
  std::optional<int64_t> plain;
  int64_t typed = 0;
  bool has_typed = false;
  for (const auto& t : list) {
    if (!t.is_object() || JsonText(t, "type") != "gres") continue;
    const std::string name = JsonText(t, "name");
    auto n = JsonNumber(t.value("count", nlohmann::json()));
    if (!n) continue;
    const auto count = static_cast<int64_t>(std::clamp(*n, -1.0, 9e15));  // range-checked later
    if (name == "gpu") plain = count;
    if (StartsWith(name, "gpu:")) {
      typed += count;
      typed = std::min<int64_t>(typed, kMaxTraceJobGpus + 1);
      has_typed = true;
    }
  }
  if (plain) return plain;
  if (has_typed) return typed;
  return std::nullopt;
}

std::optional<int64_t> JsonTresCount(const nlohmann::json& list, std::string_view type) {
  if (!list.is_array()) return std::nullopt;
  for (const auto& t : list) {
    if (t.is_object() && JsonText(t, "type") == type) {
      if (auto n = JsonNumber(t.value("count", nlohmann::json()))) {
        return static_cast<int64_t>(std::clamp(*n, -1.0, 9e15));
      }
    }
  }
  return std::nullopt;
}

// Reads one job object; returns "" or why it is malformed. `unusable` is set (and "" returned)
// for jobs that are well-formed but cannot be replayed.
std::string ReadJsonJob(const nlohmann::json& j, RawJob& r, std::string& unusable) {
  if (!j.is_object()) return "job entry is not an object";
  auto id = JsonNumber(j.value("job_id", nlohmann::json()));
  if (!id || *id < 0 || *id > 9e15) return "job_id: missing or not a job number";
  JobRecord& job = r.job;
  job.id = std::to_string(static_cast<int64_t>(*id));
  if (auto a = j.find("array"); a != j.end() && a->is_object()) {
    auto master = JsonNumber(a->value("job_id", nlohmann::json()));
    auto task = JsonNumber(a->value("task_id", nlohmann::json()));
    if (master && *master > 0 && task && *task >= 0 && *task < 9e15) {
      job.id = fmt::format("{}_{}", static_cast<int64_t>(*master), static_cast<int64_t>(*task));
    }
  }
  job.user = JsonText(j, "user");
  job.account = JsonText(j, "account");
  job.vc = JsonText(j, "partition");
  job.qos = JsonText(j, "qos");
  job.name = JsonText(j, "name");
  std::string state = "COMPLETED";
  if (auto s = j.find("state"); s != j.end() && s->is_object()) {
    const auto& cur = s->value("current", nlohmann::json());
    if (cur.is_string()) state = StateWord(cur.get<std::string>());
    if (cur.is_array() && !cur.empty() && cur[0].is_string()) {
      state = StateWord(cur[0].get<std::string>());
    }
  }
  job.state = MapState(state);
  if (IsUnfinishedState(state)) {
    unusable = fmt::format("job not finished ({})", state);
    return "";
  }
  auto t = j.find("time");
  if (t == j.end() || !t->is_object()) return "time: missing";
  auto epoch = [&](const char* key, std::optional<double>& out) -> std::string {
    out = JsonNumber(t->value(key, nlohmann::json()));
    if (out && *out == 0) out.reset();  // 0: not set
    if (out && (*out < 0 || *out > kMaxTraceSeconds)) {
      return OutOfRange(fmt::format("time.{}", key), *out, 0, kMaxTraceSeconds);
    }
    return "";
  };
  std::optional<double> submit, eligible, start, end, elapsed, limit;
  for (auto [key, out] : {std::pair{"submission", &submit}, std::pair{"eligible", &eligible},
                          std::pair{"start", &start}, std::pair{"end", &end}}) {
    if (std::string why = epoch(key, *out); !why.empty()) return why;
  }
  if (!submit) return "time.submission: missing";
  if (!start) {
    unusable = fmt::format("job never started ({})", state);
    return "";
  }
  elapsed = JsonNumber(t->value("elapsed", nlohmann::json()));
  if (!elapsed) {
    if (!end) return "time.elapsed: missing and no time.end to derive it";
    elapsed = *end - *start;
  }
  if (*elapsed < 0 || *elapsed > kMaxTraceSeconds) {
    return OutOfRange("time.elapsed", *elapsed, 0, kMaxTraceSeconds);
  }
  limit = JsonNumber(t->value("limit", nlohmann::json()));  // minutes
  if (limit) {
    if (*limit < 0 || *limit * 60 > kMaxTraceSeconds) {
      return OutOfRange("time.limit (minutes)", *limit, 0, kMaxTraceSeconds / 60);
    }
    // 4294967294/5 minutes are NO_VAL/INFINITE in the older shape.
    if (*limit < 4294967294.0) {
      job.time_limit = Duration::Micros(static_cast<int64_t>(*limit * 60 * kMicrosPerSecond));
    }
  }
  r.submit_us = static_cast<int64_t>(*submit * kMicrosPerSecond);
  r.eligible_us = eligible ? static_cast<int64_t>(*eligible * kMicrosPerSecond) : -1;
  r.start_us = static_cast<int64_t>(*start * kMicrosPerSecond);
  job.duration = Duration::Micros(static_cast<int64_t>(*elapsed * kMicrosPerSecond));
  std::optional<int64_t> gpus;
  if (auto tr = j.find("tres"); tr != j.end() && tr->is_object()) {
    const auto& alloc = tr->value("allocated", nlohmann::json());
    const auto& req = tr->value("requested", nlohmann::json());
    gpus = JsonGpus(alloc);
    if (!gpus) gpus = JsonGpus(req);
    auto cpus = JsonTresCount(alloc, "cpu");
    if (!cpus) cpus = JsonTresCount(req, "cpu");
    if (cpus && *cpus >= 0 && *cpus <= INT32_MAX) job.cpus = static_cast<int32_t>(*cpus);
  }
  if (gpus && (*gpus < 0 || *gpus > kMaxTraceJobGpus)) {
    return OutOfRange("tres gres/gpu", static_cast<double>(*gpus), 0,
                      static_cast<double>(kMaxTraceJobGpus));
  }
  job.gpus = GpuAmount::Whole(gpus.value_or(0));
  if (auto n = JsonNumber(j.value("allocation_nodes", nlohmann::json()))) {
    if (*n < 0 || *n > INT32_MAX) {
      return OutOfRange("allocation_nodes", *n, 0, static_cast<double>(INT32_MAX));
    }
    job.nodes = static_cast<int32_t>(*n);
  }
  return "";
}

Status ReadSacctJson(std::string_view contents, ReadContext& ctx) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(contents.begin(), contents.end());
  } catch (const nlohmann::json::exception& e) {
    return ctx.FileError(1, fmt::format("not valid JSON: {}", Excerpt(e.what())));
  }
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array()) {
    return ctx.FileError(1, "sacct --json export has no \"jobs\" array");
  }
  JobTable& table = ctx.table();
  JsonLines lines(contents);
  std::vector<RawJob> raw;
  raw.reserve(doc["jobs"].size());
  for (const auto& j : doc["jobs"]) {
    if (ctx.Full() || (ctx.options().max_jobs > 0 &&
                       static_cast<int64_t>(raw.size()) >= ctx.options().max_jobs)) {
      break;
    }
    ++table.rows_read;
    int64_t line = 1;
    if (j.is_object()) {
      if (auto id = JsonNumber(j.value("job_id", nlohmann::json())); id && *id >= 0 && *id < 9e15) {
        line = lines.LineOf(static_cast<int64_t>(*id));
      }
    }
    RawJob r;
    std::string unusable;
    std::string why = ReadJsonJob(j, r, unusable);
    if (!why.empty()) {
      SM_RETURN_IF_ERROR(ctx.Malformed(line, fmt::format("job {}: {}", r.job.id, why)));
      continue;
    }
    if (!unusable.empty()) {
      ctx.Unusable(line, unusable);
      continue;
    }
    raw.push_back(std::move(r));
  }
  Finish(raw, table);
  return Status::Ok();
}

}  // namespace

bool LooksLikeSacct(std::string_view first_line) {
  first_line = Trim(first_line);
  if (first_line.find('|') == std::string_view::npos) return false;
  const HeaderMap h(Split(first_line, '|'));
  return h.Find({"jobid"}) >= 0;
}

bool LooksLikeSacctJson(std::string_view head) {
  size_t i = head.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  while (i < head.size() &&
         (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) {
    ++i;
  }
  if (i >= head.size() || head[i] != '{') return false;
  return head.find("\"jobs\"") != std::string_view::npos ||
         head.find("\"job_id\"") != std::string_view::npos ||
         head.find("\"meta\"") != std::string_view::npos;
}

Status ReadSacct(std::string_view contents, ReadContext& ctx) {
  if (LooksLikeSacctJson(contents.substr(0, 1 << 16))) return ReadSacctJson(contents, ctx);
  return ReadSacctPipe(contents, ctx);
}

}  // namespace schedmate::trace::internal
