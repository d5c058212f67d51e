#include "trace/estimates.h"

#include <fmt/format.h>

#include <cmath>
#include <unordered_set>
#include <vector>

#include "core/file_util.h"
#include "core/strings.h"
#include "trace/csv.h"
#include "trace/reader_internal.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {

namespace {

// Reads the next non-blank data row into `f`: false at the end of the file; kInvalidArgument
// "source:line: expected N fields, got M" for a row that is not as wide as the header.
Result<bool> NextRow(CsvCursor& cursor, const internal::HeaderMap& h, std::string_view source,
                     std::vector<std::string_view>& f) {
  while (cursor.Next(f)) {
    if (CsvCursor::IsBlank(f)) continue;
    if (f.size() != h.size()) {
      return Status::InvalidArgument(fmt::format("{}:{}: expected {} fields, got {}", source,
                                                 cursor.line(), h.size(), f.size()));
    }
    return true;
  }
  return false;
}

}  // namespace

Result<EstimateMap> ParseEstimates(std::string_view contents, std::string_view source) {
  CsvCursor cursor(contents, ',');
  std::vector<std::string_view> f;
  if (!cursor.NextNonBlank(f))
    return Status::InvalidArgument(fmt::format("{}:1: empty estimates file", source));
  internal::HeaderMap h(f);
  const int id_col = h.Find({"job_id"});
  const int val_col = h.Find({"priority", "estimate", "duration", "predicted_duration_s"});
  if (id_col < 0 || val_col < 0) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: header must have job_id and priority columns", source, cursor.line()));
  }
  EstimateMap map;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool more, NextRow(cursor, h, source, f));
    if (!more) break;
    const int64_t line = cursor.line();
    std::string_view id = Trim(f[static_cast<size_t>(id_col)]);
    std::string_view text = f[static_cast<size_t>(val_col)];
    double v = 0;
    if (id.empty())
      return Status::InvalidArgument(fmt::format("{}:{}: empty job_id", source, line));
    if (!internal::ParseRealField(text, v)) {
      return Status::InvalidArgument(fmt::format("{}:{}: '{}' is not a finite number", source, line,
                                                 Trim(text).substr(0, 40)));
    }
    // Negative estimates are meaningful (Lucid's rule replaces them), so the range is symmetric.
    if (std::fabs(v) > kMaxTraceSeconds) {
      return Status::InvalidArgument(fmt::format(
          "{}:{}: {}", source, line,
          internal::OutOfRange(h.name(val_col), v, -kMaxTraceSeconds, kMaxTraceSeconds)));
    }
    map.insert_or_assign(std::string(id), v);
  }
  return map;
}

Result<QuantileMap> ParseEstimateQuantiles(std::string_view contents, std::string_view source) {
  CsvCursor cursor(contents, ',');
  std::vector<std::string_view> f;
  QuantileMap map;
  if (!cursor.NextNonBlank(f)) return map;
  internal::HeaderMap h(f);
  const int id_col = h.Find({"job_id"});
  const int cols[3] = {h.Find({"p10_s"}), h.Find({"p50_s"}), h.Find({"p90_s"})};
  if (id_col < 0 || cols[0] < 0 || cols[1] < 0 || cols[2] < 0) return map;
  while (true) {
    SM_ASSIGN_OR_RETURN(bool more, NextRow(cursor, h, source, f));
    if (!more) break;
    const int64_t line = cursor.line();
    double q[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      std::string_view text = f[static_cast<size_t>(cols[i])];
      if (!internal::ParseRealField(text, q[i]) || q[i] < 0 || q[i] > kMaxTraceSeconds) {
        return Status::InvalidArgument(fmt::format("{}:{}: {} '{}' is not a duration in s", source,
                                                   line, h.name(cols[i]),
                                                   Trim(text).substr(0, 40)));
      }
    }
    if (q[0] > q[1] || q[1] > q[2]) {
      return Status::InvalidArgument(fmt::format(
          "{}:{}: quantiles out of order: p10 {} p50 {} p90 {}", source, line, q[0], q[1], q[2]));
    }
    map.insert_or_assign(
        std::string(Trim(f[static_cast<size_t>(id_col)])),
        JobRecord::EstimateQuantiles{Duration::FromSecondsF(q[0]), Duration::FromSecondsF(q[1]),
                                     Duration::FromSecondsF(q[2])});
  }
  return map;
}

Result<QuantileMap> ReadEstimateQuantiles(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return ParseEstimateQuantiles(contents, path);
}

int64_t ApplyEstimateQuantiles(JobTable& table, const QuantileMap& map) {
  int64_t n = 0;
  for (auto& job : table.jobs) {
    auto it = map.find(job.id);
    if (it == map.end()) continue;
    job.estimate_quantiles = it->second;
    ++n;
  }
  return n;
}

Result<EstimateMap> ReadEstimates(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return ParseEstimates(contents, path);
}

ApplyEstimatesStats ApplyEstimates(JobTable& table, const EstimateMap& map,
                                   const ApplyEstimatesOptions& options) {
  ApplyEstimatesStats stats;
  std::unordered_set<std::string_view> used;
  for (auto& job : table.jobs) {
    auto it = map.find(job.id);
    if (it == map.end()) {
      ++stats.missing;
      if (options.clear_missing) job.estimate.reset();
      continue;
    }
    used.insert(it->first);
    double v = it->second;
    if (v < 0) {
      ++stats.negative;
      if (options.negatives == NegativeEstimates::kDrop) {
        job.estimate.reset();
        continue;
      }
      if (options.negatives == NegativeEstimates::kReplace) v = options.negative_replacement;
    }
    job.estimate = Duration::FromSecondsF(v);
    ++stats.matched;
  }
  stats.unused = static_cast<int64_t>(map.size() - used.size());
  return stats;
}

}  // namespace schedmate::trace
