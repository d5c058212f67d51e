// libFuzzer target for the trace readers (trace/trace_reader.h) and the files that come with a
// trace: arbitrary bytes as a job trace (format auto-detected, by content and by file extension,
// or forced to each format), as Lucid's vc_config.csv, as a per-job estimates CSV, or as a Gavel
// throughput JSON. The readers work on bytes in memory (ParseTrace and its siblings; the Read*
// functions only add ReadFileToString). A read must succeed or fail with a Status naming the
// file; every job it returns must respect what trace_reader.h promises (non-negative GPUs and
// durations, rows counted); the results then go through the code that consumes them (estimates,
// Gavel durations, trace stats).
//
// Input: the first byte picks what the rest is. Lower case = stop at the first malformed row,
// upper case = skip and count malformed rows (any other byte maps onto one of these):
//   a auto-detect (source "fuzz.csv")   b lucid   c gpw   d chronus   e gavel   f pollux
//   g openb   h swf   i auto-detect as "fuzz.swf"   j auto-detect as "fuzz.trace"
//   k vc_config.csv   l estimates CSV (applied to a small table)   m Gavel throughputs JSON
//   n a trace read with max_jobs = 3 (auto-detect)   o sacct (-P text or --json)

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.h"
#include "trace/cluster_config.h"
#include "trace/estimates.h"
#include "trace/gavel_throughputs.h"
#include "trace/trace_reader.h"
#include "trace/trace_stats.h"

namespace {

using namespace schedmate;
using namespace schedmate::trace;

constexpr int kModes = 15;

JobTable SmallTable() {
  JobTable t;
  for (const char* id : {"1", "2", "job-3"}) {
    JobRecord j;
    j.id = id;
    j.model = "ResNet-50";
    j.batch_size = 64;
    j.gpus = GpuAmount::Whole(2);
    j.iterations = 1000;
    t.jobs.push_back(j);
  }
  return t;
}

void CheckTable(const JobTable& t, const TraceReadOptions& options) {
  SM_CHECK(t.rows_skipped >= 0 && t.rows_skipped <= t.rows_read)
      << t.rows_skipped << " of " << t.rows_read;
  SM_CHECK(t.skip_reasons.size() <= options.max_skip_reasons);
  if (options.max_jobs > 0) SM_CHECK(static_cast<int64_t>(t.jobs.size()) <= options.max_jobs);
  for (const JobRecord& j : t.jobs) {
    SM_CHECK(j.gpus.milli() >= 0) << j.id;
    SM_CHECK(j.duration.micros() >= 0) << j.id;
    SM_CHECK(j.submit.micros() >= 0) << j.id;
    SM_CHECK(j.cpus >= 0 && j.nodes >= 0 && j.batch_size >= 0) << j.id;
    if (j.time_limit) SM_CHECK(j.time_limit->micros() >= 0) << j.id;
  }
  (void)ComputeTraceStats(t);
}

void FuzzTrace(std::string_view text, TraceFormat format, std::string_view source, bool skip,
               int64_t max_jobs) {
  TraceReadOptions options;
  options.format = format;
  options.skip_malformed = skip;
  options.max_jobs = max_jobs;
  options.max_skip_reasons = 3;
  auto table = ParseTrace(text, source, options);
  if (!table.ok()) {
    SM_CHECK(table.status().code() == StatusCode::kInvalidArgument) << table.status().ToString();
    return;
  }
  CheckTable(*table, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const int mode = static_cast<uint8_t>((selector | 0x20) - 'a') % kModes;
  const bool skip = (selector & 0x20) == 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (mode) {
    case 0:
      FuzzTrace(text, TraceFormat::kAuto, "fuzz.csv", skip, 0);
      break;
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
      FuzzTrace(text, static_cast<TraceFormat>(mode), "fuzz.txt", skip, 0);
      break;
    case 8:
      FuzzTrace(text, TraceFormat::kAuto, "fuzz.swf", skip, 0);
      break;
    case 9:
      FuzzTrace(text, TraceFormat::kAuto, "fuzz.trace", skip, 0);
      break;
    case 10:
      if (auto spec = ParseVcConfig(text, "vc_config.csv", skip ? 1 : 8); spec.ok()) {
        for (const VcSpec& vc : spec->vcs) SM_CHECK(vc.nodes >= 0 && !vc.name.empty());
        SM_CHECK(spec->total_gpus() >= 0);
      }
      break;
    case 11:
      if (auto map = ParseEstimates(text, "estimates.csv"); map.ok()) {
        JobTable t = SmallTable();
        ApplyEstimatesOptions options;
        options.negatives = skip ? NegativeEstimates::kKeep : NegativeEstimates::kReplace;
        const ApplyEstimatesStats stats = ApplyEstimates(t, *map, options);
        // kKeep and kReplace give every job with an entry an estimate.
        SM_CHECK(stats.matched + stats.missing == static_cast<int64_t>(t.jobs.size()));
        // A kept negative value stays negative; any other estimate is a non-negative duration.
        for (const JobRecord& j : t.jobs) {
          if (j.estimate && !skip) SM_CHECK(j.estimate->micros() >= 0) << j.id;
        }
        SM_CHECK(stats.unused >= 0);
      }
      break;
    case 12:
      if (auto tput = ParseGavelThroughputs(text, "throughputs.json"); tput.ok()) {
        JobTable t = SmallTable();
        const GavelDurationStats stats = ApplyGavelThroughputs(t, *tput);
        SM_CHECK(stats.derived + stats.missing + stats.out_of_range ==
                 static_cast<int64_t>(t.jobs.size()));
        for (const JobRecord& j : t.jobs) SM_CHECK(j.duration.micros() >= 0);
      }
      break;
    case 13:
      FuzzTrace(text, TraceFormat::kAuto, "fuzz.csv", skip, 3);
      break;
    case 14:
      FuzzTrace(text, TraceFormat::kSacct, "fuzz.txt", skip, 0);
      break;
  }
  return 0;
}
