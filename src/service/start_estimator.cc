#include "service/start_estimator.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace schedmate::service {
namespace {

// Free GPUs of one node as a step function: `base` at now, plus `deltas` from each time on.
struct Profile {
  std::string name;
  int32_t total = 0;
  int32_t base = 0;
  std::map<SimTime, int32_t> deltas;

  int32_t FreeAt(SimTime t) const {
    int32_t f = base;
    for (const auto& [at, d] : deltas) {
      if (at > t) break;
      f += d;
    }
    return f;
  }
  // Minimum free GPUs over [t, t + d).
  int32_t MinFree(SimTime t, Duration d) const {
    int32_t f = FreeAt(t);
    int32_t lo = f;
    SimTime end = t + d;
    for (auto it = deltas.upper_bound(t); it != deltas.end() && it->first < end; ++it) {
      f += it->second;
      lo = std::min(lo, f);
    }
    return lo;
  }
  void Reserve(SimTime t, Duration d, int32_t gpus) {
    deltas[t] -= gpus;
    deltas[t + d] += gpus;
  }
};

bool IsHeld(const std::string& reason) {
  return reason.rfind("JobHeld", 0) == 0 || reason == "job_requeued_in_held_state" ||
         reason == "Dependency" || reason == "DependencyNeverSatisfied" ||
         reason == "PartitionDown" || reason == "PartitionInactive";
}

}  // namespace

std::vector<StartEstimate> StartTimeEstimator::Estimate(
    SimTime now, const std::vector<NodeCapacity>& nodes, const std::vector<RunningJobLoad>& running,
    std::vector<PendingJobRequest> pending) const {
  std::vector<Profile> profiles;
  std::map<std::string, size_t> index;
  std::vector<NodeCapacity> sorted_nodes = nodes;
  std::sort(sorted_nodes.begin(), sorted_nodes.end(),
            [](const NodeCapacity& a, const NodeCapacity& b) { return a.name < b.name; });
  for (const auto& n : sorted_nodes) {
    if (!n.available) continue;
    index[n.name] = profiles.size();
    profiles.push_back(Profile{n.name, n.gpus_total, n.gpus_total, {}});
  }
  int32_t max_gpus = 0;
  for (const auto& p : profiles) max_gpus = std::max(max_gpus, p.total);

  for (const auto& r : running) {
    SimTime end = r.start + r.predicted;
    if (end < now + options_.overrun) end = now + options_.overrun;
    if (r.time_limit && r.start + *r.time_limit < end) {
      end = std::max(now + Duration::Seconds(1), r.start + *r.time_limit);
    }
    for (const auto& node : r.nodes) {
      auto it = index.find(node);
      if (it == index.end()) continue;  // on a drained/down node: it frees nothing usable
      Profile& p = profiles[it->second];
      p.base -= r.gpus_per_node;
      p.deltas[end] += r.gpus_per_node;
    }
  }

  std::stable_sort(pending.begin(), pending.end(),
                   [](const PendingJobRequest& a, const PendingJobRequest& b) {
                     if (a.priority != b.priority) return a.priority > b.priority;
                     if (a.submit != b.submit) return a.submit < b.submit;
                     if (a.job_id.size() != b.job_id.size())
                       return a.job_id.size() < b.job_id.size();
                     return a.job_id < b.job_id;
                   });

  std::vector<StartEstimate> out;
  out.reserve(pending.size());
  for (const auto& job : pending) {
    StartEstimate e;
    e.job_id = job.job_id;
    e.reason = job.reason;
    int32_t want_nodes = std::max(1, job.nodes);
    Duration d = std::max(job.predicted, Duration::Seconds(1));
    if (IsHeld(job.reason)) {
      e.note = "held: starts only after " + job.reason + " clears";
      out.push_back(std::move(e));
      continue;
    }
    if (job.gpus_per_node > max_gpus || want_nodes > static_cast<int32_t>(profiles.size())) {
      e.note = fmt::format(
          "never fits: asks {} node(s) x {} GPU(s); {} available node(s) with at most {} GPU(s)",
          want_nodes, job.gpus_per_node, profiles.size(), max_gpus);
      out.push_back(std::move(e));
      continue;
    }
    SimTime earliest = job.not_before && *job.not_before > now ? *job.not_before : now;
    std::set<SimTime> candidates{earliest};
    for (const auto& p : profiles)
      for (const auto& [t, delta] : p.deltas)
        if (t > earliest) candidates.insert(t);
    auto excluded = [&](const Profile& p) {
      return std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(), p.name) !=
             job.excluded_nodes.end();
    };
    for (SimTime t : candidates) {
      std::vector<size_t> fit;
      for (size_t i = 0; i < profiles.size() && static_cast<int32_t>(fit.size()) < want_nodes;
           ++i) {
        if (!excluded(profiles[i]) && profiles[i].MinFree(t, d) >= job.gpus_per_node)
          fit.push_back(i);
      }
      if (static_cast<int32_t>(fit.size()) < want_nodes) continue;
      for (size_t i : fit) {
        if (job.gpus_per_node > 0) profiles[i].Reserve(t, d, job.gpus_per_node);
        e.nodes.push_back(profiles[i].name);
      }
      e.start = t;
      if (t == now) {
        e.note = "fits now; waiting for Slurm's next scheduling pass";
      } else if (t == earliest) {
        e.note = fmt::format("eligible in {} (Slurm's BeginTime, e.g. a requeue's backoff)",
                             FormatDuration(t - now));
      } else {
        e.note = fmt::format("after {} as running and earlier jobs end (predicted)",
                             FormatDuration(t - now));
      }
      break;
    }
    if (!e.start) {
      std::string list;
      for (const auto& n : job.excluded_nodes) list += (list.empty() ? "" : ",") + n;
      e.note = "never fits on the available nodes outside its ExcNodeList (" + list + ")";
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace schedmate::service
