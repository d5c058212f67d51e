#include "slurm/conf_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/strings.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::slurm {
namespace {

// One `Key=Value ...` line: keys lower-cased, values as written.
struct ConfLine {
  int line = 0;
  std::map<std::string, std::string> kv;
  std::string first_key;  // lower-cased key of the first pair ("nodename", "partitionname", ...)
  std::string first_value;
};

std::vector<ConfLine> ReadLines(std::string_view text) {
  std::vector<ConfLine> out;
  int no = 0;
  for (std::string_view raw : Split(text, '\n')) {
    ++no;
    std::string_view s = raw;
    if (auto hash = s.find('#'); hash != std::string_view::npos) s = s.substr(0, hash);
    s = Trim(s);
    if (s.empty()) continue;
    ConfLine l;
    l.line = no;
    for (std::string_view tok : SplitWhitespace(s)) {
      auto eq = tok.find('=');
      if (eq == std::string_view::npos) continue;
      std::string key = ToLower(tok.substr(0, eq));
      std::string value(tok.substr(eq + 1));
      if (l.first_key.empty()) {
        l.first_key = key;
        l.first_value = value;
      }
      l.kv[key] = value;
    }
    if (!l.first_key.empty()) out.push_back(std::move(l));
  }
  return out;
}

std::string Get(const ConfLine& l, const char* key) {
  auto it = l.kv.find(key);
  return it == l.kv.end() ? "" : it->second;
}

bool DeclaresGpus(const std::string& gres) {
  for (std::string_view g : Split(gres, ','))
    if (ToLower(g).rfind("gpu", 0) == 0) return true;
  return false;
}

bool Finite(const std::string& time) {
  const std::string t = ToLower(time);
  return !t.empty() && t != "infinite" && t != "unlimited";
}

struct Checker {
  std::string slurm_file, gres_file;
  std::vector<ConfFinding> out;
  std::map<std::string, std::pair<int, std::string>> node_gres;  // node -> (line, Gres=)
  std::string gres_types;
  int gres_line = 0;

  void Add(const char* check, const char* severity, const std::string& file, int line,
           std::string subject, std::string evidence, std::string suggestion) {
    out.push_back({check, severity, file, line, std::move(subject), std::move(evidence),
                   std::move(suggestion)});
  }

  void Nodes(const std::vector<ConfLine>& lines) {
    std::string default_gres;
    bool any_gpu = false;
    int any_gpu_line = 0;
    for (const auto& l : lines) {
      if (l.first_key == "grestypes") {
        gres_types = l.first_value;
        gres_line = l.line;
      }
      if (l.first_key != "nodename") continue;
      std::string gres = l.kv.count("gres") ? Get(l, "gres") : default_gres;
      if (ToLower(l.first_value) == "default") {
        default_gres = gres;
        continue;
      }
      for (const auto& n : ExpandNodeList(l.first_value)) node_gres[n] = {l.line, gres};
      if (DeclaresGpus(gres) && !any_gpu) {
        any_gpu = true;
        any_gpu_line = l.line;
      }
    }
    bool typed = false;
    for (std::string_view t : Split(gres_types, ','))
      if (ToLower(Trim(t)) == "gpu") typed = true;
    if (any_gpu && !typed) {
      Add("gres_types_missing", "error", slurm_file, gres_line ? gres_line : any_gpu_line, "",
          "nodes declare Gres=gpu but GresTypes=" + (gres_types.empty() ? "(unset)" : gres_types),
          "add gpu to GresTypes (GresTypes=gpu)");
    }
  }

  void Gres(const std::vector<ConfLine>& lines) {
    for (const auto& l : lines) {
      std::string nodes = Get(l, "nodename");
      std::string name = ToLower(Get(l, "name"));
      if (nodes.empty() || name != "gpu") continue;
      for (const auto& n : ExpandNodeList(nodes)) {
        auto it = node_gres.find(n);
        if (it != node_gres.end() && DeclaresGpus(it->second.second)) continue;
        Add("gres_not_on_node", "error", gres_file, l.line, n,
            fmt::format("{} gives {} GPUs, but {}'s NodeName line{} declares none", gres_file, n, n,
                        it == node_gres.end()
                            ? " (none found)"
                            : fmt::format(" ({}:{})", slurm_file, it->second.first)),
            fmt::format("add Gres=gpu:N to the NodeName line of {}", n));
      }
    }
  }

  void Partitions(const std::vector<ConfLine>& lines) {
    std::string default_time, max_time, default_nodes;
    for (const auto& l : lines) {
      if (l.first_key != "partitionname") continue;
      const std::string dt = l.kv.count("defaulttime") ? Get(l, "defaulttime") : default_time;
      const std::string mt = l.kv.count("maxtime") ? Get(l, "maxtime") : max_time;
      const std::string nodes = l.kv.count("nodes") ? Get(l, "nodes") : default_nodes;
      if (ToLower(l.first_value) == "default") {
        default_time = dt;
        max_time = mt;
        default_nodes = nodes;
        continue;
      }
      bool has_node = ToLower(nodes) == "all" && !node_gres.empty();
      for (const auto& n : ExpandNodeList(nodes))
        if (node_gres.count(n)) has_node = true;
      if (!has_node) {
        Add("partition_no_nodes", "error", slurm_file, l.line, l.first_value,
            "partition " + l.first_value + " has " +
                (nodes.empty() ? "no Nodes=" : "Nodes=" + nodes + ", none of them defined"),
            "give it nodes (Nodes=...) or remove it; jobs submitted to it never start");
      }
      if (!Finite(dt) && !Finite(mt)) {
        Add("unlimited_default_time", "warning", slurm_file, l.line, l.first_value,
            "partition " + l.first_value +
                " has no DefaultTime and MaxTime=" + (mt.empty() ? "(unset, UNLIMITED)" : mt),
            "set DefaultTime (e.g. DefaultTime=4:00:00) so jobs without --time get a limit "
            "backfill can plan with");
      }
    }
  }

  void Scheduler(const std::vector<ConfLine>& lines) {
    for (const auto& l : lines) {
      if (l.first_key == "schedulertype" && ToLower(l.first_value) == "sched/builtin") {
        Add("backfill_disabled", "warning", slurm_file, l.line, "",
            "SchedulerType=sched/builtin: jobs start strictly in priority order",
            "SchedulerType=sched/backfill lets small jobs use the GPUs idle before a big job's "
            "start");
      }
    }
  }
};

}  // namespace

std::vector<ConfFinding> CheckSlurmConf(std::string_view slurm_conf, std::string_view slurm_source,
                                        std::string_view gres_conf, std::string_view gres_source) {
  Checker c{std::string(slurm_source), std::string(gres_source)};
  const std::vector<ConfLine> lines = ReadLines(slurm_conf);
  c.Nodes(lines);
  c.Gres(ReadLines(gres_conf));
  c.Partitions(lines);
  c.Scheduler(lines);
  std::sort(c.out.begin(), c.out.end(), [](const ConfFinding& a, const ConfFinding& b) {
    return std::tie(a.check, a.subject, a.line) < std::tie(b.check, b.subject, b.line);
  });
  return c.out;
}

}  // namespace schedmate::slurm
