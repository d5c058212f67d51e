#pragma once
// JSON encoder for a trace's statistics (the shape of `schedmate trace stats --json`).

#include <nlohmann/json.hpp>

#include "core/job.h"
#include "trace/trace_stats.h"

namespace schedmate::trace {

// {"source", "format", "jobs", "rows_read", "rows_skipped", "skip_reasons", "first_submit_s",
//  "last_submit_s", "span_s", "mean_interarrival_s", "users", "vcs", "gpu_histogram": [{"gpus",
//  "jobs"}, ...] (bucket order), "durations_known", "duration_s": {"p50", "p90", "p99", "mean",
//  "max"}, "gpu_hours", "states": {STATE: jobs}}.
nlohmann::json TraceStatsToJson(const JobTable& t, const TraceStats& s);

}  // namespace schedmate::trace
