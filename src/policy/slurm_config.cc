#include "policy/slurm_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "core/file_util.h"
#include "core/strings.h"

namespace schedmate::policy {
namespace {

// SchedulerParameters options that exist in Slurm but change nothing the model simulates
// (they tune slurmctld's load, RPC handling or logging, or limits this model has no notion of).
constexpr std::string_view kNoEffectSchedulerParameters[] = {"batch_sched_delay",
                                                             "sched_interval",
                                                             "sched_min_interval",
                                                             "default_queue_depth",
                                                             "bf_resolution",
                                                             "bf_yield_interval",
                                                             "bf_yield_sleep",
                                                             "max_rpc_cnt",
                                                             "bf_max_time",
                                                             "max_sched_time",
                                                             "defer",
                                                             "defer_batch",
                                                             "bf_busy_nodes",
                                                             "bf_one_resv_per_job"};
// Priority* keys that exist but are not modelled (accepted and reported).
constexpr std::string_view kUnmodelledPriorityKeys[] = {
    "priorityweightassoc",      "priorityweighttres",       "priorityflags",
    "priorityusageresetperiod", "prioritysitefactorplugin", "prioritysitefactorparameters",
    "priorityparameters"};

std::string Lower(std::string_view s) { return ToLower(s); }

// Slurm time values: "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds".
std::optional<Duration> ParseSlurmTime(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return std::nullopt;
  int64_t days = 0;
  bool has_days = false;
  if (size_t dash = s.find('-'); dash != std::string_view::npos) {
    auto d = ParseInt(s.substr(0, dash));
    if (!d || *d < 0 || *d > 100'000) return std::nullopt;
    days = *d;
    has_days = true;
    s = s.substr(dash + 1);
  }
  auto parts = Split(s, ':');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  int64_t total = 0;
  for (auto p : parts) {
    auto v = ParseInt(Trim(p));
    if (!v || *v < 0 || *v > 100'000'000) return std::nullopt;
    total = total * 60 + *v;
  }
  static constexpr int64_t kUnit[2][3] = {{60, 1, 1}, {3600, 60, 1}};
  return Duration::Seconds(days * 86400 + total * kUnit[has_days ? 1 : 0][parts.size() - 1]);
}

std::optional<int64_t> ParseCount(std::string_view s, int64_t hi) {
  auto v = ParseInt(Trim(s));
  if (!v || *v < 0 || *v > hi) return std::nullopt;
  return v;
}

std::optional<bool> ParseYesNo(std::string_view s) {
  const std::string t = Lower(Trim(s));
  if (t == "yes" || t == "1" || t == "true") return true;
  if (t == "no" || t == "0" || t == "false") return false;
  return std::nullopt;
}

constexpr int64_t kMaxWeight = 4'294'967'295;  // uint32, as Slurm stores them

// Applies one key that configures the model; "" on success, else the reason. `known` false when
// the key is not one of ours.
std::string ApplyKey(SlurmConfig& c, std::string_view key_in, std::string_view value, bool& known) {
  known = true;
  const std::string key = Lower(Trim(key_in));
  auto weight = [&](int64_t& out) -> std::string {
    auto v = ParseCount(value, kMaxWeight);
    if (!v) return fmt::format("{}: '{}' is not a weight in 0..{}", key_in, value, kMaxWeight);
    out = *v;
    return "";
  };
  auto time = [&](Duration& out, bool allow_zero) -> std::string {
    auto v = ParseSlurmTime(value);
    if (!v || (!allow_zero && *v == Duration::Zero())) {
      return fmt::format("{}: '{}' is not a Slurm time ([days-]hours:minutes:seconds or minutes)",
                         key_in, value);
    }
    out = *v;
    return "";
  };
  // A setting that is one of two plugins: `on` sets `out`, `off` clears it.
  auto either = [&](std::string_view name, std::string_view on, std::string_view off,
                    bool& out) -> std::string {
    const std::string v = Lower(Trim(value));
    if (v != on && v != off) {
      return fmt::format("{}: '{}' is not modelled ({}, {})", name, value, on, off);
    }
    out = v == on;
    return "";
  };
  // YES or NO; `empty_means` for a value-less flag, when given.
  auto yes_no = [&](std::string_view name, bool& out,
                    std::optional<bool> empty_means = std::nullopt) -> std::string {
    auto v = value.empty() && empty_means ? empty_means : ParseYesNo(value);
    if (!v) return fmt::format("{}: '{}' is not YES or NO", name, value);
    out = *v;
    return "";
  };
  // A count in 1..hi; `unit` ("minutes ", "seconds " or "") is named in the message.
  auto positive = [&](std::string_view name, int64_t hi, std::string_view unit,
                      int64_t& out) -> std::string {
    auto v = ParseCount(value, hi);
    if (!v || *v == 0) return fmt::format("{}: '{}' is not {}in 1..{}", name, value, unit, hi);
    out = *v;
    return "";
  };
  if (key == "prioritytype") {
    return either("PriorityType", "priority/multifactor", "priority/basic", c.multifactor);
  }
  if (key == "priorityweightage") return weight(c.weight_age);
  if (key == "priorityweightfairshare") return weight(c.weight_fairshare);
  if (key == "priorityweightjobsize") return weight(c.weight_job_size);
  if (key == "priorityweightpartition") return weight(c.weight_partition);
  if (key == "priorityweightqos") return weight(c.weight_qos);
  if (key == "prioritymaxage") return time(c.max_age, /*allow_zero=*/false);
  if (key == "prioritydecayhalflife") return time(c.decay_half_life, /*allow_zero=*/true);
  if (key == "prioritycalcperiod") return time(c.calc_period, /*allow_zero=*/false);
  if (key == "priorityfavorsmall") return yes_no("PriorityFavorSmall", c.favor_small);
  if (key == "schedulertype") {
    return either("SchedulerType", "sched/backfill", "sched/builtin", c.backfill);
  }
  if (key == "bf_window") {
    int64_t minutes = 0;
    std::string why = positive(key, 43200, "minutes ", minutes);
    if (why.empty()) c.bf_window = Duration::Minutes(minutes);
    return why;
  }
  if (key == "bf_interval") {
    int64_t seconds = 0;
    std::string why = positive(key, 10800, "seconds ", seconds);
    if (why.empty()) c.bf_interval = Duration::Seconds(seconds);
    return why;
  }
  if (key == "bf_max_job_test") return positive(key, 1'000'000, "", c.bf_max_job_test);
  // A flag in slurm.conf; `--set bf_continue=yes|no` from the command line.
  if (key == "bf_continue") return yes_no(key, c.bf_continue, /*empty_means=*/true);
  if (StartsWith(key, "qos.") || StartsWith(key, "partition.")) {
    auto v = ParseCount(value, kMaxWeight);
    if (!v) return fmt::format("{}: '{}' is not a priority in 0..{}", key_in, value, kMaxWeight);
    const std::string name(Trim(key_in.substr(key_in.find('.') + 1)));
    if (name.empty()) return fmt::format("{}: no name after the dot", key_in);
    (StartsWith(key, "qos.") ? c.qos_priority : c.partition_factor)[name] = *v;
    return "";
  }
  known = false;
  return "";
}

// Splits "Key=Value Key2=Value2" (NodeName, PartitionName lines); values have no blanks.
std::vector<std::pair<std::string_view, std::string_view>> Pairs(std::string_view line) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t b = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i == b) break;
    std::string_view tok = line.substr(b, i - b);
    size_t eq = tok.find('=');
    if (eq == std::string_view::npos) {
      out.emplace_back(tok, std::string_view());
    } else {
      out.emplace_back(tok.substr(0, eq), tok.substr(eq + 1));
    }
  }
  return out;
}

// GPUs in a Gres= value: "gpu:8", "gpu:a100:8", "gpu:a100:4,gpu:v100:2(S:0)", "mps:100".
std::optional<int64_t> GresGpus(std::string_view gres) {
  int64_t total = 0;
  bool any = false;
  for (auto item : Split(gres, ',')) {
    item = Trim(item);
    if (size_t paren = item.find('('); paren != std::string_view::npos)
      item = item.substr(0, paren);
    auto parts = Split(item, ':');
    if (parts.empty() || Lower(parts[0]) != "gpu") continue;
    any = true;
    if (parts.size() == 1) {
      total += 1;
      continue;
    }
    std::string_view count = parts.back();
    auto v = ParseCount(count, 1024);
    if (!v) {
      if (parts.size() == 2) {  // gpu:a100 (type, no count) = 1
        total += 1;
        continue;
      }
      return std::nullopt;
    }
    total += *v;
  }
  if (!any) return 0;
  return total;
}

struct Line {
  int64_t number;
  std::string text;
};
// Lines without comments, joined across trailing backslashes.
std::vector<Line> ConfLines(std::string_view contents) {
  std::vector<Line> out;
  int64_t n = 0;
  std::string pending;
  int64_t pending_line = 0;
  for (auto raw : Split(contents, '\n')) {
    ++n;
    std::string_view l = raw;
    if (size_t hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
    l = Trim(l);
    if (pending.empty()) pending_line = n;
    if (!l.empty() && l.back() == '\\') {
      pending += std::string(l.substr(0, l.size() - 1)) + " ";
      continue;
    }
    pending += std::string(l);
    if (!Trim(pending).empty()) out.push_back({pending_line, std::string(Trim(pending))});
    pending.clear();
  }
  if (!Trim(pending).empty()) out.push_back({pending_line, std::string(Trim(pending))});
  return out;
}

}  // namespace

Result<int64_t> CountHostList(std::string_view list) {
  int64_t total = 0;
  size_t i = 0;
  list = Trim(list);
  if (list.empty()) return Status::InvalidArgument("empty host list");
  while (i < list.size()) {
    size_t b = i;
    int depth = 0;
    while (i < list.size() && (list[i] != ',' || depth > 0)) {
      if (list[i] == '[') ++depth;
      if (list[i] == ']') --depth;
      ++i;
    }
    std::string_view name = list.substr(b, i - b);
    ++i;
    if (name.empty()) continue;
    size_t lb = name.find('[');
    if (lb == std::string_view::npos) {
      total += 1;
      continue;
    }
    size_t rb = name.find(']', lb);
    if (rb == std::string_view::npos) {
      return Status::InvalidArgument(fmt::format("host list '{}': unclosed '['", name));
    }
    int64_t n = 0;
    for (auto range : Split(name.substr(lb + 1, rb - lb - 1), ',')) {
      auto dash = range.find('-');
      auto lo = ParseInt(Trim(range.substr(0, dash)));
      auto hi = dash == std::string_view::npos ? lo : ParseInt(Trim(range.substr(dash + 1)));
      if (!lo || !hi || *lo < 0 || *hi < *lo || *hi - *lo > 1'000'000) {
        return Status::InvalidArgument(fmt::format("host list '{}': bad range '{}'", name, range));
      }
      n += *hi - *lo + 1;
    }
    total += n;
    if (total > 10'000'000) return Status::InvalidArgument("host list: more than 10,000,000 names");
  }
  return total;
}

Status ApplySlurmSetting(SlurmConfig& config, std::string_view key, std::string_view value) {
  bool known = false;
  std::string why = ApplyKey(config, key, value, known);
  if (!known) {
    return Status::InvalidArgument(fmt::format(
        "'{}' is not a setting the slurm model knows (Priority weights, PriorityMaxAge, "
        "PriorityDecayHalfLife, PriorityFavorSmall, PriorityCalcPeriod, PriorityType, "
        "SchedulerType, bf_window, bf_max_job_test, bf_interval, bf_continue, qos.NAME, "
        "partition.NAME)",
        key));
  }
  if (!why.empty()) return Status::InvalidArgument(why);
  return Status::Ok();
}

Result<SlurmConfFile> ParseSlurmConf(std::string_view contents, std::string_view source,
                                     std::string_view gres_conf, std::string_view gres_source) {
  SlurmConfFile out;
  SlurmConfig& c = out.config;
  auto error = [&](int64_t line, const std::string& why) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}", source, line, why));
  };
  // gres.conf: GPUs per node name (Count= or the number of File= devices).
  std::map<std::string, int64_t> gres_by_node;
  for (const auto& l : ConfLines(gres_conf)) {
    std::string node;
    std::optional<int64_t> count;
    bool gpu = false;
    for (auto [k, v] : Pairs(l.text)) {
      const std::string key = Lower(k);
      if (key == "nodename") node = std::string(v);
      if (key == "name") gpu = Lower(v) == "gpu";
      if (key == "count") count = ParseCount(v, 1024);
      if (key == "file" && !count) {
        auto lb = v.find('[');
        if (lb == std::string_view::npos) {
          count = 1;
        } else {
          auto n = CountHostList(v);
          if (!n.ok()) {
            return Status::InvalidArgument(
                fmt::format("{}:{}: File: {}", gres_source, l.number, n.status().message()));
          }
          count = *n;
        }
      }
    }
    if (gpu && !node.empty() && count) {
      auto n = CountHostList(node);
      if (!n.ok()) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: NodeName: {}", gres_source, l.number, n.status().message()));
      }
      // Per-name counts: node ranges in gres.conf are rare; keyed by the list text.
      gres_by_node[node] += *count;
    }
  }
  struct NodeGroup {
    int64_t count;
    std::optional<int64_t> gpus;
    std::string names;
    int64_t line;
  };
  std::vector<NodeGroup> groups;
  for (const auto& l : ConfLines(contents)) {
    const size_t eq = l.text.find('=');
    if (eq == std::string::npos) continue;  // "Include x" and the like
    const std::string_view key = Trim(std::string_view(l.text).substr(0, eq));
    const std::string lkey = Lower(key);
    const std::string_view value = Trim(std::string_view(l.text).substr(eq + 1));
    if (lkey == "nodename") {
      auto pairs = Pairs(l.text);
      const std::string names(pairs.front().second);
      if (Lower(names) == "default") continue;
      auto n = CountHostList(names);
      if (!n.ok()) return error(l.number, "NodeName: " + n.status().message());
      NodeGroup g{*n, std::nullopt, names, l.number};
      for (auto [k, v] : pairs) {
        if (Lower(k) == "gres") {
          auto gpus = GresGpus(v);
          if (!gpus) return error(l.number, fmt::format("Gres: '{}' has no GPU count", v));
          g.gpus = *gpus;
        }
      }
      groups.push_back(g);
      continue;
    }
    if (lkey == "partitionname") {
      auto pairs = Pairs(l.text);
      const std::string name(pairs.front().second);
      if (Lower(name) == "default") continue;
      out.nodes.partitions.push_back(name);
      for (auto [k, v] : pairs) {
        if (Lower(k) == "priorityjobfactor") {
          auto f = ParseCount(v, 65533);
          if (!f) return error(l.number, fmt::format("PriorityJobFactor: '{}' is not 0..65533", v));
          c.partition_factor[name] = *f;
        }
      }
      continue;
    }
    if (lkey == "schedulerparameters") {
      for (auto opt : Split(value, ',')) {
        opt = Trim(opt);
        if (opt.empty()) continue;
        const size_t oeq = opt.find('=');
        const std::string_view okey = Trim(opt.substr(0, oeq));
        const std::string_view oval = oeq == std::string_view::npos ? "" : opt.substr(oeq + 1);
        bool known = false;
        std::string why = ApplyKey(c, okey, oval, known);
        if (!known) {
          const std::string lo = Lower(okey);
          if (std::find(std::begin(kNoEffectSchedulerParameters),
                        std::end(kNoEffectSchedulerParameters),
                        lo) != std::end(kNoEffectSchedulerParameters)) {
            c.unmodelled.push_back("SchedulerParameters=" + lo);
            continue;
          }
          return error(l.number,
                       fmt::format("SchedulerParameters option '{}' is not modelled; the "
                                   "simulation could differ from the site (remove it or ask for "
                                   "it to be modelled)",
                                   okey));
        }
        if (!why.empty()) return error(l.number, why);
      }
      continue;
    }
    bool known = false;
    std::string why;
    if (lkey == "schedulertype" || StartsWith(lkey, "priority")) {
      why = ApplyKey(c, key, value, known);
    } else {
      continue;  // unrelated to scheduling order
    }
    if (!known) {
      if (std::find(std::begin(kUnmodelledPriorityKeys), std::end(kUnmodelledPriorityKeys), lkey) !=
          std::end(kUnmodelledPriorityKeys)) {
        c.unmodelled.push_back(std::string(key));
        continue;
      }
      return error(l.number, fmt::format("'{}' is not a priority setting the slurm model knows; "
                                         "the simulation could differ from the site",
                                         key));
    }
    if (!why.empty()) return error(l.number, why);
  }
  int64_t max_gpus = 0, min_gpus = INT64_MAX;
  for (auto& g : groups) {
    if (!g.gpus) {
      // gres.conf lines name nodes as slurm.conf does, or per node (gpu1, gpu2 for gpu[1-2]):
      // then the largest per-line count stands for every node of the group.
      auto it = gres_by_node.find(g.names);
      int64_t fallback = 0;
      for (const auto& [name, n] : gres_by_node) fallback = std::max(fallback, n);
      g.gpus = it != gres_by_node.end() ? it->second : fallback;
    }
    if (*g.gpus > 1024) return error(g.line, fmt::format("Gres: {} GPUs per node", *g.gpus));
    out.nodes.nodes += static_cast<int32_t>(std::min<int64_t>(g.count, 1'000'000));
    out.nodes.total_gpus += g.count * *g.gpus;
    max_gpus = std::max(max_gpus, *g.gpus);
    min_gpus = std::min(min_gpus, *g.gpus);
  }
  out.nodes.gpus_per_node = static_cast<int32_t>(max_gpus);
  out.nodes.heterogeneous = !groups.empty() && min_gpus != max_gpus;
  return out;
}

Result<SlurmConfFile> ReadSlurmConf(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::string text, ReadTextFileToString(path));
  std::string gres;
  std::string gres_path;
  std::error_code ec;
  const auto beside = std::filesystem::path(path).parent_path() / "gres.conf";
  if (std::filesystem::is_regular_file(beside, ec)) {
    gres_path = beside.string();
    SM_ASSIGN_OR_RETURN(gres, ReadTextFileToString(gres_path));
  }
  return ParseSlurmConf(text, path, gres, gres_path);
}

std::vector<std::string> SlurmConfLines(const SlurmConfig& c) {
  auto minutes = [](Duration d) { return d.micros() / 60'000'000; };
  std::vector<std::string> out = {
      fmt::format("PriorityType=priority/{}", c.multifactor ? "multifactor" : "basic"),
      fmt::format("PriorityWeightAge={}", c.weight_age),
      fmt::format("PriorityWeightFairshare={}", c.weight_fairshare),
      fmt::format("PriorityWeightJobSize={}", c.weight_job_size),
      fmt::format("PriorityWeightPartition={}", c.weight_partition),
      fmt::format("PriorityWeightQOS={}", c.weight_qos),
      fmt::format("PriorityMaxAge={}", minutes(c.max_age)),
      fmt::format("PriorityDecayHalfLife={}", minutes(c.decay_half_life)),
      fmt::format("PriorityFavorSmall={}", c.favor_small ? "YES" : "NO"),
      fmt::format("SchedulerType=sched/{}", c.backfill ? "backfill" : "builtin"),
      fmt::format("SchedulerParameters=bf_window={},bf_max_job_test={},bf_interval={}{}",
                  minutes(c.bf_window), c.bf_max_job_test, c.bf_interval.micros() / 1'000'000,
                  c.bf_continue ? ",bf_continue" : "")};
  return out;
}

}  // namespace schedmate::policy
