#pragma once
// DurationEstimator: predicts how long a job will run from what is known at its submission.
// The simulator's QSSF and schedmate policies consult it; the advisor implements it.
//
// Online contract: Estimate() for a job may use only jobs passed to Observe() earlier. The
// simulator calls Observe() when a job finishes, in finish order (ties: job order in the trace).

#include <string>

#include "core/job.h"
#include "core/sim_time.h"

namespace schedmate {

struct DurationEstimate {
  Duration duration;        // point estimate of the run time
  Duration low, high;       // an interval around it (the advisor: its p10 and p90)
  double confidence = 0;    // 0..1
  std::string explanation;  // which evidence it leaned on, for people
  Duration median;          // median of the predictive distribution (0 when not given)
};

class DurationEstimator {
 public:
  virtual ~DurationEstimator() = default;
  virtual std::string_view Name() const = 0;
  // Estimate for `job` at time `now` (its submission, or later).
  virtual DurationEstimate Estimate(const JobRecord& job, SimTime now) = 0;
  // The same for a caller that reads only the distribution (median, low, high): an estimator
  // whose point estimate costs extra may skip it, `duration` then being the median. The same
  // median, low and high as Estimate() either way.
  virtual DurationEstimate EstimateDistribution(const JobRecord& job, SimTime now) {
    return Estimate(job, now);
  }
  // `job` finished at `finish` after running `job.duration`.
  virtual void Observe(const JobRecord& job, SimTime finish) = 0;
};

}  // namespace schedmate
