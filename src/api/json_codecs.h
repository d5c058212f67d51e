#pragma once
// JSON encodings of the service's values, as the HTTP API returns them. Times are Unix seconds
// (numbers) plus ISO-8601 UTC text where people read them; durations are seconds.

#include <nlohmann/json.hpp>

#include "service/companion.h"
#include "service/service_store.h"
#include "store/history_store.h"

namespace schedmate::api {

nlohmann::json ToJson(const service::Prediction& p);
nlohmann::json ToJson(const service::LogMetrics& m);
nlohmann::json ToJson(const service::StartEstimate& e);
nlohmann::json ToJson(const service::JobView& v, bool detail);
nlohmann::json ToJson(const slurm::SlurmNode& n);
nlohmann::json ToJson(const service::FailureRecord& f);
nlohmann::json ToJson(const service::ActionRecord& a);
nlohmann::json ToJson(const service::MetricSample& m);
nlohmann::json ToJson(const service::SubmitAdvice& a);
nlohmann::json ToJson(const store::StoredJob& j);
// "2026-11-22T00:32:08Z".
std::string IsoUtc(SimTime t);

}  // namespace schedmate::api
