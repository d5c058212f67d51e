#include "sim/sim_json.h"

#include <algorithm>
#include <cmath>

namespace schedmate::sim {

namespace {

// The counts as top-level keys of `j` (jobs, rejected, unfinished, skipped).
void AddJobCounts(nlohmann::json& j, const JobCounts& c) {
  j["jobs"] = c.jobs;
  j["rejected"] = c.rejected;
  j["unfinished"] = c.unfinished;
  j["skipped"] = c.skipped;
}

}  // namespace

nlohmann::json SummaryToJson(const Summary& s) {
  nlohmann::json p;
  p["policy"] = s.policy;
  AddJobCounts(p, s.counts);
  p["preemptions"] = s.preemptions;
  p["failure_restarts"] = s.failure_restarts;
  p["avg_jct_s"] = s.avg_jct_s;
  p["avg_queue_s"] = s.avg_queue_s;
  p["p50_jct_s"] = s.p50_jct_s;
  p["p95_jct_s"] = s.p95_jct_s;
  p["p99_jct_s"] = s.p99_jct_s;
  p["makespan_s"] = s.makespan_s;
  p["gpu_utilization"] = s.gpu_utilization;
  nlohmann::json per = nlohmann::json::object();
  for (const auto& v : s.per_vc) {
    per[v.name] = {{"jobs", v.jobs}, {"avg_jct_s", v.avg_jct_s}, {"avg_queue_s", v.avg_queue_s}};
  }
  p["per_vc"] = std::move(per);
  return p;
}

nlohmann::json WhatIfMetricsToJson(const WhatIfMetrics& m) {
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& p : m.per_partition) {
    parts[p.name.empty() ? "(none)" : p.name] = {{"jobs", p.jobs},
                                                 {"avg_queue_s", p.avg_queue_s},
                                                 {"p95_queue_s", p.p95_queue_s},
                                                 {"avg_jct_s", p.avg_jct_s}};
  }
  nlohmann::json j = {{"avg_queue_s", m.avg_queue_s},
                      {"p95_queue_s", m.p95_queue_s},
                      {"avg_jct_s", m.avg_jct_s},
                      {"utilisation", m.utilisation},
                      {"per_partition", parts}};
  AddJobCounts(j, m.counts);
  return j;
}

nlohmann::json WhatIfSpreadToJson(const std::vector<WhatIfMetrics>& runs,
                                  const std::vector<uint64_t>& seeds) {
  nlohmann::json j = {{"seeds", seeds}, {"runs", runs.size()}};
  auto one = [&](const char* name, double WhatIfMetrics::*field) {
    double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0;
    for (const auto& r : runs) {
      const double v = r.*field;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    const double n = static_cast<double>(runs.size());
    const double mean = runs.empty() ? 0 : sum / n;
    for (const auto& r : runs) sq += (r.*field - mean) * (r.*field - mean);
    j[name] = {{"min", runs.empty() ? 0 : lo},
               {"max", runs.empty() ? 0 : hi},
               {"stdev", runs.size() > 1 ? std::sqrt(sq / (n - 1)) : 0.0}};
  };
  one("avg_queue_s", &WhatIfMetrics::avg_queue_s);
  one("p95_queue_s", &WhatIfMetrics::p95_queue_s);
  one("avg_jct_s", &WhatIfMetrics::avg_jct_s);
  one("utilisation", &WhatIfMetrics::utilisation);
  return j;
}

nlohmann::json ObservedWaitsToJson(const std::optional<ObservedWaits>& w) {
  if (!w) return nullptr;
  return {{"jobs", w->jobs}, {"avg_queue_s", w->avg_queue_s}, {"p95_queue_s", w->p95_queue_s}};
}

}  // namespace schedmate::sim
