#include "advisor/advisor_json.h"

namespace schedmate::advisor {

nlohmann::json NeighboursToJson(const std::vector<Evidence>& neighbours) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& n : neighbours) {
    out.push_back({{"job_id", n.job_id},
                   {"user", n.user},
                   {"duration_s", n.duration_s},
                   {"scaled_s", n.scaled_s},
                   {"similarity", n.similarity},
                   {"finish_s", n.finish_s}});
  }
  return out;
}

nlohmann::json StoredEvidenceToJson(const std::vector<Evidence>& neighbours) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& n : neighbours)
    out.push_back({{"job_id", n.job_id}, {"duration_s", n.duration_s}});
  return out;
}

nlohmann::json EstimateToJson(const DetailedEstimate& d, int64_t history_jobs) {
  return {{"duration_s", d.estimate.duration.seconds_f()},
          {"low_s", d.estimate.low.seconds_f()},
          {"high_s", d.estimate.high.seconds_f()},
          {"confidence", d.estimate.confidence},
          {"tier", d.tier},
          {"history_jobs", history_jobs},
          {"neighbours", NeighboursToJson(d.neighbours)},
          {"explanation", d.estimate.explanation}};
}

}  // namespace schedmate::advisor
