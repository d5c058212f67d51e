#include "service/remaining_time.h"

#include <gtest/gtest.h>

#include <cmath>

namespace schedmate::service {
namespace {

const SimTime kStart = SimTime::FromSeconds(1000);

Prediction Predicted(int64_t p10, int64_t p50, int64_t p90) {
  Prediction p;
  p.low = Duration::Seconds(p10);
  p.duration = Duration::Seconds(p50);
  p.high = Duration::Seconds(p90);
  return p;
}

LogMetrics Log(SimTime at, int64_t eta_s) {
  LogMetrics m;
  m.at = at;
  m.eta = Duration::Seconds(eta_s);
  return m;
}

TEST(ConditionalMedianRemaining, AtTheStartItIsTheMedian) {
  EXPECT_NEAR(ConditionalMedianRemaining(600, 0.8, 0), 600, 1);
}

TEST(ConditionalMedianRemaining, GrowsPastTheMedianAndShrinksWithANarrowSpread) {
  // A job that has run its median: half of the mass beyond is still ahead.
  const double wide = ConditionalMedianRemaining(600, 1.0, 600);
  const double narrow = ConditionalMedianRemaining(600, 0.1, 600);
  EXPECT_GT(wide, 0);
  EXPECT_GT(wide, narrow);
  // Exact for the log-normal: S(t) = S(a)/2 = 1/4 at a = median, so t = median * e^(sigma z75).
  EXPECT_NEAR(narrow, 600 * std::exp(0.1 * 0.6744897501960817) - 600, 0.5);
  // Far in the tail: finite and non-negative.
  const double tail = ConditionalMedianRemaining(60, 0.2, 1e7);
  EXPECT_GE(tail, 0);
  EXPECT_TRUE(std::isfinite(tail));
}

TEST(EstimateRemaining, TheLogsEtaWinsWhileItIsFresh) {
  const SimTime now = kStart + Duration::Seconds(300);
  RemainingTime r = EstimateRemaining(now, kStart, Log(now - Duration::Seconds(20), 500),
                                      Predicted(100, 400, 2000), std::nullopt);
  EXPECT_EQ(r.source, "tracker");
  EXPECT_EQ(r.remaining, Duration::Seconds(480));  // the ETA as read, minus the time since
}

TEST(EstimateRemaining, ProgressWithoutAStepTimeExtrapolatesTheRateSinceTheStart) {
  const SimTime now = kStart + Duration::Seconds(100);
  LogMetrics m;
  m.at = kStart + Duration::Seconds(90);
  m.progress = 0.25;  // 90 s for a quarter: 270 s to go at the reading
  RemainingTime r = EstimateRemaining(now, kStart, m, Predicted(100, 400, 2000), std::nullopt);
  EXPECT_EQ(r.source, "tracker");
  EXPECT_EQ(r.remaining, Duration::Seconds(260));
}

TEST(EstimateRemaining, AStaleOrStalledLogFallsBackToTheAdvisor) {
  const SimTime now = kStart + Duration::Seconds(300);
  LogMetrics stalled = Log(now, 500);
  stalled.stalled = true;
  EXPECT_EQ(EstimateRemaining(now, kStart, stalled, Predicted(100, 400, 2000), std::nullopt).source,
            "advisor");
  LogMetrics old = Log(now - Duration::Minutes(30), 500);
  RemainingTime r = EstimateRemaining(now, kStart, old, Predicted(100, 400, 2000), std::nullopt);
  EXPECT_EQ(r.source, "advisor");
  // Conditioned on 300 s already run, so more than the unconditioned 400 - 300.
  EXPECT_GT(r.remaining, Duration::Seconds(100));
}

TEST(EstimateRemaining, AJobPastItsPredictionStillHasTimeLeft) {
  const SimTime now = kStart + Duration::Seconds(5000);
  RemainingTime r =
      EstimateRemaining(now, kStart, std::nullopt, Predicted(100, 400, 2000), std::nullopt);
  EXPECT_EQ(r.source, "advisor");
  EXPECT_GE(r.remaining, Duration::Minutes(1));
}

TEST(EstimateRemaining, TheTimeLimitCaps) {
  const SimTime now = kStart + Duration::Seconds(500);
  RemainingTime r =
      EstimateRemaining(now, kStart, Log(now, 5000), std::nullopt, Duration::Seconds(800));
  EXPECT_EQ(r.source, "limit");
  EXPECT_EQ(r.remaining, Duration::Seconds(300));
}

TEST(EstimateRemaining, NothingKnownIsOneHourFromTheStart) {
  const SimTime now = kStart + Duration::Seconds(600);
  RemainingTime r = EstimateRemaining(now, kStart, std::nullopt, std::nullopt, std::nullopt);
  EXPECT_EQ(r.source, "default");
  EXPECT_EQ(r.remaining, Duration::Seconds(3000));
  RemainingTime late = EstimateRemaining(kStart + Duration::Hours(2), kStart, std::nullopt,
                                         std::nullopt, std::nullopt);
  EXPECT_EQ(late.remaining, Duration::Seconds(1));  // the floor: it still runs
}

}  // namespace
}  // namespace schedmate::service
