#pragma once
// Online replay of a trace through a HistoryEstimator: what the estimator would have predicted
// for each job at its submission, using only jobs that had finished by then.
//
// Jobs are visited in submit order (ties: trace order). Before job J is predicted, every earlier
// job P with P.submit + P.duration <= J.submit is passed to Observe(), in (finish, trace order)
// order; nothing else about later or still-running jobs is visible. J's own duration and state
// are never read before its prediction is made.

#include <functional>
#include <string>
#include <vector>

#include "advisor/history_estimator.h"
#include "core/job.h"
#include "core/result.h"

namespace schedmate::advisor {

struct ReplayPrediction {
  std::string job_id;
  double predicted_s = 0;
  double low_s = 0, high_s = 0;            // the estimate's interval (the advisor: p10, p90)
  double p10_s = 0, p50_s = 0, p90_s = 0;  // calibrated quantiles
  double confidence = 0;
  std::string tier;
  size_t trace_index = 0;      // position in the JobTable
  size_t observed_before = 0;  // finished jobs known when this prediction was made
};

// Predictions in submit order. `on_observe` (may be empty) is called with each job as it is
// observed, e.g. to seed a history store.
std::vector<ReplayPrediction> ReplayTrace(
    const JobTable& table, HistoryEstimator& estimator,
    const std::function<void(const JobRecord&, SimTime finish)>& on_observe = {});

}  // namespace schedmate::advisor
