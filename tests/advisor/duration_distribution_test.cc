#include "advisor/duration_distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "advisor/fast_exp.h"
#include "advisor/history_estimator.h"
#include "advisor/replay.h"
#include "testing/job_builder.h"

namespace schedmate::advisor {
namespace {

// Box-Muller on a fixed-seed engine: the same numbers on every platform.
double Normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

TEST(DurationDistributionTest, QuantilesAreOrderedAndInvertTheCdf) {
  DurationDistribution d({{30, 1}, {60, 0.5}, {3600, 0.8}, {7200, 0.2}}, 0.6);
  double prev = 0;
  for (double q : {0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95}) {
    SCOPED_TRACE(q);
    const double x = d.Quantile(q);
    EXPECT_GT(x, prev);
    EXPECT_NEAR(d.Cdf(x), q, 1e-6);
    prev = x;
  }
}

// The definition Quantile must reproduce bit for bit: a 32-step bisection of the mixture's CDF,
// evaluated at every midpoint, over [first - 10 scales, last + 10 scales] in log2 seconds.
double ReferenceQuantile(std::vector<std::pair<double, double>> s, double bandwidth, double q) {
  double total = 0;  // in input order
  for (const auto& p : s) total += p.second;
  std::stable_sort(s.begin(), s.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<double> x, w;
  for (const auto& p : s) {
    x.push_back(std::log2(std::max(p.first, 1.0)));
    w.push_back(p.second / total);
  }
  const double scale = bandwidth * 0.5513288954217921;
  q = std::clamp(q, 1e-4, 1 - 1e-4);
  double lo = x.front() - 10 * scale, hi = x.back() + 10 * scale;
  for (int it = 0; it < 32; ++it) {
    const double mid = 0.5 * (lo + hi);
    double f = 0;
    for (size_t i = 0; i < x.size(); ++i) f += w[i] / (1.0 + std::exp(-(mid - x[i]) / scale));
    (f < q ? lo : hi) = mid;
  }
  return std::exp2(0.5 * (lo + hi));
}

TEST(DurationDistributionTest, QuantileIsBitIdenticalToThePlainBisection) {
  // Random mixtures like the estimator's (1..64 samples over six decades, repeated durations,
  // recency weights, narrow to wide kernels, bimodal groups) and the levels a calibrator gives.
  std::mt19937_64 rng(12);
  int differing = 0, cases = 0;
  for (int c = 0; c < 3000; ++c) {
    const size_t n = 1 + rng() % 64;
    std::vector<std::pair<double, double>> s;
    double w = 1;
    const double centre = 2 + static_cast<double>(rng() % 160) / 10;  // log2 s
    for (size_t i = 0; i < n; ++i) {
      double l = centre + Normal(rng) * (c % 3 == 0 ? 0.2 : 2.0);
      if (c % 5 == 0 && rng() % 2 == 0) l += 8;  // a second mode far above
      if (i > 0 && rng() % 4 == 0) l = std::log2(std::max(s[rng() % i].first, 1.0));  // repeats
      s.emplace_back(std::round(std::exp2(l)), w);
      w *= c % 2 == 0 ? 0.7 : 1.0;
    }
    const double bandwidths[] = {0.05, 0.3, 0.6 * (1 + 2.0 / static_cast<double>(n)), 2.5};
    const double bw = bandwidths[c % 4];
    DurationDistribution d(s, bw);
    for (double q : {0.1, 0.5, 0.9, 1e-5, 0.999999, static_cast<double>(rng() % 10000) / 10000}) {
      ++cases;
      if (d.Quantile(q) != ReferenceQuantile(s, bw, q)) ++differing;
    }
  }
  EXPECT_EQ(differing, 0) << "of " << cases;
}

TEST(DurationDistributionTest, SortedConstructorGivesTheSameDistribution) {
  // Many equal durations (ties keep input order, each with its own weight).
  std::mt19937_64 rng(3);
  for (int c = 0; c < 300; ++c) {
    const size_t n = 1 + rng() % 40;
    std::vector<std::pair<double, double>> s;
    double w = 1;
    for (size_t i = 0; i < n; ++i) {
      s.emplace_back(static_cast<double>(1 + rng() % 6) * 100, w);
      w *= 0.7;
    }
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return s[a].first < s[b].first; });
    double total = 0;
    for (const auto& p : s) total += p.second;
    std::vector<double> log2, weight;
    for (size_t i : order) {
      log2.push_back(std::log2(s[i].first));
      weight.push_back(s[i].second / total);
    }
    const DurationDistribution a(s, 0.6);
    const DurationDistribution b(log2, weight, 0.6);
    SCOPED_TRACE(c);
    EXPECT_EQ(a.WindowMode(0.6), b.WindowMode(0.6));
    for (double q : {0.1, 0.5, 0.9}) EXPECT_EQ(a.Quantile(q), b.Quantile(q));
    for (double x : {50.0, 250.0, 450.0}) EXPECT_EQ(a.Cdf(x), b.Cdf(x));
  }
}

TEST(DurationDistributionTest, CdfBinIsTheBinOfTheExactCdf) {
  // Points anywhere and points exactly at quantiles on bin edges (where the approximation alone
  // cannot tell the bin and the exact CDF decides).
  std::mt19937_64 rng(9);
  int cases = 0, differing = 0;
  for (int c = 0; c < 400; ++c) {
    const size_t n = 1 + rng() % 48;
    std::vector<std::pair<double, double>> s;
    double w = 1;
    for (size_t i = 0; i < n; ++i, w *= 0.7) {
      s.emplace_back(std::round(std::exp2(2 + static_cast<double>(rng() % 160) / 10)), w);
    }
    const DurationDistribution d(s, c % 2 == 0 ? 0.3 : 0.9);
    for (int k = 0; k < 20; ++k) {
      const double x = k % 2 == 0 ? std::exp2(static_cast<double>(rng() % 200) / 10)
                                  : d.Quantile(static_cast<double>(1 + rng() % 999) / 1000);
      ++cases;
      differing += d.CdfBin(x, QuantileCalibrator::kBins) != QuantileCalibrator::BinOf(d.Cdf(x));
    }
  }
  EXPECT_EQ(differing, 0) << "of " << cases;
}

TEST(ExpBlockTest, RelativeErrorFarBelowTheBudget) {
  // A dense sweep of [-700, 700] plus the points around each k ln 2 boundary of the reduction.
  double worst = 0;
  auto check = [&](double a, double b, double c, double d) {
    Double4 v{a, b, c, d};
    ExpBlock(&v);
    const double in[4] = {a, b, c, d};
    for (int i = 0; i < 4; ++i) {
      worst = std::max(worst, std::abs(v[i] / std::exp(in[i]) - 1));
    }
  };
  for (int i = 0; i < 500000; ++i) {
    const double y = -700 + 1400.0 * i / 500000;
    check(y, y + 7e-4, -y / 3, std::nextafter(y, 0.0));
  }
  for (int k = -1009; k <= 1009; ++k) {
    const double y = k * 0.6931471805599453;
    check(y, std::nextafter(y, -1e9), std::nextafter(y, 1e9), y + 0.5 * 0.6931471805599453);
  }
  EXPECT_LT(worst, 2e-15);
  EXPECT_LT(worst * 100, kExpBlockRelError * 1.0001);
  // Beyond the clamp: the values at +-700 (finite, positive), never inf, NaN or 0.
  Double4 v{-1e300, 1e300, -800, 800};
  ExpBlock(&v);
  EXPECT_EQ(v[0], v[2]);
  EXPECT_EQ(v[1], v[3]);
  EXPECT_GT(v[0], 0);
  EXPECT_TRUE(std::isfinite(v[1]));
  EXPECT_NEAR(v[1] / std::exp(700.0), 1, 1e-14);
}

TEST(DurationDistributionTest, WindowModePicksTheDenserMode) {
  // Six early exits around 30 s and four full runs around 1 h: the median (between them, in
  // log space) would be within x2 of nothing; the window mode is one of the modes.
  std::vector<std::pair<double, double>> s;
  for (double v : {25, 30, 35, 28, 40, 31}) s.emplace_back(v, 1.0);
  for (double v : {3500, 3600, 3700, 3900}) s.emplace_back(v, 1.0);
  DurationDistribution d(s, 0.6);
  const double mode = d.WindowMode(/*over_penalty=*/0);
  EXPECT_GE(mode, 24.9);
  EXPECT_LE(mode, 40);
  EXPECT_NEAR(d.WindowMass(mode), 0.6, 1e-9);
  // Weighting the long runs more moves it there.
  for (size_t i = 6; i < s.size(); ++i) s[i].second = 3;
  EXPECT_GE(DurationDistribution(s, 0.6).WindowMode(0), 3499);
  // A penalty on evidence far below the point keeps it low.
  EXPECT_LE(DurationDistribution(s, 0.6).WindowMode(/*over_penalty=*/2), 40);
}

TEST(QuantileCalibratorTest, IdentityWhenUniformAndWidensWhenOverconfident) {
  QuantileCalibrator uniform(50);
  EXPECT_DOUBLE_EQ(uniform.Level(0.1), 0.1);  // too few samples: identity
  for (int i = 0; i < 10000; ++i) uniform.Record((i + 0.5) / 10000);
  EXPECT_NEAR(uniform.Level(0.1), 0.1, 0.002);
  EXPECT_NEAR(uniform.Level(0.9), 0.9, 0.002);
  // PITs piled at the ends (the distribution was too narrow): p10/p90 move outwards.
  QuantileCalibrator narrow(50);
  for (int i = 0; i < 10000; ++i) narrow.Record(i % 2 == 0 ? 0.01 * (i % 7) : 1 - 0.01 * (i % 7));
  EXPECT_LT(narrow.Level(0.1), 0.1);
  EXPECT_GT(narrow.Level(0.9), 0.9);
}

// Level's definition: the first bin, scanning from 0, whose cumulative count reaches q x n.
double ReferenceLevel(const std::vector<int64_t>& hist, int64_t n, double q) {
  q = std::clamp(q, 1e-4, 1 - 1e-4);
  const double target = q * static_cast<double>(n);
  double cum = 0;
  const int bins = static_cast<int>(hist.size());
  for (int b = 0; b < bins; ++b) {
    const double c = static_cast<double>(hist[b]);
    if (cum + c >= target && c > 0)
      return std::clamp((b + (target - cum) / c) / bins, 1e-4, 1 - 1e-4);
    cum += c;
  }
  return 1 - 1e-4;
}

TEST(QuantileCalibratorTest, LevelIsBitIdenticalToTheScanOverBins) {
  std::mt19937_64 rng(3);
  QuantileCalibrator cal(1);
  std::vector<int64_t> hist(QuantileCalibrator::kBins, 0);
  int differing = 0;
  for (int i = 1; i <= 5000; ++i) {
    // Clustered PITs (empty bins between busy ones), including both ends.
    const double u =
        i % 50 == 0 ? (i % 100 == 0 ? 1.0 : 0.0) : std::clamp(0.5 + 0.15 * Normal(rng), 0.0, 1.0);
    cal.Record(u);
    ++hist[std::min(QuantileCalibrator::kBins - 1,
                    static_cast<int>(u * QuantileCalibrator::kBins))];
    for (double q : {1e-5, 0.1, 0.5, 0.9, 0.99999, static_cast<double>(rng() % 1000) / 1000}) {
      if (cal.Level(q) != ReferenceLevel(hist, i, q)) ++differing;
    }
  }
  EXPECT_EQ(differing, 0);
  EXPECT_EQ(cal.samples(), 5000);
}

// Jobs of one user whose run times are log-normal (log2 sd 1.5 around 1 h): after a warm-up the
// online p10..p90 interval must hold about 80% of the actual run times, and p10 < p50 < p90.
TEST(HistoryEstimatorDistributionTest, CoverageOnASyntheticDistribution) {
  std::mt19937_64 rng(12);
  JobTable t;
  for (int i = 0; i < 4000; ++i) {
    const double d = std::exp2(std::log2(3600.0) + 1.5 * Normal(rng));
    t.jobs.push_back(testing::JobBuilder()
                         .Id(std::to_string(i))
                         .User(i % 2 == 0 ? "alice" : "bob")
                         .Gpus(1)
                         .SubmitAt(i * 10000)
                         .Runtime(std::max<int64_t>(1, static_cast<int64_t>(d)))
                         .Build());
  }
  HistoryEstimator e;
  auto preds = ReplayTrace(t, e);
  ASSERT_EQ(preds.size(), t.jobs.size());
  int covered = 0, n = 0;
  for (const auto& p : preds) {
    ASSERT_LE(p.p10_s, p.p50_s);
    ASSERT_LE(p.p50_s, p.p90_s);
    if (p.observed_before < 500) continue;
    const double a = t.jobs[p.trace_index].duration.seconds_f();
    covered += p.p10_s <= a && a <= p.p90_s;
    ++n;
  }
  ASSERT_GT(n, 3000);
  const double share = static_cast<double>(covered) / n;
  EXPECT_GT(share, 0.75);
  EXPECT_LT(share, 0.85);
  EXPECT_GT(e.calibration_samples(), 3000);
}

// Without explanations the estimator reuses a group's distribution while the group is unchanged
// (and starts its quantile searches where they ended last time): the numbers must be exactly
// those of the explaining estimator, in every tier, including work-scaled evidence.
TEST(HistoryEstimatorDistributionTest, ExplainOffGivesTheSameNumbers) {
  std::mt19937_64 rng(5);
  JobTable t;
  static const char* kModels[] = {"resnet", "bert", "gpt"};
  for (int i = 0; i < 3000; ++i) {
    testing::JobBuilder b;
    b.Id(std::to_string(i))
        .User("u" + std::to_string(rng() % 6))
        .Gpus(static_cast<int>(1 << (rng() % 3)))
        .SubmitAt(i * 60)
        .Runtime(static_cast<int64_t>(10 + rng() % 20000));
    JobRecord j = b.Build();
    j.model = kModels[rng() % 3];
    if (rng() % 4 == 0) j.iterations = static_cast<int64_t>(100 + rng() % 1000);  // work scaling
    if (rng() % 3 == 0) j.batch_size = 32;
    t.jobs.push_back(j);
  }
  HistoryEstimator explaining;
  HistoryEstimator quiet({.explain = false});
  auto pa = ReplayTrace(t, explaining);
  auto pb = ReplayTrace(t, quiet);
  ASSERT_EQ(pa.size(), pb.size());
  std::map<std::string, int> tiers;
  int differing = 0;
  for (size_t i = 0; i < pa.size(); ++i) {
    ++tiers[pa[i].tier];
    differing += pa[i].predicted_s != pb[i].predicted_s || pa[i].p10_s != pb[i].p10_s ||
                 pa[i].p50_s != pb[i].p50_s || pa[i].p90_s != pb[i].p90_s ||
                 pa[i].confidence != pb[i].confidence || pa[i].tier != pb[i].tier;
  }
  EXPECT_EQ(differing, 0);
  EXPECT_GE(tiers.size(), 3u);  // several tiers exercised
}

TEST(HistoryEstimatorDistributionTest, DeterministicReplay) {
  std::mt19937_64 rng(3);
  JobTable t;
  for (int i = 0; i < 500; ++i) {
    t.jobs.push_back(testing::JobBuilder()
                         .Id(std::to_string(i))
                         .User("u" + std::to_string(rng() % 5))
                         .Gpus(static_cast<int>(1 + rng() % 2))
                         .SubmitAt(i * 100)
                         .Runtime(static_cast<int64_t>(10 + rng() % 5000))
                         .Build());
  }
  HistoryEstimator a, b;
  auto pa = ReplayTrace(t, a);
  auto pb = ReplayTrace(t, b);
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_EQ(pa[i].predicted_s, pb[i].predicted_s);
    EXPECT_EQ(pa[i].p10_s, pb[i].p10_s);
    EXPECT_EQ(pa[i].p90_s, pb[i].p90_s);
    EXPECT_EQ(pa[i].tier, pb[i].tier);
  }
}

// A cold start with a time limit uses the limit times the learnt ratio actual / limit.
TEST(HistoryEstimatorDistributionTest, ColdStartLearnsTheLimitRatio) {
  HistoryEstimator e;
  for (int i = 0; i < 20; ++i) {
    JobRecord j = testing::JobBuilder()
                      .Id("a" + std::to_string(i))
                      .User("alice")
                      .Gpus(8)
                      .Limit(10000)
                      .Runtime(2500)
                      .Build();
    e.Observe(j, SimTime::FromSeconds(i));
  }
  JobRecord q = testing::JobBuilder().Id("q").User("newcomer").Gpus(1).Limit(4000).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "cold-start");
  EXPECT_NEAR(d.estimate.duration.seconds_f(), 1000, 50);  // 4000 s x 0.25
  EXPECT_NE(d.estimate.explanation.find("time limit"), std::string::npos);
}

}  // namespace
}  // namespace schedmate::advisor
