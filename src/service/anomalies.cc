#include "service/anomalies.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "service/companion.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::service {
namespace {

constexpr const char* kKinds[] = {"idle_gpu", "node_failures", "over_requested", "repeated_failure",
                                  "slowed",   "stalled",       "time_limit_high"};

std::string Key(const Anomaly& a) { return a.kind + "|" + a.job_id + "|" + a.node; }

Duration Needed(const Prediction& p) { return p.high > Duration::Zero() ? p.high : p.duration; }

}  // namespace

void AnomalyDetector::JobAnomalies(const ServiceView& view, SimTime /*now*/,
                                   std::vector<Candidate>& out) const {
  for (const auto& v : view.jobs) {
    const slurm::SlurmJob& j = v.job;
    if (j.state == "RUNNING" && v.metrics) {
      if (v.metrics->stalled) {
        out.push_back({{.kind = "stalled",
                        .job_id = j.id,
                        .severity = "warning",
                        .evidence = fmt::format(
                            "no progress in the log{}{}",
                            v.metrics->step ? fmt::format(" after step {}", *v.metrics->step) : "",
                            v.metrics->note.empty() ? "" : " (" + v.metrics->note + ")"),
                        .suggestion = fmt::format("look at job {}'s log and processes; cancel or "
                                                  "requeue it if it hangs ({} GPUs held)",
                                                  j.id, j.gpus)},
                       options_.min_stalled});
      }
      if (v.metrics->slowdown) {
        out.push_back({{.kind = "slowed",
                        .job_id = j.id,
                        .severity = "info",
                        .evidence = v.metrics->note.empty() ? "step time up against the job's "
                                                              "own baseline"
                                                            : v.metrics->note,
                        .suggestion = fmt::format("check {} (GPU clocks, temperature, other jobs) "
                                                  "and the job's data loading",
                                                  j.node_list)},
                       options_.min_slowed});
      }
    }
    if ((j.state == "RUNNING" || j.state == "PENDING") && v.prediction && j.time_limit_min) {
      const Duration limit = Duration::Minutes(*j.time_limit_min);
      const Duration need = Needed(*v.prediction);
      if (need > Duration::Zero() &&
          limit.seconds_f() >= options_.limit_factor * need.seconds_f() &&
          limit - need >= options_.limit_slack) {
        const int64_t suggested = static_cast<int64_t>(std::ceil(need.seconds_f() * 1.5 / 60.0));
        out.push_back(
            {{.kind = "time_limit_high",
              .job_id = j.id,
              .severity = j.state == "PENDING" ? "warning" : "info",
              .evidence = fmt::format("time limit {} vs {} expected at most by the advisor",
                                      FormatDuration(limit), FormatDuration(need)),
              .suggestion = fmt::format("a time limit near {} minutes (--time={}) lets backfill "
                                        "place the job in gaps",
                                        suggested, suggested)},
             Duration::Zero()});
      }
    }
  }
}

void AnomalyDetector::FailureAnomalies(const ServiceView& view, SimTime now,
                                       std::vector<Candidate>& out) const {
  std::map<std::string, std::vector<const FailureRecord*>> by_node;
  std::map<std::pair<std::string, std::string>, std::vector<const FailureRecord*>> by_job;
  for (const auto& f : view.failures) {
    if (now - f.at > options_.failure_window) continue;
    if (f.cls == FailureClass::kInfra) {
      for (const auto& n : slurm::ExpandNodeList(f.node_list, 1024)) by_node[n].push_back(&f);
    }
    by_job[{f.job_id, f.category}].push_back(&f);
  }
  for (const auto& [node, fs] : by_node) {
    if (static_cast<int>(fs.size()) < options_.node_failure_count) continue;
    std::vector<std::string> jobs;
    for (const auto* f : fs) jobs.push_back(f->job_id + " (" + f->category + ")");
    out.push_back(
        {{.kind = "node_failures",
          .node = node,
          .severity = "critical",
          .evidence = fmt::format("{} infrastructure failures in {}: jobs {}", fs.size(),
                                  FormatDuration(options_.failure_window), fmt::join(jobs, ", ")),
          .suggestion = fmt::format("drain {} and run its health checks before it "
                                    "takes more jobs",
                                    node)},
         Duration::Zero()});
  }
  for (const auto& [key, fs] : by_job) {
    if (static_cast<int>(fs.size()) < options_.repeat_count) continue;
    out.push_back({{.kind = "repeated_failure",
                    .job_id = key.first,
                    .severity = "warning",
                    .evidence = fmt::format("failed {} times with {} in {}", fs.size(), key.second,
                                            FormatDuration(options_.failure_window)),
                    .suggestion = fmt::format("hold job {} and tell its user: the same failure "
                                              "repeats, so requeues do not help",
                                              key.first)},
                   Duration::Zero()});
  }
}

namespace {

// "gpu1:0,1 gpu2:3" for evidence.
std::string GpuList(const std::vector<const GpuSample*>& gpus) {
  std::map<std::string, std::vector<int>> by_node;
  for (const auto* g : gpus) by_node[g->node].push_back(g->index);
  std::vector<std::string> parts;
  for (const auto& [node, idx] : by_node)
    parts.push_back(fmt::format("{}:{}", node, fmt::join(idx, ",")));
  return fmt::format("{}", fmt::join(parts, " "));
}

struct UsageParts {
  std::vector<std::string> evidence;
  std::vector<std::string> change;
};

}  // namespace

void AnomalyDetector::UsageAnomalies(const ServiceView& view, SimTime now,
                                     std::vector<Candidate>& out) const {
  for (const auto& v : view.jobs) {
    const slurm::SlurmJob& j = v.job;
    if (j.state != "RUNNING") continue;
    const JobUsage* u = v.usage ? &*v.usage : nullptr;
    std::vector<const GpuSample*> in_use, idle_in_use, all_idle;
    const bool probed = u != nullptr && !u->gpus.empty();
    if (probed) {
      for (const auto& g : u->gpus) {
        const bool idle = g.utilization_pct && *g.utilization_pct <= options_.idle_gpu_util_pct;
        if (idle) all_idle.push_back(&g);
        if (g.memory_used_mib >= options_.busy_gpu_memory_mib) {
          in_use.push_back(&g);
          if (idle) idle_in_use.push_back(&g);
        }
      }
      const auto& idle = in_use.empty() ? all_idle : idle_in_use;
      if (!idle.empty()) {
        const bool all = idle.size() == u->gpus.size();
        out.push_back(
            {{.kind = "idle_gpu",
              .job_id = j.id,
              .severity = all ? "critical" : "warning",
              .evidence =
                  fmt::format("{} of {} GPUs at or below {:g}% utilisation ({}; {}){}", idle.size(),
                              u->gpus.size(), options_.idle_gpu_util_pct, GpuList(idle),
                              u->gpu_source, in_use.empty() ? ", no GPU memory in use" : ""),
              .suggestion = all ? fmt::format("job {} holds {} GPUs and computes on none: check "
                                              "it is not waiting on I/O or a hung rank; cancel "
                                              "it to free them",
                                              j.id, j.gpus)
                                : fmt::format("job {} leaves {} of its GPUs idle: check its "
                                              "data loading and the idle ranks",
                                              j.id, idle.size())},
             options_.min_idle_gpu,
             u->at});
      }
    }
    UsageParts parts;
    const int ranks = v.metrics && v.metrics->ranks ? *v.metrics->ranks : 0;  // 0: unknown
    const int gpus = probed ? static_cast<int>(u->gpus.size()) : j.gpus;
    int needed_gpus = gpus;
    if (gpus >= 2 && probed && !in_use.empty() && static_cast<int>(in_use.size()) < gpus) {
      needed_gpus = static_cast<int>(in_use.size());
      parts.evidence.push_back(fmt::format("{} of {} GPUs hold memory (>= {:g} MiB)", in_use.size(),
                                           gpus, options_.busy_gpu_memory_mib));
    }
    if (gpus >= 2 && ranks > 0 && ranks < gpus &&
        (!probed || static_cast<int>(in_use.size()) < gpus)) {
      needed_gpus = std::min(needed_gpus, ranks);
      parts.evidence.push_back(
          fmt::format("the log shows {} rank{} for {} GPUs", ranks, ranks == 1 ? "" : "s", gpus));
    }
    if (needed_gpus < gpus) {
      parts.change.push_back(j.nodes > 1 ? fmt::format("--gpus={}", needed_gpus)
                                         : fmt::format("--gres=gpu:{}", needed_gpus));
    }
    const double elapsed = j.start ? (now - *j.start).seconds_f() : 0;
    if (u != nullptr && u->cpu_seconds && j.cpus >= options_.min_cpus && elapsed > 0) {
      const double share = *u->cpu_seconds / (j.cpus * elapsed);
      if (share < options_.cpu_use_below) {
        const int want = std::max(1, static_cast<int>(std::ceil(*u->cpu_seconds / elapsed * 2)));
        parts.evidence.push_back(fmt::format("CPU time {:.0f}s is {:.0f}% of {} CPUs x {}",
                                             *u->cpu_seconds, share * 100, j.cpus,
                                             FormatDuration(Duration::FromSecondsF(elapsed))));
        parts.change.push_back(fmt::format("--cpus-per-task={}", want));
      }
    }
    if (u != nullptr && u->memory_bytes && j.memory_mib &&
        *j.memory_mib >= options_.min_memory_mib) {
      const double used_mib = static_cast<double>(*u->memory_bytes) / (1024.0 * 1024.0);
      if (used_mib < options_.memory_use_below * static_cast<double>(*j.memory_mib)) {
        const int64_t want =
            std::max<int64_t>(1024, static_cast<int64_t>(std::ceil(used_mib * 2 / 1024)) * 1024);
        parts.evidence.push_back(
            fmt::format("memory {:.0f} MiB used of {} MiB allocated", used_mib, *j.memory_mib));
        parts.change.push_back(fmt::format("--mem={}G", want / 1024));
      }
    }
    if (parts.evidence.empty()) continue;
    out.push_back({{.kind = "over_requested",
                    .job_id = j.id,
                    .severity = "warning",
                    .evidence = fmt::format("{}", fmt::join(parts.evidence, "; ")),
                    .suggestion = fmt::format("ask for {} next time: the rest waits idle while "
                                              "other jobs queue for it",
                                              fmt::join(parts.change, " "))},
                   options_.min_over_requested,
                   u != nullptr ? std::optional(u->at) : std::nullopt});
  }
}

std::vector<Anomaly> AnomalyDetector::Update(const ServiceView& view, SimTime now) {
  std::vector<Candidate> candidates;
  JobAnomalies(view, now, candidates);
  FailureAnomalies(view, now, candidates);
  UsageAnomalies(view, now, candidates);
  std::map<std::string, SimTime> seen;
  std::vector<Anomaly> out;
  for (auto& c : candidates) {
    const std::string key = Key(c.anomaly);
    auto it = first_seen_.find(key);
    const SimTime since =
        it != first_seen_.end() ? it->second : std::max(now, c.observed.value_or(now));
    seen[key] = since;
    if (now - since < c.min_duration) continue;
    c.anomaly.since = since;
    out.push_back(std::move(c.anomaly));
  }
  first_seen_ = std::move(seen);  // a condition that cleared starts over
  std::sort(out.begin(), out.end(), [](const Anomaly& a, const Anomaly& b) {
    return std::tie(a.kind, a.job_id, a.node) < std::tie(b.kind, b.job_id, b.node);
  });
  return out;
}

nlohmann::json AnomaliesToJson(const std::vector<Anomaly>& anomalies) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& a : anomalies) {
    nlohmann::json j = {{"kind", a.kind},
                        {"since", a.since.seconds()},
                        {"severity", a.severity},
                        {"evidence", a.evidence},
                        {"suggestion", a.suggestion}};
    if (!a.job_id.empty()) j["job_id"] = a.job_id;
    if (!a.node.empty()) j["node"] = a.node;
    out.push_back(std::move(j));
  }
  return out;
}

std::map<std::string, int64_t> CountAnomalies(const std::vector<Anomaly>& anomalies) {
  std::map<std::string, int64_t> counts;
  for (const char* k : kKinds) counts[k] = 0;
  for (const auto& a : anomalies) ++counts[a.kind];
  return counts;
}

}  // namespace schedmate::service
