#include "slurm/slurm_parsers.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <ctime>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "slurm/job_usage.h"
#include "slurm/json_jobs_scan.h"

namespace schedmate::slurm {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

std::optional<int64_t> Int(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned()) return static_cast<int64_t>(it->get<uint64_t>());
  if (it->is_number_float()) {
    // Outside int64's range the conversion would be undefined: such a value is not a count.
    const double d = it->get<double>();
    if (!(d >= -9.2e18 && d <= 9.2e18)) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

// Slurm writes 0 for "not set" epoch fields.
std::optional<SimTime> Epoch(const json& j, const char* key) {
  auto v = Int(j, key);
  if (!v || *v <= 0 || *v > kMaxEpochSeconds) return std::nullopt;
  return SimTime::FromSeconds(*v);
}

bool IsKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == ':' ||
         c == '-' || c == '.';
}

std::string Get(const std::map<std::string, std::string>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

bool IsNullText(std::string_view v) {
  return v.empty() || v == "(null)" || v == "N/A" || v == "None" || v == "Unknown";
}

// Expands node lists within one output's budget of names (kMaxExpandedNodesPerOutput).
class NodeListExpander {
 public:
  std::vector<std::string> Expand(std::string_view list) {
    if (left_ == 0) return {};
    std::vector<std::string> names = ExpandNodeList(list, std::min(left_, kMaxExpandedNodes));
    left_ -= std::min(left_, names.size());
    return names;
  }

 private:
  size_t left_ = kMaxExpandedNodesPerOutput;
};

// "root(0)" -> "root".
std::string UserName(std::string_view v) {
  auto paren = v.find('(');
  return std::string(paren == std::string_view::npos ? v : v.substr(0, paren));
}

}  // namespace

std::pair<int32_t, int32_t> DecodeWaitStatus(int64_t raw) {
  if (raw < 0) return {static_cast<int32_t>(raw), 0};
  int32_t sig = static_cast<int32_t>(raw & 0x7f);
  if (sig != 0) return {0, sig};
  return {static_cast<int32_t>((raw >> 8) & 0xff), 0};
}

std::pair<int32_t, int32_t> ParseExitCodePair(std::string_view text) {
  auto parts = Split(Trim(text), ':');
  int32_t code = 0, sig = 0;
  if (!parts.empty()) code = static_cast<int32_t>(ParseInt(parts[0]).value_or(0));
  if (parts.size() > 1) sig = static_cast<int32_t>(ParseInt(parts[1]).value_or(0));
  return {code, sig};
}

std::string NormalizeState(std::string_view state) {
  state = Trim(state);
  size_t end = 0;
  while (end < state.size() &&
         (std::isalpha(static_cast<unsigned char>(state[end])) || state[end] == '_')) {
    ++end;
  }
  std::string out(state.substr(0, end));
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool IsFinishedState(std::string_view state) {
  static constexpr std::string_view kFinished[] = {
      "COMPLETED", "FAILED",    "TIMEOUT",  "NODE_FAIL",     "CANCELLED",
      "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT"};
  std::string s = NormalizeState(state);
  return std::find(std::begin(kFinished), std::end(kFinished), s) != std::end(kFinished);
}

std::vector<std::string> ExpandNodeList(std::string_view list, size_t max_names) {
  std::vector<std::string> out;
  list = Trim(list);
  if (IsNullText(list)) return out;
  // Split on commas that are not inside brackets.
  std::vector<std::string_view> items;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      if (i > begin) items.push_back(list.substr(begin, i - begin));
      begin = i + 1;
    } else if (list[i] == '[') {
      ++depth;
    } else if (list[i] == ']') {
      --depth;
    }
  }
  for (auto item : items) {
    if (out.size() >= max_names) break;
    auto open = item.find('[');
    auto close = item.find(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      out.emplace_back(item);
      continue;
    }
    std::string prefix(item.substr(0, open));
    std::string suffix(item.substr(close + 1));
    for (auto range : Split(item.substr(open + 1, close - open - 1), ',')) {
      if (out.size() >= max_names) break;
      auto dash = range.find('-');
      if (dash == std::string_view::npos) {
        out.push_back(prefix + std::string(range) + suffix);
        continue;
      }
      auto lo_text = range.substr(0, dash);
      auto lo = ParseInt(lo_text);
      auto hi = ParseInt(range.substr(dash + 1));
      if (!lo || !hi || *hi < *lo || *hi - *lo >= static_cast<int64_t>(max_names - out.size())) {
        out.push_back(prefix + std::string(range) + suffix);
        continue;
      }
      for (int64_t n = *lo; n <= *hi; ++n) {
        std::string num = std::to_string(n);
        if (num.size() < lo_text.size()) num.insert(0, lo_text.size() - num.size(), '0');
        out.push_back(prefix + num + suffix);
      }
    }
  }
  return out;
}

int32_t ParseGpuCount(std::string_view tres) {
  // Items are separated by commas; each names a resource like gres:gpu:4, gres/gpu=2,
  // gres/gpu:a100=2, gpu:a100:2.
  int32_t total = 0;
  for (auto item : Split(tres, ',')) {
    item = Trim(item);
    std::string lower = ToLower(item);
    auto pos = lower.find("gpu");
    if (pos == std::string::npos) continue;
    if (pos > 0 && lower[pos - 1] != ':' && lower[pos - 1] != '/') continue;
    if (lower.size() > pos + 3 && lower[pos + 3] != ':' && lower[pos + 3] != '=') continue;
    // The count is the last ':' or '=' separated field, if numeric; a bare "gpu" means 1.
    auto sep = lower.find_last_of(":=");
    int64_t n = 1;
    if (sep != std::string::npos && sep > pos + 2) {
      auto v = ParseInt(std::string_view(lower).substr(sep + 1));
      if (v) n = *v;
    }
    total = static_cast<int32_t>(
        std::min<int64_t>(int64_t{total} + std::clamp<int64_t>(n, 0, kMaxGpuCount), kMaxGpuCount));
  }
  return total;
}

int32_t TotalGpus(int32_t per_job, int32_t per_node, int32_t nodes) {
  if (per_job > 0) return std::min(per_job, kMaxGpuCount);
  const int64_t total = int64_t{std::clamp(per_node, 0, kMaxGpuCount)} * std::max(1, nodes);
  return static_cast<int32_t>(std::min<int64_t>(total, kMaxGpuCount));
}

std::optional<SimTime> ParseSlurmTimestamp(std::string_view text) {
  text = Trim(text);
  if (text.size() < 19 || text[4] != '-' || text[10] != 'T') return std::nullopt;
  std::tm tm{};
  auto y = ParseInt(text.substr(0, 4)), mo = ParseInt(text.substr(5, 2)),
       d = ParseInt(text.substr(8, 2)), h = ParseInt(text.substr(11, 2)),
       mi = ParseInt(text.substr(14, 2)), s = ParseInt(text.substr(17, 2));
  if (!y || !mo || !d || !h || !mi || !s) return std::nullopt;
  tm.tm_year = static_cast<int>(*y - 1900);
  tm.tm_mon = static_cast<int>(*mo - 1);
  tm.tm_mday = static_cast<int>(*d);
  tm.tm_hour = static_cast<int>(*h);
  tm.tm_min = static_cast<int>(*mi);
  tm.tm_sec = static_cast<int>(*s);
  tm.tm_isdst = -1;
  time_t t = std::mktime(&tm);
  if (t == static_cast<time_t>(-1)) return std::nullopt;
  return SimTime::FromSeconds(static_cast<int64_t>(t));
}

std::optional<int64_t> ParseTimeLimitMinutes(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  if (auto minutes = ParseInt(text)) {
    if (*minutes < 0 || *minutes > kMaxTimeLimitMinutes) return std::nullopt;
    return *minutes;
  }
  // Each part at most this many (days, hours, minutes or seconds): the sums below cannot overflow
  // and anything larger is past kMaxTimeLimitMinutes anyway.
  constexpr int64_t kMaxPart = kMaxTimeLimitMinutes * 60;
  int64_t days = 0;
  auto dash = text.find('-');
  if (dash != std::string_view::npos) {
    auto d = ParseInt(text.substr(0, dash));
    if (!d || *d < 0 || *d > kMaxPart) return std::nullopt;
    days = *d;
    text = text.substr(dash + 1);
  }
  auto parts = Split(text, ':');
  std::vector<int64_t> v;
  for (auto p : parts) {
    auto n = ParseInt(p);
    if (!n || *n < 0 || *n > kMaxPart) return std::nullopt;
    v.push_back(*n);
  }
  int64_t seconds = 0;
  if (v.size() == 3) {
    seconds = v[0] * 3600 + v[1] * 60 + v[2];
  } else if (v.size() == 2) {
    seconds = dash != std::string_view::npos ? v[0] * 3600 + v[1] * 60 : v[0] * 60 + v[1];
  } else if (v.size() == 1 && dash != std::string_view::npos) {
    seconds = v[0] * 3600;
  } else {
    return std::nullopt;
  }
  seconds += days * 86400;
  const int64_t minutes = (seconds + 59) / 60;
  if (minutes > kMaxTimeLimitMinutes) return std::nullopt;
  return minutes;
}

namespace {

// The job fields ParseSqueueJson reads. squeue --json prints ~110 fields per job (3-4 KB); the
// parse keeps only these, so a 12,000-job queue costs a few MB of DOM instead of hundreds.
bool IsSqueueJobField(std::string_view key) {
  static constexpr std::array<std::string_view, 33> kFields = {
      "account",        "array_job_id",
      "cpus",           "tres_alloc_str",
      "array_task_id",  "command",
      "comment",        "current_working_directory",
      "dependency",     "eligible_time",
      "end_time",       "excluded_nodes",
      "exit_code",      "job_id",
      "job_state",      "name",
      "nice",           "node_count",
      "nodes",          "partition",
      "priority",       "qos",
      "required_nodes", "restart_cnt",
      "standard_error", "standard_output",
      "start_time",     "state_reason",
      "submit_time",    "time_limit",
      "tres_per_job",   "tres_per_node",
      "user_name"};
  return std::find(kFields.begin(), kFields.end(), key) != kFields.end();
}

// Reads squeue --json in one SAX pass, keeping of each element of the top-level "jobs" array
// only the scalar values of IsSqueueJobField keys (a nested value reads as absent, as the
// field readers above treat it anyway; a repeated key keeps its last value, as a DOM would).
// Everything else is lexed and dropped without building values: 12,000 jobs of ~110 fields
// parse in a fraction of the time and memory of a DOM.
class SqueueJobsSax final : public nlohmann::json_sax<json> {
 public:
  bool top_object = false;  // the document is an object
  bool jobs_array = false;  // whose "jobs" is an array
  std::vector<json> jobs;   // its object elements, reduced

  bool null() override {
    return Scalar([] { return json(nullptr); });
  }
  bool boolean(bool v) override {
    return Scalar([v] { return json(v); });
  }
  bool number_integer(number_integer_t v) override {
    return Scalar([v] { return json(v); });
  }
  bool number_unsigned(number_unsigned_t v) override {
    return Scalar([v] { return json(v); });
  }
  bool number_float(number_float_t v, const string_t&) override {
    return Scalar([v] { return json(v); });
  }
  bool string(string_t& v) override {
    return Scalar([&v] { return json(std::move(v)); });
  }
  bool binary(binary_t&) override {
    return Scalar([] { return json(); });
  }
  bool key(string_t& k) override {
    if (depth_ == 1) top_key_ = k;
    if (depth_ == 3 && in_job_) job_key_ = IsSqueueJobField(k) ? k : std::string();
    return true;
  }
  bool start_object(std::size_t) override { return Open(/*object=*/true); }
  bool start_array(std::size_t) override { return Open(/*object=*/false); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  template <typename Make>
  bool Scalar(Make make) {
    if (depth_ == 1 && top_key_ == "jobs") {  // "jobs": not an array
      jobs_array = false;
      jobs.clear();
    } else if (depth_ == 3 && in_job_ && !job_key_.empty()) {
      jobs.back()[job_key_] = make();
    }
    return true;
  }
  bool Open(bool object) {
    ++depth_;
    if (depth_ == 1) {
      top_object = object;
    } else if (depth_ == 2 && top_key_ == "jobs") {
      jobs_array = !object;
      in_jobs_ = !object;
      jobs.clear();
    } else if (depth_ == 3 && in_jobs_ && object) {
      jobs.emplace_back(json::object());
      in_job_ = true;
      job_key_.clear();
    } else if (depth_ == 4 && in_job_ && !job_key_.empty()) {
      jobs.back().erase(job_key_);  // a nested value: absent to the field readers
      job_key_.clear();
    }
    return true;
  }
  bool Close() {
    if (depth_ == 3) in_job_ = false;
    if (depth_ == 2) in_jobs_ = false;
    --depth_;
    return true;
  }

  int depth_ = 0;  // containers open
  bool in_jobs_ = false, in_job_ = false;
  std::string top_key_, job_key_;
};

}  // namespace

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  // The fast scanner first; whatever it is not sure of, nlohmann's SAX reads (json_jobs_scan.h).
  std::vector<json> elements;
  if (auto fast = internal::ScanJsonObjects(text, "jobs", IsSqueueJobField)) {
    elements = std::move(*fast);
  } else {
    SqueueJobsSax sax;
    if (!json::sax_parse(text, &sax) || !sax.top_object) {
      return Status::DataLoss("squeue --json: output is not JSON");
    }
    if (!sax.jobs_array) return Status::DataLoss("squeue --json: no \"jobs\" array");
    elements = std::move(sax.jobs);
  }
  std::vector<SlurmJob> jobs;
  NodeListExpander expander;
  for (const json& j : elements) {
    auto id = Int(j, "job_id");
    if (!id) continue;
    SlurmJob job;
    auto array_id = Int(j, "array_job_id").value_or(0);
    auto task_id = Int(j, "array_task_id");
    job.id =
        (array_id > 0 && task_id) ? fmt::format("{}_{}", array_id, *task_id) : std::to_string(*id);
    job.name = Str(j, "name");
    job.user = Str(j, "user_name");
    job.partition = Str(j, "partition");
    job.state = NormalizeState(Str(j, "job_state"));
    job.reason = Str(j, "state_reason");
    job.priority = Int(j, "priority").value_or(0);
    job.nice = Int(j, "nice").value_or(0);  // null or absent when 0
    job.nodes = static_cast<int32_t>(Int(j, "node_count").value_or(0));
    job.gpus_per_node = ParseGpuCount(Str(j, "tres_per_node"));
    job.gpus = TotalGpus(ParseGpuCount(Str(j, "tres_per_job")), job.gpus_per_node, job.nodes);
    job.node_list = Str(j, "nodes");
    job.node_names = expander.Expand(job.node_list);
    job.cpus = static_cast<int32_t>(std::clamp<int64_t>(Int(j, "cpus").value_or(0), 0, 1 << 24));
    job.memory_mib = TresMemoryMib(Str(j, "tres_alloc_str"));
    job.submit = Epoch(j, "submit_time").value_or(SimTime::Zero());
    bool started = job.state != "PENDING";
    if (started) {
      job.start = Epoch(j, "start_time");
    } else {
      job.expected_start = Epoch(j, "start_time");
      job.eligible = Epoch(j, "eligible_time");
    }
    if (IsFinishedState(job.state)) job.end = Epoch(j, "end_time");
    job.time_limit_min = Int(j, "time_limit");
    if (job.time_limit_min &&
        (*job.time_limit_min < 0 || *job.time_limit_min > kMaxTimeLimitMinutes)) {
      job.time_limit_min.reset();
    }
    auto [code, sig] = DecodeWaitStatus(Int(j, "exit_code").value_or(0));
    job.exit_code = code;
    job.exit_signal = sig;
    job.restarts = static_cast<int32_t>(Int(j, "restart_cnt").value_or(0));
    job.excluded_nodes = expander.Expand(Str(j, "excluded_nodes"));
    job.required_nodes = expander.Expand(Str(j, "required_nodes"));
    job.comment = Str(j, "comment");
    job.account = Str(j, "account");
    job.qos = Str(j, "qos");
    job.dependency = Str(j, "dependency");
    job.command = Str(j, "command");
    job.work_dir = Str(j, "current_working_directory");
    job.std_out = Str(j, "standard_output");
    job.std_err = Str(j, "standard_error");
    jobs.push_back(std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(), [](const SlurmJob& a, const SlurmJob& b) {
    auto na = ParseInt(a.id), nb = ParseInt(b.id);
    if (na && nb) return *na < *nb;
    if (na.has_value() != nb.has_value()) return na.has_value();
    return a.id < b.id;
  });
  return jobs;
}

bool SlurmNode::drained() const {
  if (std::find(flags.begin(), flags.end(), "DRAIN") != flags.end()) return true;
  return state == "drained" || state == "draining" || state == "drain";
}

bool SlurmNode::available() const {
  if (drained()) return false;
  if (state == "down" || state == "fail" || state == "future" || state == "unknown") return false;
  return std::find(flags.begin(), flags.end(), "NOT_RESPONDING") == flags.end();
}

Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::DataLoss("sinfo --json: output is not JSON");
  }
  auto nodes_it = doc.find("nodes");
  if (nodes_it == doc.end() || !nodes_it->is_array()) {
    return Status::DataLoss("sinfo --json: no \"nodes\" array");
  }
  std::vector<SlurmNode> nodes;
  for (const json& n : *nodes_it) {
    if (!n.is_object()) continue;
    SlurmNode node;
    node.name = Str(n, "name");
    if (node.name.empty()) continue;
    node.state = ToLower(Str(n, "state"));
    if (auto it = n.find("state_flags"); it != n.end() && it->is_array()) {
      for (const auto& f : *it)
        if (f.is_string()) node.flags.push_back(f.get<std::string>());
    }
    node.gpus_total = ParseGpuCount(Str(n, "gres"));
    node.gpus_used = ParseGpuCount(Str(n, "gres_used"));
    node.cpus = static_cast<int32_t>(Int(n, "cpus").value_or(0));
    node.reason = Str(n, "reason");
    if (auto it = n.find("partitions"); it != n.end() && it->is_array()) {
      for (const auto& p : *it)
        if (p.is_string()) node.partitions.push_back(p.get<std::string>());
    }
    nodes.push_back(std::move(node));
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const SlurmNode& a, const SlurmNode& b) { return a.name < b.name; });
  return nodes;
}

std::vector<std::pair<std::string, std::string>> ParseKeyValueLine(std::string_view line) {
  std::vector<std::pair<std::string, std::string>> out;
  auto words = Split(Trim(line), ' ');
  for (auto word : words) {
    if (word.empty()) {
      if (!out.empty() && !out.back().second.empty()) out.back().second += ' ';
      continue;
    }
    auto eq = word.find('=');
    bool is_key = eq != std::string_view::npos && eq > 0 &&
                  std::isalpha(static_cast<unsigned char>(word[0])) &&
                  std::all_of(word.begin(), word.begin() + static_cast<ptrdiff_t>(eq), IsKeyChar);
    if (is_key || out.empty()) {
      if (!is_key) continue;
      out.emplace_back(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
    } else {
      auto& v = out.back().second;
      if (!v.empty() && v.back() != ' ') v += ' ';
      v += word;
    }
  }
  for (auto& kv : out) kv.second = std::string(Trim(kv.second));
  return out;
}

std::vector<std::map<std::string, std::string>> ParseScontrolRecords(std::string_view text) {
  std::vector<std::map<std::string, std::string>> records;
  for (auto line : Split(text, '\n')) {
    if (Trim(line).empty()) continue;
    std::map<std::string, std::string> rec;
    for (auto& [k, v] : ParseKeyValueLine(line)) rec.emplace(k, v);
    if (!rec.empty()) records.push_back(std::move(rec));
  }
  return records;
}

Status ApplyScontrolJob(const std::map<std::string, std::string>& rec, SlurmJob& job) {
  std::string id = Get(rec, "JobId");
  if (id.empty()) return Status::DataLoss("scontrol record without JobId");
  std::string array_id = Get(rec, "ArrayJobId"), task = Get(rec, "ArrayTaskId");
  job.id = (!array_id.empty() && !task.empty() && !IsNullText(task)) ? array_id + "_" + task : id;
  auto set_text = [&](const char* key, std::string& field) {
    auto it = rec.find(key);
    if (it != rec.end() && !IsNullText(it->second)) field = it->second;
  };
  set_text("JobName", job.name);
  if (auto u = Get(rec, "UserId"); !u.empty()) job.user = UserName(u);
  set_text("Partition", job.partition);
  if (auto s = Get(rec, "JobState"); !s.empty()) job.state = NormalizeState(s);
  set_text("Reason", job.reason);
  set_text("Comment", job.comment);
  set_text("Account", job.account);
  set_text("QOS", job.qos);
  set_text("Dependency", job.dependency);
  set_text("Command", job.command);
  set_text("WorkDir", job.work_dir);
  set_text("StdOut", job.std_out);
  set_text("StdErr", job.std_err);
  if (auto v = ParseInt(Get(rec, "Restarts"))) job.restarts = static_cast<int32_t>(*v);
  if (auto v = ParseInt(Get(rec, "Priority"))) job.priority = *v;
  if (auto v = ParseInt(Get(rec, "Nice"))) job.nice = *v;
  if (auto v = ParseInt(Get(rec, "NumNodes"))) job.nodes = static_cast<int32_t>(*v);
  if (auto nl = Get(rec, "NodeList"); !IsNullText(nl)) {
    job.node_list = nl;
    job.node_names = ExpandNodeList(nl);
  }
  if (auto t = ParseSlurmTimestamp(Get(rec, "SubmitTime"))) job.submit = *t;
  if (job.state != "PENDING") {
    if (auto t = ParseSlurmTimestamp(Get(rec, "StartTime"))) job.start = *t;
  } else if (auto t = ParseSlurmTimestamp(Get(rec, "EligibleTime"))) {
    job.eligible = *t;
  }
  if (rec.count("ExcNodeList")) job.excluded_nodes = ExpandNodeList(Get(rec, "ExcNodeList"));
  if (rec.count("ReqNodeList")) job.required_nodes = ExpandNodeList(Get(rec, "ReqNodeList"));
  if (IsFinishedState(job.state)) {
    if (auto t = ParseSlurmTimestamp(Get(rec, "EndTime"))) job.end = *t;
  }
  if (rec.count("TimeLimit")) job.time_limit_min = ParseTimeLimitMinutes(Get(rec, "TimeLimit"));
  if (rec.count("ExitCode")) {
    auto [code, sig] = ParseExitCodePair(Get(rec, "ExitCode"));
    job.exit_code = code;
    job.exit_signal = sig;
  }
  std::string tres_node = Get(rec, "TresPerNode");
  if (tres_node.empty()) tres_node = Get(rec, "JOB_GRES");
  if (!tres_node.empty() && job.gpus_per_node == 0) job.gpus_per_node = ParseGpuCount(tres_node);
  if (job.gpus == 0) {
    job.gpus = TotalGpus(ParseGpuCount(Get(rec, "TresPerJob")), job.gpus_per_node, job.nodes);
  }
  return Status::Ok();
}

Result<SlurmJob> SlurmJobFromScontrol(const std::map<std::string, std::string>& record) {
  SlurmJob job;
  SM_RETURN_IF_ERROR(ApplyScontrolJob(record, job));
  return job;
}

std::string FinishedJob::RunKey() const { return fmt::format("{}@{}", id, start.seconds()); }

Result<std::optional<FinishedJob>> ParseJobcompLine(std::string_view line) {
  std::map<std::string, std::string> rec;
  for (auto& [k, v] : ParseKeyValueLine(line)) rec.emplace(k, v);
  std::string id = Get(rec, "JobId");
  std::string state = NormalizeState(Get(rec, "JobState"));
  if (id.empty() || state.empty()) return Status::DataLoss("jobcomp line without JobId/JobState");
  if (!IsFinishedState(state)) return std::optional<FinishedJob>();
  FinishedJob f;
  f.id = id;
  f.name = Get(rec, "Name");
  f.user = UserName(Get(rec, "UserId"));
  f.partition = Get(rec, "Partition");
  f.state = state;
  auto [code, sig] = ParseExitCodePair(Get(rec, "ExitCode"));
  f.exit_code = code;
  f.exit_signal = sig;
  f.node_list = Get(rec, "NodeList");
  if (IsNullText(f.node_list)) f.node_list.clear();
  f.node_names = ExpandNodeList(f.node_list);
  auto start = ParseSlurmTimestamp(Get(rec, "StartTime"));
  auto end = ParseSlurmTimestamp(Get(rec, "EndTime"));
  if (!end) return Status::DataLoss(fmt::format("jobcomp line for job {} without EndTime", id));
  f.end = *end;
  f.start = start.value_or(*end);
  f.submit = ParseSlurmTimestamp(Get(rec, "SubmitTime")).value_or(f.start);
  f.time_limit_min = ParseTimeLimitMinutes(Get(rec, "TimeLimit"));
  f.work_dir = Get(rec, "WorkDir");
  return std::optional<FinishedJob>(std::move(f));
}

Result<std::vector<FinishedJob>> ParseSacctParsable(std::string_view text) {
  std::vector<FinishedJob> out;
  NodeListExpander expander;
  int line_no = 0;
  for (auto line : Split(text, '\n')) {
    ++line_no;
    if (Trim(line).empty()) continue;
    auto f = Split(line, '|');
    if (f.size() < 12) {
      return Status::DataLoss(
          fmt::format("sacct output line {}: {} fields, expected 12", line_no, f.size()));
    }
    if (Trim(f[0]).empty()) {
      return Status::DataLoss(fmt::format("sacct output line {}: empty JobID", line_no));
    }
    std::string state = NormalizeState(f[4]);
    if (!IsFinishedState(state)) continue;
    auto end = ParseSlurmTimestamp(f[9]);
    if (!end) continue;
    FinishedJob job;
    job.id = std::string(f[0]);
    job.name = std::string(f[1]);
    job.user = std::string(f[2]);
    job.partition = std::string(f[3]);
    job.state = state;
    auto [code, sig] = ParseExitCodePair(f[5]);
    job.exit_code = code;
    job.exit_signal = sig;
    job.node_list = IsNullText(f[6]) || f[6] == "None assigned" ? "" : std::string(f[6]);
    job.node_names = expander.Expand(job.node_list);
    job.end = *end;
    job.start = ParseSlurmTimestamp(f[8]).value_or(*end);
    job.submit = ParseSlurmTimestamp(f[7]).value_or(job.start);
    job.time_limit_min = ParseTimeLimitMinutes(f[10]);
    job.work_dir = std::string(f[11]);
    out.push_back(std::move(job));
  }
  return out;
}

}  // namespace schedmate::slurm
