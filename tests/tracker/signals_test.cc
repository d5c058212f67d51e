#include "tracker/signals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace schedmate::tracker {
namespace {

ProgressRecord Rec(int64_t step, double loss, double step_time, double ts, int run = 0) {
  ProgressRecord r;
  r.v.step = step;
  r.v.total_steps = 100;
  r.v.loss = loss;
  r.v.step_time_s = step_time;
  r.timestamp_s = ts;
  r.run = run;
  return r;
}

TEST(SignalAnalyzerTest, SlowdownAgainstTheJobsOwnBaseline) {
  SignalAnalyzer a;
  for (int i = 1; i <= 20; ++i) a.Add(Rec(i, 1.0, 0.5, i));
  ProgressRecord last;
  for (int i = 21; i <= 30; ++i) a.Add(last = Rec(i, 1.0, 0.7, i));
  Signals s = a.Compute(last, -1);
  EXPECT_TRUE(s.slowdown);
  EXPECT_NEAR(*s.baseline_step_time_s, 0.5, 1e-9);
  EXPECT_LT(*s.throughput_trend, -0.2);
  SignalOptions lenient;
  lenient.slowdown_share = 0.5;
  SignalAnalyzer b(lenient);
  for (int i = 1; i <= 20; ++i) b.Add(Rec(i, 1.0, 0.5, i));
  for (int i = 21; i <= 30; ++i) b.Add(Rec(i, 1.0, 0.7, i));
  EXPECT_FALSE(b.Compute(last, -1).slowdown);
}

TEST(SignalAnalyzerTest, StallAfterKUsualIntervals) {
  SignalAnalyzer a;
  ProgressRecord last;
  for (int i = 1; i <= 10; ++i) a.Add(last = Rec(i, 1.0, 0.5, 100.0 * i));
  EXPECT_FALSE(a.Compute(last, 1000 + 300).stalled);
  Signals s = a.Compute(last, 1000 + 600);
  EXPECT_TRUE(s.stalled);
  EXPECT_NEAR(*s.usual_interval_s, 100, 1e-9);
  EXPECT_FALSE(a.Compute(last, -1).stalled) << "no clock, no stall judgement";
}

TEST(SignalAnalyzerTest, LossDivergence) {
  SignalAnalyzer a;
  ProgressRecord last;
  for (int i = 1; i <= 10; ++i) a.Add(last = Rec(i, 1.0 - i * 0.05, 0.5, i));
  EXPECT_FALSE(a.Compute(last, -1).loss_exploding);
  ProgressRecord boom = Rec(11, 9.0, 0.5, 11);
  a.Add(boom);
  EXPECT_TRUE(a.Compute(boom, -1).loss_exploding);
  ProgressRecord nan = Rec(12, std::numeric_limits<double>::quiet_NaN(), 0.5, 12);
  a.Add(nan);
  EXPECT_TRUE(a.Compute(nan, -1).loss_nan);
}

TEST(SignalAnalyzerTest, ProgressAndDerivedEta) {
  SignalAnalyzer a;
  ProgressRecord r = Rec(25, 1.0, 2.0, 1);
  r.v.epoch = 2;
  r.v.total_epochs = 4;
  a.Add(r);
  Signals s = a.Compute(r, -1);
  // 1-based epochs: one full epoch done plus a quarter of the second, of four.
  EXPECT_NEAR(*s.progress, 1.25 / 4, 1e-9);
  ASSERT_TRUE(s.eta_derived);
  EXPECT_NEAR(*s.eta_s, (75 + 2 * 100) * 2.0, 1e-9);
}

TEST(SignalAnalyzerTest, RestartsResetTheBaseline) {
  SignalAnalyzer a;
  for (int i = 1; i <= 20; ++i) a.Add(Rec(i, 1.0, 0.5, i));
  ProgressRecord last;
  for (int i = 1; i <= 10; ++i) a.Add(last = Rec(i, 1.0, 0.9, 100 + i, /*run=*/1));
  Signals s = a.Compute(last, -1);
  EXPECT_EQ(s.restarts, 1);
  EXPECT_FALSE(s.slowdown) << "the new run is its own baseline";
}

}  // namespace
}  // namespace schedmate::tracker
