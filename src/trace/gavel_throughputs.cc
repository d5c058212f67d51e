#include "trace/gavel_throughputs.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/strings.h"
#include "trace/reader_internal.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

// "('ResNet-50 (batch size 64)', 1)" -> ("ResNet-50 (batch size 64)", 1); plain names -> (name, 0).
bool ParseKey(std::string_view key, std::string& type, int64_t& scale) {
  key = Trim(key);
  if (key.size() >= 2 && key.front() == '(' && key.back() == ')') {
    std::string_view inner = key.substr(1, key.size() - 2);
    size_t comma = inner.rfind(',');
    if (comma == std::string_view::npos) return false;
    std::string_view name = Trim(inner.substr(0, comma));
    if (name.size() < 2 || (name.front() != '\'' && name.front() != '"') ||
        name.back() != name.front()) {
      return false;
    }
    type = std::string(name.substr(1, name.size() - 2));
    return internal::ParseIntField(inner.substr(comma + 1), scale) && scale > 0;
  }
  type = std::string(key);
  scale = 0;
  return true;
}

std::string JobType(const JobRecord& j) {
  if (j.batch_size > 0) return fmt::format("{} (batch size {})", j.model, j.batch_size);
  return j.model;
}

}  // namespace

Result<GavelThroughputs> ParseGavelThroughputs(std::string_view json, std::string_view source,
                                               const std::string& worker_type) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument(fmt::format("{}: not a JSON object", source));
  }
  auto worker = doc.find(worker_type);
  if (worker == doc.end() || !worker->is_object()) {
    return Status::InvalidArgument(
        fmt::format("{}: no throughputs for worker type '{}'", source, worker_type));
  }
  GavelThroughputs out;
  out.worker_type = worker_type;
  for (auto it = worker->begin(); it != worker->end(); ++it) {
    if (!it->is_object()) continue;
    auto isolated = it->find("null");
    if (isolated == it->end()) continue;
    std::string type;
    int64_t scale = 0;
    if (!ParseKey(it.key(), type, scale)) {
      return Status::InvalidArgument(
          fmt::format("{}: {}: cannot read job type key '{}'", source, worker_type, it.key()));
    }
    if (!isolated->is_number() || !(isolated->get<double>() > 0) ||
        !std::isfinite(isolated->get<double>())) {
      return Status::InvalidArgument(
          fmt::format("{}: {}: '{}': isolated throughput must be a positive number", source,
                      worker_type, it.key()));
    }
    out.steps_per_second[{type, scale}] = isolated->get<double>();
  }
  if (out.steps_per_second.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: worker type '{}' has no isolated (\"null\") throughputs", source, worker_type));
  }
  return out;
}

Result<GavelThroughputs> ReadGavelThroughputs(const std::string& path,
                                              const std::string& worker_type) {
  SM_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return ParseGavelThroughputs(contents, path, worker_type);
}

GavelDurationStats ApplyGavelThroughputs(JobTable& table, const GavelThroughputs& t) {
  GavelDurationStats stats;
  for (JobRecord& j : table.jobs) {
    const std::string type = JobType(j);
    const int64_t gpus = j.gpus.ceil_whole();
    const double* tput = nullptr;
    bool fallback = false;
    if (auto it = t.steps_per_second.find({type, gpus}); it != t.steps_per_second.end()) {
      tput = &it->second;
    } else if (auto one = t.steps_per_second.find({type, 1}); one != t.steps_per_second.end()) {
      tput = &one->second;
      fallback = true;
    } else if (auto any = t.steps_per_second.find({type, 0}); any != t.steps_per_second.end()) {
      tput = &any->second;
    }
    if (!tput) {
      ++stats.missing;
      continue;
    }
    const double seconds = static_cast<double>(j.iterations) / *tput;
    if (!(seconds >= 0 && seconds <= kMaxTraceSeconds)) {
      ++stats.out_of_range;
      continue;
    }
    j.duration = Duration::FromSecondsF(seconds);
    ++stats.derived;
    stats.fallback += fallback;
  }
  return stats;
}

}  // namespace schedmate::trace
