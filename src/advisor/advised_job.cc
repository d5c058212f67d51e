#include "advisor/advised_job.h"

#include <filesystem>

namespace schedmate::advisor {

JobRecord JobFromMetadata(const JobMetadata& m, const std::string& user) {
  JobRecord j;
  j.id = "advise:" + m.entry;
  j.user = user;
  j.name = std::filesystem::path(m.entry).filename().string();
  if (auto g = m.Count("num_gpus", 1'000'000)) j.gpus = GpuAmount::Whole(*g);
  if (auto n = m.Count("num_nodes", 100'000)) j.nodes = static_cast<int32_t>(*n);
  m.ApplyWorkloadTo(j);
  return j;
}

JobFingerprint FingerprintOfAdvisedJob(const JobMetadata& m, const JobRecord& job) {
  // The metadata's semantics (steps, epochs, batch, model family...) go with it, so a job with no
  // similar history gets the semantic cold start (duration_priors.h).
  return FingerprintOf(job, m);
}

MetadataMerge::MetadataMerge(const JobMetadata& builtin, std::optional<double> below)
    : builtin_(builtin), shown_(builtin) {
  if (!below) return;
  for (const auto& [field, c] : builtin.confidence) {
    if (!builtin.values.count(field)) continue;
    auto source = builtin.sources.find(field);
    auto& to = c >= *below ? sure_ : unsure_;
    to[field] = {builtin.values.at(field),
                 source != builtin.sources.end() ? source->second : std::string()};
  }
  for (const auto& [field, vs] : unsure_) {
    shown_.values.erase(field);
    shown_.sources.erase(field);
  }
}

JobMetadata MetadataMerge::Merge(JobMetadata m) const {
  for (const auto& [field, vs] : sure_) {
    m.values[field] = vs.first;
    m.sources[field] = vs.second;
  }
  for (const auto& [field, vs] : unsure_) {
    if (m.values.count(field)) continue;
    m.values[field] = vs.first;
    m.sources[field] = vs.second;
  }
  m.confidence.clear();
  for (const auto& [field, c] : builtin_.confidence) {
    auto source = m.sources.find(field);
    if (source != m.sources.end() && source->second != "llm") m.confidence[field] = c;
  }
  return m;
}

}  // namespace schedmate::advisor
