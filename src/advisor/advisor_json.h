#pragma once
// JSON encoders for the advisor's estimates (the "estimate" object of `schedmate advise --json`
// and the evidence stored with a prediction).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "advisor/history_estimator.h"

namespace schedmate::advisor {

// [{"job_id", "user", "duration_s", "scaled_s", "similarity", "finish_s"}, ...], most recent first.
nlohmann::json NeighboursToJson(const std::vector<Evidence>& neighbours);
// [{"job_id", "duration_s"}, ...]: the evidence kept with a stored prediction.
nlohmann::json StoredEvidenceToJson(const std::vector<Evidence>& neighbours);
// {"duration_s", "low_s", "high_s", "confidence", "tier", "history_jobs", "neighbours",
//  "explanation"}; `history_jobs` is how many past jobs the estimator had seen.
nlohmann::json EstimateToJson(const DetailedEstimate& d, int64_t history_jobs);

}  // namespace schedmate::advisor
