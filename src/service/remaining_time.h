#pragma once
// EstimateRemaining: how much longer a running job will run — the semantic loop for running
// jobs. The live start estimates, the API (`remaining` on a job) and the dashboard use it.
//
// Sources, the first that applies:
//  1. "tracker": the job's own log: the tracker's ETA at its last reading (steps left x step
//     time), minus the time since that reading; when the log gives progress but no step time
//     (lines without timestamps), the rate since the job started: (reading - start) x (1 - p) / p.
//     Not used when the log is stalled or the reading is older than `stale_after` (the log then
//     says nothing current).
//  2. "advisor": the advisor's predictive distribution conditioned on the time already run. It is
//     read as a log-normal through its p50 (Prediction::duration) with the spread of its p10–p90
//     interval (sigma = ln(p90 / p10) / 2.5631, i.e. 2 x Phi^-1(0.9); `default_sigma` when the
//     interval is missing or empty). The remaining time is the median of D - a given D > a, for a
//     the time already run: t - a with S(t) = S(a) / 2 (S the survival function). A job that has
//     outlived its p50 thus gets a longer, not a negative, remaining time.
//  3. "default": no prediction and no log: one hour after the start, as the advisor's flat prior.
// Every source is floored at `min_remaining` (a job still running is not done; the start
// estimator adds its own overrun margin) and capped at the
// time limit, where Slurm ends the job; when the cap decides, the source is "limit".
// Pure and deterministic.

#include <optional>
#include <string>

#include "core/sim_time.h"
#include "service/ports.h"

namespace schedmate::service {

struct RemainingTime {
  Duration remaining;  // from `now`
  std::string source;  // "tracker", "advisor", "default" or "limit"
};

struct RemainingTimeOptions {
  Duration stale_after = Duration::Minutes(10);
  Duration min_remaining = Duration::Seconds(1);
  double default_sigma = 1.0;  // log-normal spread when the prediction has no interval
};

RemainingTime EstimateRemaining(SimTime now, SimTime start, const std::optional<LogMetrics>& log,
                                const std::optional<Prediction>& prediction,
                                std::optional<Duration> time_limit,
                                const RemainingTimeOptions& options = {});

// The median of D - a given D > a for D log-normal with median `median_s` and spread `sigma`
// (seconds; a >= 0). Exposed for tests.
double ConditionalMedianRemaining(double median_s, double sigma, double elapsed_s);

}  // namespace schedmate::service
