#include "advisor/job_metadata.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace schedmate::advisor {

std::optional<double> JobMetadata::Number(std::string_view field) const {
  auto it = values.find(std::string(field));
  if (it == values.end() || !it->second.is_number()) return std::nullopt;
  return it->second.get<double>();
}

std::optional<int64_t> JobMetadata::Count(std::string_view field, int64_t max) const {
  std::optional<double> v = Number(field);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > static_cast<double>(max)) return std::nullopt;
  return static_cast<int64_t>(std::llround(*v));
}

void JobMetadata::ApplyWorkloadTo(JobRecord& job) const {
  // A batch past int32 or more than 1e15 steps is not a value to plan with.
  if (auto b = Count("global_batch_size", INT32_MAX)) job.batch_size = static_cast<int32_t>(*b);
  if (auto s = Count("max_steps", 1'000'000'000'000'000)) job.iterations = *s;
  job.model = Text("model");
  job.dataset = Text("dataset");
  const std::string p = Text("precision");
  if (!p.empty()) job.amp = (p == "fp32") ? 0 : 1;
}

std::string JobMetadata::Text(std::string_view field) const {
  auto it = values.find(std::string(field));
  return it != values.end() && it->second.is_string() ? it->second.get<std::string>() : "";
}

nlohmann::json JobMetadata::FieldsJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (std::string_view f : kMetadataFields) {
    auto it = values.find(std::string(f));
    j[std::string(f)] = it == values.end() ? nlohmann::json(nullptr) : it->second;
  }
  return j;
}

nlohmann::json JobMetadata::SourcesJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (std::string_view f : kMetadataFields) {
    auto it = sources.find(std::string(f));
    if (it != sources.end()) j[std::string(f)] = it->second;
  }
  return j;
}

nlohmann::json JobMetadata::ConfidenceJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (std::string_view f : kMetadataFields) {
    auto it = confidence.find(std::string(f));
    if (it != confidence.end() && values.count(std::string(f))) j[std::string(f)] = it->second;
  }
  return j;
}

nlohmann::json JobMetadata::EnginesJson() const {
  nlohmann::json j = nlohmann::json::object();
  for (std::string_view f : kMetadataFields) {
    if (!values.count(std::string(f))) continue;
    auto s = sources.find(std::string(f));
    j[std::string(f)] = s != sources.end() && s->second == "llm" ? "llm" : "builtin";
  }
  return j;
}

double JobMetadata::AnswerConfidence() const {
  static const char* kKey[] = {
      "model",     "dataset", "per_device_batch_size", "global_batch_size", "epochs",
      "max_steps", "num_gpus"};
  double c = 1.0;
  for (const char* f : kKey) {
    if (!values.count(f)) continue;
    auto it = confidence.find(f);
    c = std::min(c, it != confidence.end() ? it->second : 0.5);
  }
  const bool batch = Has("per_device_batch_size") || Has("global_batch_size");
  const bool work = Has("epochs") || Has("max_steps");
  if (!batch || !work) c = std::min(c, 0.4);
  return c;
}

std::string JobMetadata::FingerprintText() const {
  // Fields that describe the workload; resources and launcher are keyed separately by the
  // estimator, and free-text fields like task are too noisy to compare.
  static const char* kKeys[] = {
      "framework",       "model",      "model_family", "dataset", "per_device_batch_size",
      "sequence_length", "image_size", "precision"};
  std::string out;
  for (const char* k : kKeys) {
    auto it = values.find(k);
    if (it == values.end()) continue;
    std::string v = it->second.is_string() ? it->second.get<std::string>() : it->second.dump();
    if (!out.empty()) out += ' ';
    out += std::string(k) + "=" + ToLower(v);
  }
  return out;
}

}  // namespace schedmate::advisor
