#pragma once
// Durations for Gavel traces. A Gavel .trace row has total_steps but no run time: Gavel generated
// total_steps = run_time * throughput, where throughput is the job type's isolated ("null")
// steps/second on a reference worker type (v100) from a throughput JSON file shipped with Gavel
// (e.g. scheduler/simulation_throughputs.json; not bundled here). Given such a file, the run time
// is recovered as total_steps / throughput.
//
// Accepted JSON shapes (both appear in Gavel's history):
//   {"v100": {"ResNet-50 (batch size 64)": {"null": 2.03, ...}, ...}, ...}           by type
//   {"v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 2.03, ...}, ...}, ...}    by (type,
//   GPUs)
// ASSUMPTION: the file given is the one (or close to the one) the trace was generated with; the
// public msr traces do not record which version that was, so derived durations are approximate.

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "core/job.h"
#include "core/result.h"

namespace schedmate::trace {

struct GavelThroughputs {
  std::string worker_type;
  // (job type, scale factor) -> steps per second. Scale factor 0 = the file keys by type only.
  std::map<std::pair<std::string, int64_t>, double> steps_per_second;
};

// kInvalidArgument naming `source` for malformed JSON, a missing worker type, or non-positive
// throughputs. Entries without a "null" (isolated) value are ignored.
Result<GavelThroughputs> ParseGavelThroughputs(std::string_view json, std::string_view source,
                                               const std::string& worker_type = "v100");
Result<GavelThroughputs> ReadGavelThroughputs(const std::string& path,
                                              const std::string& worker_type = "v100");

struct GavelDurationStats {
  int64_t derived = 0;   // jobs whose duration was set
  int64_t fallback = 0;  // of those, keyed (type, N GPUs) missing: used (type, 1) instead
  int64_t missing = 0;   // jobs whose type is not in the file (duration left unchanged)
  // Jobs whose derived duration would exceed kMaxTraceSeconds (duration left unchanged).
  int64_t out_of_range = 0;
};

// Sets duration = iterations / steps_per_second(job type, GPUs) for every job of a Gavel table
// (job type rebuilt from model and batch_size as the reader split it: "<model> (batch size N)").
// Lookup order: (type, GPUs), then (type, 1), then (type, any) for by-type files.
GavelDurationStats ApplyGavelThroughputs(JobTable& table, const GavelThroughputs& throughputs);

}  // namespace schedmate::trace
