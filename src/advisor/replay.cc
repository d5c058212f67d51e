#include "advisor/replay.h"

#include <algorithm>
#include <numeric>
#include <queue>

namespace schedmate::advisor {

std::vector<ReplayPrediction> ReplayTrace(
    const JobTable& table, HistoryEstimator& estimator,
    const std::function<void(const JobRecord&, SimTime finish)>& on_observe) {
  const std::vector<JobRecord>& jobs = table.jobs;
  std::vector<size_t> order(jobs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return jobs[a].submit < jobs[b].submit; });
  // Min-heap of (finish, trace index) of jobs submitted but not yet observed.
  using Item = std::pair<SimTime, size_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pending;
  std::vector<ReplayPrediction> out;
  out.reserve(jobs.size());
  for (size_t i : order) {
    const JobRecord& job = jobs[i];
    while (!pending.empty() && pending.top().first <= job.submit) {
      auto [finish, j] = pending.top();
      pending.pop();
      estimator.Observe(jobs[j], finish);
      if (on_observe) on_observe(jobs[j], finish);
    }
    // Predict from submit-time fields only: hide the outcome from the estimator.
    JobRecord query = job;
    query.duration = Duration::Zero();
    query.state = JobState::kUnknown;
    query.speed = query.gpu_util = query.gmem_util = query.gmem_mib = 0;
    DetailedEstimate d = estimator.EstimateDetailed(query, FingerprintOf(query));
    ReplayPrediction p;
    p.job_id = job.id;
    p.predicted_s = d.estimate.duration.seconds_f();
    p.low_s = d.estimate.low.seconds_f();
    p.high_s = d.estimate.high.seconds_f();
    p.confidence = d.estimate.confidence;
    p.p10_s = d.p10_s;
    p.p50_s = d.p50_s;
    p.p90_s = d.p90_s;
    p.tier = d.tier;
    p.trace_index = i;
    p.observed_before = estimator.observed();
    out.push_back(std::move(p));
    pending.emplace(job.submit + job.duration, i);
  }
  return out;
}

}  // namespace schedmate::advisor
