#include "service/remaining_time.h"

#include <algorithm>
#include <cmath>

namespace schedmate::service {
namespace {

// 2 x Phi^-1(0.9): the width of a normal's p10–p90 interval in standard deviations.
constexpr double kP10P90Width = 2.5631031310892007;

// Survival of the standard normal at z.
double NormalSurvival(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// z with NormalSurvival(z) == s, for s in (0, 1): bisection (NormalSurvival is decreasing).
double NormalSurvivalInverse(double s) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    double mid = 0.5 * (lo + hi);
    if (NormalSurvival(mid) > s) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double ConditionalMedianRemaining(double median_s, double sigma, double elapsed_s) {
  median_s = std::max(median_s, 1.0);
  sigma = std::max(sigma, 1e-3);
  const double mu = std::log(median_s);
  const double a = std::max(elapsed_s, 1e-3);
  const double s_a = NormalSurvival((std::log(a) - mu) / sigma);
  // Far in the tail the survival underflows: the job has outlived the whole distribution, and
  // the log-normal's conditional median tends to the time already run (remaining -> 0); the
  // caller's floor applies.
  if (!(s_a > 1e-300)) return 0;
  const double t = std::exp(mu + sigma * NormalSurvivalInverse(s_a / 2));
  return std::max(0.0, t - a);
}

RemainingTime EstimateRemaining(SimTime now, SimTime start, const std::optional<LogMetrics>& log,
                                const std::optional<Prediction>& prediction,
                                std::optional<Duration> time_limit,
                                const RemainingTimeOptions& options) {
  const Duration elapsed = std::max(Duration(), now - start);
  RemainingTime r;
  const bool log_current = log && !log->stalled && now - log->at <= options.stale_after;
  const Duration since_reading = log ? std::max(Duration(), now - log->at) : Duration();
  if (log_current && log->eta) {
    r.remaining = *log->eta - since_reading;
    r.source = "tracker";
  } else if (log_current && log->progress && *log->progress > 0 && *log->progress < 1 &&
             log->at > start) {
    // Progress without a step time (lines without timestamps): the rate so far, start-up
    // included, holds for the rest.
    const double p = *log->progress;
    r.remaining =
        Duration::FromSecondsF((log->at - start).seconds_f() * (1 - p) / p) - since_reading;
    r.source = "tracker";
  } else if (prediction && prediction->duration > Duration()) {
    const double p10 = prediction->low.seconds_f(), p90 = prediction->high.seconds_f();
    const double sigma =
        p10 > 0 && p90 > p10 ? std::log(p90 / p10) / kP10P90Width : options.default_sigma;
    // At most ten years: a huge spread must not overflow the microsecond clock.
    const double rem =
        ConditionalMedianRemaining(prediction->duration.seconds_f(), sigma, elapsed.seconds_f());
    r.remaining = Duration::FromSecondsF(std::min(rem, 10.0 * 365 * 86400));
    r.source = "advisor";
  } else {
    r.remaining = Duration::Hours(1) - elapsed;
    r.source = "default";
  }
  r.remaining = std::max(r.remaining, options.min_remaining);
  if (time_limit) {
    const Duration left = std::max(Duration(), *time_limit - elapsed);
    if (r.remaining > left) {
      r.remaining = left;
      r.source = "limit";
    }
  }
  return r;
}

}  // namespace schedmate::service
