#include "trace/trace_stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_set>

#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {
size_t GpuBucket(GpuAmount g) {
  const int64_t m = g.milli();
  if (m <= 0) return 0;
  if (m < GpuAmount::kUnit) return 1;
  const int64_t whole = g.ceil_whole();
  if (whole == 1) return 2;
  if (whole == 2) return 3;
  if (whole <= 4) return 4;
  if (whole <= 8) return 5;
  return 6;
}
Duration NearestRank(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return Duration::Zero();
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return Duration::Micros(sorted[rank - 1]);
}
}  // namespace

TraceStats ComputeTraceStats(const JobTable& table) {
  TraceStats s;
  s.jobs = static_cast<int64_t>(table.jobs.size());
  s.rows_read = table.rows_read;
  s.rows_skipped = table.rows_skipped;
  s.durations_known = table.format == TraceFormat::kAuto || FormatHasDurations(table.format) ||
                      std::any_of(table.jobs.begin(), table.jobs.end(),
                                  [](const JobRecord& j) { return j.duration > Duration::Zero(); });
  static constexpr std::array<const char*, 7> kBuckets = {"0", "<1", "1", "2", "3-4", "5-8", ">8"};
  std::array<int64_t, 7> buckets{};
  std::array<int64_t, 8> states{};
  std::unordered_set<std::string_view> users, vcs;
  std::vector<int64_t> durations;
  durations.reserve(table.jobs.size());
  std::vector<int64_t> submits;
  submits.reserve(table.jobs.size());
  long double total_us = 0;
  long double gpu_us = 0;
  for (const JobRecord& j : table.jobs) {
    if (!j.user.empty()) users.insert(j.user);
    if (!j.vc.empty()) vcs.insert(j.vc);
    ++buckets[GpuBucket(j.gpus)];
    ++states[static_cast<size_t>(j.state)];
    durations.push_back(j.duration.micros());
    submits.push_back(j.submit.micros());
    total_us += j.duration.micros();
    gpu_us += static_cast<long double>(j.duration.micros()) * j.gpus.milli() / GpuAmount::kUnit;
  }
  s.users = static_cast<int64_t>(users.size());
  s.vcs = static_cast<int64_t>(vcs.size());
  for (size_t i = 0; i < kBuckets.size(); ++i)
    s.gpu_histogram.emplace_back(kBuckets[i], buckets[i]);
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i] > 0) {
      s.states.emplace_back(std::string(JobStateName(static_cast<JobState>(i))), states[i]);
    }
  }
  if (!durations.empty()) {
    std::sort(durations.begin(), durations.end());
    s.p50 = NearestRank(durations, 0.50);
    s.p90 = NearestRank(durations, 0.90);
    s.p99 = NearestRank(durations, 0.99);
    s.max = Duration::Micros(durations.back());
    s.mean = Duration::Micros(static_cast<int64_t>(total_us / durations.size()));
    std::sort(submits.begin(), submits.end());
    s.first_submit = SimTime::FromMicros(submits.front());
    s.last_submit = SimTime::FromMicros(submits.back());
    if (submits.size() >= 2) {
      s.mean_interarrival_s = static_cast<double>(submits.back() - submits.front()) / 1e6 /
                              static_cast<double>(submits.size() - 1);
    }
  }
  s.gpu_hours = static_cast<double>(gpu_us / 3.6e9L);
  return s;
}

}  // namespace schedmate::trace
