#pragma once
// JSON encoders for the simulator's results (the shapes of `schedmate simulate --json` and
// `schedmate whatif|tune --json`). Objects are nlohmann's sorted maps: keys print in name order.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "sim/metrics.h"
#include "sim/whatif.h"

namespace schedmate::sim {

// One policy's summary: {"policy", "jobs", "rejected", "unfinished", "skipped", "preemptions",
// "failure_restarts", "avg_jct_s", "avg_queue_s", "p50_jct_s", "p95_jct_s", "p99_jct_s",
// "makespan_s", "gpu_utilization", "per_vc": {NAME: {"jobs", "avg_jct_s", "avg_queue_s"}}}.
nlohmann::json SummaryToJson(const Summary& s);

// {"jobs", "rejected", "unfinished", "skipped", "avg_queue_s", "p95_queue_s", "avg_jct_s",
//  "utilisation", "per_partition": {NAME|"(none)": {"jobs", "avg_queue_s", "p95_queue_s",
//  "avg_jct_s"}}}.
nlohmann::json WhatIfMetricsToJson(const WhatIfMetrics& m);

// The spread of several runs: {"seeds", "runs", and for avg_queue_s, p95_queue_s, avg_jct_s and
// utilisation {"min", "max", "stdev"}} (0 without runs; the sample stdev, 0 for one run).
nlohmann::json WhatIfSpreadToJson(const std::vector<WhatIfMetrics>& runs,
                                  const std::vector<uint64_t>& seeds);

// {"jobs", "avg_queue_s", "p95_queue_s"}, or null when the history records no waits.
nlohmann::json ObservedWaitsToJson(const std::optional<ObservedWaits>& w);

}  // namespace schedmate::sim
