#pragma once
// JSON encodings of the service's values, as the HTTP API returns them. Times are Unix seconds
// (numbers) plus ISO-8601 UTC text where people read them; durations are seconds.

#include <nlohmann/json.hpp>
#include <string_view>

#include "core/result.h"
#include "service/companion.h"
#include "service/service_store.h"
#include "sim/whatif_run.h"
#include "store/history_store.h"

namespace schedmate::api {

nlohmann::json ToJson(const service::Prediction& p);
nlohmann::json ToJson(const service::LogMetrics& m);
nlohmann::json ToJson(const service::StartEstimate& e);
nlohmann::json ToJson(const service::JobView& v, bool detail);
nlohmann::json ToJson(const slurm::SlurmNode& n);
nlohmann::json ToJson(const service::FailureRecord& f);
nlohmann::json ToJson(const service::ActionRecord& a);
// GET /v1/scheduling: the order mode's state and its last ranking.
nlohmann::json ToJson(const service::SchedulingView& s);
nlohmann::json ToJson(const service::MetricSample& m);
nlohmann::json ToJson(const service::SubmitAdvice& a);
nlohmann::json ToJson(const store::StoredJob& j);
// "2026-11-22T00:32:08Z".
std::string IsoUtc(SimTime t);

// The JSON body of POST /v1/estimate: "script", "name", "user", "partition" (strings) and "gpus",
// "nodes", "time_limit_min" (integers). A field that is absent or of another type keeps the
// JobContext default; gpus is clamped to 0..slurm::kMaxGpuCount and nodes to 1..2^20.
// kInvalidArgument when the body is not a JSON object. Call NormalizeEstimateRequest after.
Result<service::JobContext> EstimateRequestFromJson(std::string_view body);
// What both forms of POST /v1/estimate (JSON, and job_submit.lua's query) share: a time limit
// outside 1..slurm::kMaxTimeLimitMinutes (0, negative, Slurm's NO_VAL/INFINITE, larger) means
// "none", as job_submit.lua sends it; an empty name becomes "sbatch".
void NormalizeEstimateRequest(service::JobContext& job);

// The JSON body of POST /v1/whatif, the changes of `schedmate whatif`: "add_nodes" and
// "remove_nodes" (arrays of "4x8[:PARTITION]" / "2[:PARTITION]" strings), "load" (number),
// "policy" and "baseline_policy" (strings), "set" (object of slurm.conf KEY: string or number),
// "seeds" and "seed" (non-negative integers). Every key is optional; an empty body or {} is the
// unchanged site. kInvalidArgument naming the field (also put in `field`, "" for the body
// itself) for a body that is not a JSON object, an unknown key or a value of the wrong type;
// ranges and meanings are checked by sim::SetUpWhatIf.
Result<sim::WhatIfScenario> WhatIfRequestFromJson(std::string_view body, std::string& field);

}  // namespace schedmate::api
