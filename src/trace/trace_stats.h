#pragma once
// Summary statistics of a JobTable, for `schedmate trace stats` and for checking generated traces.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/job.h"

namespace schedmate::trace {

struct TraceStats {
  int64_t jobs = 0;
  int64_t rows_read = 0;
  int64_t rows_skipped = 0;
  SimTime first_submit;  // earliest submit (0 when there are no jobs)
  SimTime last_submit;   // latest submit
  int64_t users = 0;     // distinct non-empty user names
  int64_t vcs = 0;       // distinct non-empty VC names
  // Jobs per GPU-count bucket, in this fixed order: "0", "<1" (fractional share), "1", "2",
  // "3-4", "5-8", ">8". A fractional count above 1 goes to the bucket of its ceiling.
  std::vector<std::pair<std::string, int64_t>> gpu_histogram;
  // False for formats without run times (Pollux, Gavel) unless some job has a duration > 0
  // (e.g. Gavel after ApplyGavelThroughputs).
  bool durations_known = true;
  // Duration percentiles by nearest rank over all jobs; zero when there are no jobs.
  Duration p50, p90, p99, mean, max;
  double gpu_hours = 0;  // sum of gpus * duration
  // Jobs per final state, in JobState order, states with zero jobs left out.
  std::vector<std::pair<std::string, int64_t>> states;
  // Mean seconds between consecutive submits in submit order (0 with fewer than 2 jobs).
  double mean_interarrival_s = 0;
};

TraceStats ComputeTraceStats(const JobTable& table);

}  // namespace schedmate::trace
