#pragma once
// Per-job duration estimates supplied alongside a trace (Lucid's QSSF baseline inputs).
//
// Files: "job_id,priority" CSV (Venus_Sept_lgb.csv from LightGBM, Venus_Sept_ebm_weekly_updated.csv
// from a weekly retrained GA2M/EBM). RAW SEMANTICS: the value is a PER-GPU duration estimate in
// seconds as produced by the model; Lucid's QSSF priority is value * gpu_num (the simulator does
// that multiplication, not these functions). EBM files contain NEGATIVE values (regression
// output below zero); Lucid replaces every negative value by 1000 before use. ReadEstimates keeps
// values verbatim; the replacement is an option of ApplyEstimates.

#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/job.h"
#include "core/result.h"

namespace schedmate::trace {

// job id (verbatim text of the job_id column) -> raw estimate value.
using EstimateMap = std::unordered_map<std::string, double>;

// Reads a job_id,priority CSV (header names: job_id and priority|estimate|duration|
// predicted_duration_s, the last being `history replay --out`'s). A job id that appears twice:
// the LAST value wins (a re-estimate). Errors name "path:line: reason"; non-finite or
// non-numeric values are errors.
Result<EstimateMap> ReadEstimates(const std::string& path);
Result<EstimateMap> ParseEstimates(std::string_view contents, std::string_view source);

// The p10_s, p50_s and p90_s columns of a `history replay` CSV (job_id,predicted_duration_s,
// p10_s,p50_s,p90_s), in seconds; an empty map when the header lacks any of them. Errors as
// ParseEstimates; a negative quantile or p10 > p50 > p90 out of order is an error. Last wins.
using QuantileMap = std::unordered_map<std::string, JobRecord::EstimateQuantiles>;
Result<QuantileMap> ReadEstimateQuantiles(const std::string& path);
Result<QuantileMap> ParseEstimateQuantiles(std::string_view contents, std::string_view source);
// Sets JobRecord::estimate_quantiles for every job whose id is in `map`; returns how many.
int64_t ApplyEstimateQuantiles(JobTable& table, const QuantileMap& map);

enum class NegativeEstimates : uint8_t {
  kReplace,  // Lucid's rule: a negative value becomes `negative_replacement` (default 1000)
  kKeep,     // store the raw negative value (a negative Duration)
  kDrop,     // leave JobRecord::estimate empty for those jobs
};

struct ApplyEstimatesOptions {
  NegativeEstimates negatives = NegativeEstimates::kReplace;
  double negative_replacement = 1000;  // seconds, used with kReplace
  bool clear_missing = true;           // jobs without an entry get estimate = nullopt
};

struct ApplyEstimatesStats {
  int64_t matched = 0;   // jobs that received an estimate
  int64_t missing = 0;   // jobs with no entry in the map
  int64_t negative = 0;  // entries < 0 (replaced, kept or dropped per options)
  int64_t unused = 0;    // map entries no job of the table has
};

// Sets JobRecord::estimate = Duration::FromSecondsF(value) for every job whose id is in `map`
// (the raw per-GPU value; see the file comment). Deterministic; O(jobs + entries).
ApplyEstimatesStats ApplyEstimates(JobTable& table, const EstimateMap& map,
                                   const ApplyEstimatesOptions& options = {});

}  // namespace schedmate::trace
