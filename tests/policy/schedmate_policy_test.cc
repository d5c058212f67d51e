// GittinsRanker and the schedmate policy's preemption / un-packing rules on hand-made job sets.
// Expected values are worked out in the comments from the rules in schedmate_policy.h and
// gittins_ranker.h. Ranks are read at the lower edge of the ratio's bin (32 bins per decade), so a
// job that has run x of its estimate ranks as if it had run edge(x) <= x; the comments give the
// edge where it matters.

#include "policy/schedmate_policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "policy/colocation_model.h"
#include "policy/gittins_ranker.h"
#include "policy/policy_registry.h"
#include "sim/job_builder.h"
#include "sim/simulator.h"
#include "testing/test_util.h"

namespace schedmate::policy {
namespace {

using testing::FixtureColocationModel;
using testing::JobBuilder;
using testing::OneVc;
using testing::ResNet18Job;
using testing::RunPolicy;
using testing::RunPolicyColocated;
using testing::Table;

int64_t Start(const sim::SimResult& r, int j) { return r.jobs[j].first_start.seconds(); }
int64_t End(const sim::SimResult& r, int j) { return r.jobs[j].finish.seconds(); }

// Lower edge of the bin holding ratio x.
double Edge(double x) {
  const int b = static_cast<int>((std::log10(x) + 4.0) * GittinsRanker::kBinsPerDecade);
  return std::pow(10.0, -4.0 + static_cast<double>(b) / GittinsRanker::kBinsPerDecade);
}

// ---- GittinsRanker ---------------------------------------------------------------------------

TEST(GittinsRankerTest, PriorTrustsTheEstimateThenDoubles) {
  // Only the prior (R = 1): a fresh job ranks at its estimate, one part-way through at what is
  // left (SRPT), one past its estimate at the time it has run (the doubling rule).
  GittinsRanker r;
  EXPECT_EQ(r.samples(), 0);
  EXPECT_DOUBLE_EQ(r.Rank(0), 1.0);
  EXPECT_NEAR(r.Rank(0.25), 1.0 - Edge(0.25), 1e-9);
  EXPECT_NEAR(r.Rank(5.0), Edge(5.0), 1e-9);
  EXPECT_GT(r.Rank(5.0), 4.5);
}

TEST(GittinsRankerTest, AWeightedPriorSetsTheRanksBeforeAnySample) {
  // Prior masses 1 at 0.5 and 1 at 2. Fresh: a quantum ending at 0.5 costs (0.5 + 1 x 0.5) / 1
  // = 1.0, one ending at 2 costs (0.5 + 2) / 2 = 1.25: rank 1.0. Past 0.5 only 2 is left: rank
  // 2 - edge(x). Invalid pseudo-samples are dropped; none valid: the default prior (R = 1).
  GittinsRanker r({{0.5, 1.0}, {2.0, 1.0}, {-1.0, 1.0}, {3.0, 0.0}});
  EXPECT_EQ(r.samples(), 0);
  EXPECT_NEAR(r.Rank(0), 1.0, 1e-12);
  EXPECT_NEAR(r.Rank(1.5), 2.0 - Edge(1.5), 1e-9);
  EXPECT_NEAR(r.Rank(3.0), Edge(3.0), 1e-9);  // outlived the prior: the doubling rule
  GittinsRanker none({{0.0, 1.0}, {std::numeric_limits<double>::quiet_NaN(), 1.0}});
  EXPECT_DOUBLE_EQ(none.Rank(0), 1.0);
  EXPECT_NEAR(none.Rank(0.25), 1.0 - Edge(0.25), 1e-9);
}

TEST(GittinsRankerTest, BimodalErrorsMakeSurvivorsLong) {
  // 48 jobs ran 0.1x their estimate, 48 ran 10x, plus the prior at 1x (97 masses; 96 samples is
  // a recompute point: 16, 32, ..., 96).
  // Fresh job: the best quantum ends at 0.1: (48 x 0.1 + 49 x 0.1) / 48 = 0.20208.
  // After 0.5 of its estimate (edge e = 0.487) only 1 and 10 remain: ending at 10 is best,
  // (1 x (1 - e) + 48 x (10 - e)) / 49 = 9.33; ending at 1 would cost (0.513 + 48 x 0.513) / 1.
  GittinsRanker r;
  for (int i = 0; i < 48; ++i) {
    r.Observe(0.1);
    r.Observe(10.0);
  }
  EXPECT_EQ(r.samples(), 96);
  EXPECT_NEAR(r.Rank(0), 9.7 / 48, 1e-9);
  const double e = Edge(0.5);
  const double survivor = ((1 - e) + 48 * (10 - e)) / 49;
  EXPECT_NEAR(r.Rank(0.5), survivor, 1e-9);
  // Past every sample: the doubling rule again.
  EXPECT_NEAR(r.Rank(20.0), Edge(20.0), 1e-9);
  // Ranks are recomputed only after max(16, n / 16) new samples: 15 more change nothing.
  for (int i = 0; i < 15; ++i) r.Observe(0.1);
  EXPECT_NEAR(r.Rank(0.5), survivor, 1e-9);
  r.Observe(0.1);  // the 16th: recomputed with 64 x 0.1
  EXPECT_NEAR(r.Rank(0), (64 * 0.1 + 49 * 0.1) / 64, 1e-9);
}

TEST(GittinsRankerTest, IgnoresInvalidRatios) {
  GittinsRanker r;
  r.Observe(0);
  r.Observe(-3);
  r.Observe(std::numeric_limits<double>::quiet_NaN());
  r.Observe(std::numeric_limits<double>::infinity());
  EXPECT_EQ(r.samples(), 0);
  EXPECT_DOUBLE_EQ(r.Rank(0), 1.0);
}

TEST(GittinsRankerTest, RanksDoNotDependOnWhenTheyAreAsked) {
  GittinsRanker asked, silent;
  for (int i = 0; i < 40; ++i) {
    const double ratio = 0.2 + 0.1 * (i % 7);
    asked.Observe(ratio);
    silent.Observe(ratio);
    (void)asked.Rank(0.3);
  }
  for (double x : {0.0, 0.3, 0.9, 2.0}) EXPECT_DOUBLE_EQ(asked.Rank(x), silent.Rank(x));
}

TEST(GittinsRankerTest, RankIsConstantOnTheIntervalItReports) {
  // Callers cache a rank for [lo, hi): every ratio there must rank the same, and hi must be
  // where it may change (the next bin edge); beyond the histogram the interval is empty.
  GittinsRanker r;
  for (int i = 0; i < 32; ++i) r.Observe(0.05 * (1 + i % 11) + 0.3 * (i % 3));
  for (double x : {0.0, 0.013, 0.4, 0.97, 3.3}) {
    double lo = -1, hi = -1;
    const double rank = r.Rank(x, &lo, &hi);
    ASSERT_LE(lo, x);
    ASSERT_LT(x, hi);
    for (double y : {lo, lo + 0.25 * (hi - lo), lo + 0.999 * (hi - lo)}) {
      EXPECT_DOUBLE_EQ(r.Rank(y), rank) << x << " " << y;
    }
    EXPECT_NEAR(hi / std::max(lo, 1e-4), std::pow(10.0, 1.0 / 32), 1e-9) << x;  // one bin
  }
  double lo = 0, hi = 0;
  EXPECT_DOUBLE_EQ(r.Rank(2e4, &lo, &hi), 2e4);
  EXPECT_EQ(lo, hi);
}

// ---- SchedmatePolicy -------------------------------------------------------------------------

TEST(SchedmatePolicyTest, PreemptsAJobThatOutlivedItsEstimate) {
  // One node. A (8 GPUs, est 100, runs 10,000) starts at 0. B (8 GPUs, est 50) at 500.
  // A has run 5x its estimate: rank = 100 x edge(5) = 487 s; rank - cost = 447 > B's 50.
  // Saved: B's wait min(487, W = 487) = 487; lost: A waits 50 + 40. Preempt: B 500..550, A
  // restarts at 550 with 9,500 + 40 s left: ends 10,090.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(10000).Estimate(100),
                      JobBuilder().Gpus(8).SubmitAt(500).Runtime(50).Estimate(50)});
  auto r = RunPolicy("schedmate", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 500);
  EXPECT_EQ(End(*r, 1), 550);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_EQ(End(*r, 0), 10090);
}

TEST(SchedmatePolicyTest, PreemptionCostComesFromThePolicyConfig) {
  // The first case again with a 1,000 s checkpoint cost (as `simulate --preemption-cost 1000`
  // sets it): A's rank 487 - 1,000 < B's 50, so B waits for A instead.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(10000).Estimate(100),
                      JobBuilder().Gpus(8).SubmitAt(500).Runtime(50).Estimate(50)});
  policy::PolicyConfig config;
  config.preemption_cost = config.preemption_cost_large = Duration::Seconds(1000);
  sim::SimOptions options;
  options.preemption_cost.small = options.preemption_cost.large = Duration::Seconds(1000);
  auto r = RunPolicy("schedmate", t, OneVc(1), config, options);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  EXPECT_EQ(Start(*r, 1), 10000);
}

TEST(SchedmatePolicyTest, KeepsAJobThatIsAboutToEnd) {
  // A (est 1000, runs 1000) at 0; B (est 100) at 900. A's rank: 1000 x (1 - edge(0.9)) = 134 s;
  // 134 - 40 = 94 < 100: preempting would delay A by 140 s to save B ~100 s. B waits: 1000..1100.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(1000).Estimate(1000),
                      JobBuilder().Gpus(8).SubmitAt(900).Runtime(100).Estimate(100)});
  auto r = RunPolicy("schedmate", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  EXPECT_EQ(Start(*r, 1), 1000);
}

TEST(SchedmatePolicyTest, DoesNotPreemptWhenTheWaitIsShorterThanTheDelay) {
  // Two nodes. A (est 100, runs 10,000) on node 0 and C (est 600, runs 600) on node 1 from 0.
  // B (8 GPUs, est 90) at 500. C's rank 600 x (1 - edge(0.833)) = 116.5, minus 40 < 90: not a
  // victim. A's rank 487 - 40 > 90 is, but B would get C's node at W = 116.5 s anyway:
  // saved min(487, 116.5) < lost 90 + 40. B waits for C: 600..690; A is never preempted.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(10000).Estimate(100),
                      JobBuilder().Gpus(8).SubmitAt(0).Runtime(600).Estimate(600),
                      JobBuilder().Gpus(8).SubmitAt(500).Runtime(90).Estimate(90)});
  auto r = RunPolicy("schedmate", t, OneVc(2));
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  EXPECT_EQ(Start(*r, 2), 600);
  EXPECT_EQ(End(*r, 2), 690);
}

TEST(SchedmatePolicyTest, NarrowJobsNeverPreemptMultiNodeJobs) {
  // A (16 GPUs on both nodes, est 100, runs 10,000) outlives its estimate, but a job spread over
  // two nodes is never a victim of a job of one node: B (8 GPUs, est 50, at 500) waits until
  // 10,000.
  JobTable t = Table({JobBuilder().Gpus(16).SubmitAt(0).Runtime(10000).Estimate(100),
                      JobBuilder().Gpus(8).SubmitAt(500).Runtime(50).Estimate(50)});
  auto r = RunPolicy("schedmate", t, OneVc(2));
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  EXPECT_EQ(Start(*r, 1), 10000);
}

// Four nodes: A (16 GPUs, runs 10,000) and C (16 GPUs, runs 20,000) fill them from 0; B (16
// GPUs, est 100) arrives at 500.
JobTable TwoWideJobsAndAShortWideOne() {
  return Table({JobBuilder().Gpus(16).SubmitAt(0).Runtime(10000).Estimate(10000),
                JobBuilder().Gpus(16).SubmitAt(0).Runtime(20000).Estimate(20000),
                JobBuilder().Gpus(16).SubmitAt(500).Runtime(100).Estimate(100)});
}

sim::SimOptions ExactEta() {
  sim::SimOptions so;
  so.eta.enabled = true;
  so.eta.sigma = 0;
  so.eta.after_fraction = 0.01;
  return so;
}

TEST(SchedmatePolicyTest, PreemptsAMultiNodeJobWhoseEtaIsKnownForAWideJob) {
  // With exact ETAs at 500: A has 9,500 s left, C 19,500 (minus the 60 s cost, both outrank B's
  // 100). B needs two idle nodes: A's (nodes 0-1) and C's (2-3) each add a loss of 100 + 60;
  // tie, lowest node: A's. Saved: B's wait min(9,500, W = 9,500) > lost 160. B runs 500..600;
  // A restarts at 600 with 9,500 + 60 s left: ends 10,160. C is untouched.
  auto r = RunPolicy("schedmate", TwoWideJobsAndAShortWideOne(), OneVc(4), {}, ExactEta());
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_EQ(r->jobs[1].preemptions, 0);
  EXPECT_EQ(Start(*r, 2), 500);
  EXPECT_EQ(End(*r, 2), 600);
  EXPECT_EQ(End(*r, 0), 10160);
  EXPECT_EQ(End(*r, 1), 20000);
}

TEST(SchedmatePolicyTest, PreemptsAMultiNodeJobOnceWithoutAnEta) {
  // Four nodes, no ETA. A (16 GPUs, est 100, runs 10,000) on nodes 0-1, X (16 GPUs, est and
  // runs 100,000) on nodes 2-3 from 0. B (16 GPUs, est 50) at 500: A's rank 100 x edge(5) =
  // 487 s, X's 99,500; each node adds a loss of 50 + 60, tie: A's nodes. Saved min(487, W =
  // 487) > 110: A is preempted, B runs 500..550, A restarts at 550 with 9,560 s left (ends
  // 10,110). D (16 GPUs, est 50) at 1,000: A outranks D again, but it was preempted once; X
  // (rank 99,000) is the victim: saved min(99,000, W = A's rank) > 110. D runs 1,000..1,050, X
  // restarts at 1,050 with 99,000 + 60 s left.
  JobTable t = Table({JobBuilder().Gpus(16).SubmitAt(0).Runtime(10000).Estimate(100),
                      JobBuilder().Gpus(16).SubmitAt(0).Runtime(100000).Estimate(100000),
                      JobBuilder().Gpus(16).SubmitAt(500).Runtime(50).Estimate(50),
                      JobBuilder().Gpus(16).SubmitAt(1000).Runtime(50).Estimate(50)});
  auto r = RunPolicy("schedmate", t, OneVc(4));
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_EQ(r->jobs[1].preemptions, 1);
  EXPECT_EQ(Start(*r, 2), 500);
  EXPECT_EQ(Start(*r, 3), 1000);
  EXPECT_EQ(End(*r, 3), 1050);
  EXPECT_EQ(End(*r, 0), 10110);
  EXPECT_EQ(End(*r, 1), 100110);
}

TEST(SchedmatePolicyTest, WideVictimsCanBeSwitchedOff) {
  // The case above with SchedmateOptions::wide_victims off: B waits for A (10,000..10,100).
  SchedmateOptions o;
  o.wide_victims = false;
  auto r = sim::Simulate(
      TwoWideJobsAndAShortWideOne(), OneVc(4),
      [&]() -> Result<std::unique_ptr<SchedulingPolicy>> {
        return std::unique_ptr<SchedulingPolicy>(
            std::make_unique<SchedmatePolicy>(PolicyConfig{}, o));
      },
      ExactEta());
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  EXPECT_EQ(Start(*r, 2), 10000);
}

TEST(SchedmatePolicyTest, KeepsAMultiNodeJobHoldingMoreThanHalfThePartition) {
  // Three nodes: A (16 GPUs, 2 of the 3 nodes, runs 10,000) with an exact ETA, and D (8 GPUs,
  // runs 20,000) on the third. B (16 GPUs, est 100) at 500 would save 9,500 s by taking A's
  // nodes, but A holds more than half of the nodes: once preempted it would need most of the
  // partition idle at once. Not a victim: B waits for A (10,000..10,100).
  JobTable t = Table({JobBuilder().Gpus(16).SubmitAt(0).Runtime(10000).Estimate(10000),
                      JobBuilder().Gpus(8).SubmitAt(0).Runtime(20000).Estimate(20000),
                      JobBuilder().Gpus(16).SubmitAt(500).Runtime(100).Estimate(100)});
  auto r = RunPolicy("schedmate", t, OneVc(3), {}, ExactEta());
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  EXPECT_EQ(Start(*r, 2), 10000);
}

TEST(SchedmatePolicyTest, PreemptionCanBeSwitchedOff) {
  PolicyConfig pc;
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(10000).Estimate(100),
                      JobBuilder().Gpus(8).SubmitAt(500).Runtime(50).Estimate(50)});
  SchedmateOptions o;
  o.preempt = false;
  auto r = sim::Simulate(t, OneVc(1), [&]() -> Result<std::unique_ptr<SchedulingPolicy>> {
    return std::unique_ptr<SchedulingPolicy>(std::make_unique<SchedmatePolicy>(pc, o));
  });
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].preemptions, 0);
  EXPECT_EQ(Start(*r, 1), 10000);
}

TEST(SchedmatePolicyTest, LearntErrorsChangeThePreemptionDecision) {
  // As PreemptsAJobThatOutlivedItsEstimate, after a history that says estimates are 10x short.
  // One node. 16 one-GPU jobs (est 100, run 1,000) at 0 run 0..1000 and 1000..2000; the 16th
  // finish makes the ranker recompute with masses 16 at R = 10 and the prior at 1.
  // J16 (8 GPUs, est 100, runs 5,000) starts at 2000; J17 (8 GPUs, est 100, runs 100) at 2500.
  // J16 has run 5x its estimate; only the mass at 10 survives: rank 100 x (10 - edge(5)) =
  // 513 s. J17 is fresh: quantum to 1 costs (1 + 16 x 1) / 1 = 17, to 10 (1 + 16 x 10) / 17 =
  // 9.47: rank 947 s. J16 outranks nothing: no preemption, J17 waits until 7000.
  JobTable t;
  for (int i = 0; i < 16; ++i) {
    t.jobs.push_back(JobBuilder()
                         .Id("s" + std::to_string(i))
                         .Gpus(1)
                         .SubmitAt(0)
                         .Runtime(1000)
                         .Estimate(100)
                         .Build());
  }
  t.jobs.push_back(
      JobBuilder().Id("long").Gpus(8).SubmitAt(2000).Runtime(5000).Estimate(100).Build());
  t.jobs.push_back(
      JobBuilder().Id("short").Gpus(8).SubmitAt(2500).Runtime(100).Estimate(100).Build());
  auto r = RunPolicy("schedmate", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(End(*r, 15), 2000);
  EXPECT_EQ(Start(*r, 16), 2000);
  EXPECT_EQ(r->jobs[16].preemptions, 0);
  EXPECT_EQ(Start(*r, 17), 7000);
}

TEST(SchedmatePolicyTest, KeepsAPackedJobWhenMovingGainsLessThanItCosts) {
  // As UnpacksWhenContentionEnds (policy_test.cc) but A is short: ResNet18 x2 runs at 0.9 / 0.9;
  // A (8 GPUs, est 300, runs 300) packs onto X1 at 10. At 100 X2 ends and nobody waits, but A's
  // rank is 300 x (1 - edge(0.3)) = 211.7 s and running alone would save 211.7 x (1/0.9 - 1) =
  // 23.5 s < the 40 s move: A stays packed (no preemption), ends at 10 + 300 / 0.9 = 343.
  JobTable t = Table({ResNet18Job().Gpus(8).SubmitAt(0).Runtime(1000).Estimate(1000),
                      ResNet18Job().Gpus(8).SubmitAt(0).Runtime(100).Estimate(100),
                      ResNet18Job().Gpus(8).SubmitAt(10).Runtime(300).Estimate(300)});
  auto r = RunPolicyColocated("schedmate", t, OneVc(2));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 2), 10);
  EXPECT_EQ(r->jobs[2].preemptions, 0);
  EXPECT_EQ(End(*r, 2), 343);
}

// Answers by job id: a median of 100 s with a narrow (90..110 s) or a wide (5..2,000 s) p10..p90.
class ShapeEstimator : public DurationEstimator {
 public:
  std::string_view Name() const override { return "shapes"; }
  DurationEstimate Estimate(const JobRecord& job, SimTime) override {
    DurationEstimate e;
    e.duration = e.median = Duration::Seconds(100);
    const bool wide = job.id == "wide";
    e.low = Duration::Seconds(wide ? 5 : 90);
    e.high = Duration::Seconds(wide ? 2000 : 110);
    return e;
  }
  void Observe(const JobRecord&, SimTime) override {}
};

TEST(SchedmatePolicyTest, RanksByThePredictedDistributionNotOnlyItsMedian) {
  // One node, held by "c" until t=10. "wide" then "narrow" (same median, 100 s) wait. Narrow
  // spreads (level 0) rank at about their median; the widest level's prior (two-piece
  // log-normal, ln(p90/p50) = 1.5 each side: deciles 0.15 .. 6.9 x the median) ranks a fresh
  // job at 1.34 x its median (best quantum ends at its 4th decile). So narrow starts at 10 and
  // wide at 110. With use_distribution off both rank 100 and queue order decides: wide first.
  JobTable t = Table({JobBuilder().Id("c").Gpus(8).SubmitAt(0).Runtime(10),
                      JobBuilder().Id("wide").Gpus(8).SubmitAt(1).Runtime(100),
                      JobBuilder().Id("narrow").Gpus(8).SubmitAt(1).Runtime(100)});
  for (const bool use : {true, false}) {
    SCOPED_TRACE(use);
    ShapeEstimator est;
    PolicyConfig pc;
    pc.estimator = &est;
    SchedmateOptions opt;
    opt.use_distribution = use;
    auto r = sim::Simulate(t, OneVc(1),
                           [&]() -> Result<std::unique_ptr<SchedulingPolicy>> {
                             return std::make_unique<SchedmatePolicy>(pc, opt);
                           },
                           {});
    ASSERT_OK(r);
    EXPECT_EQ(Start(*r, use ? 2 : 1), 10);
    EXPECT_EQ(Start(*r, use ? 1 : 2), 110);
  }
}

TEST(SchedmatePolicyTest, UsesTheTrackerEtaForRunningJobs) {
  // As PreemptsAJobThatOutlivedItsEstimate, but A runs 570 s: at 500 its Gittins rank is 487 s
  // and B (50 s) preempts it (B 500..550; A ends 550 + 70 + 40 = 660). With an exact tracker ETA
  // (sigma 0, known after 1% of the run) A ranks at its 70 s left: 70 - 40 < 50, no victim;
  // B waits for A: 570..620.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(570).Estimate(100),
                      JobBuilder().Gpus(8).SubmitAt(500).Runtime(50).Estimate(50)});
  auto blind = RunPolicy("schedmate", t, OneVc(1));
  ASSERT_OK(blind);
  EXPECT_EQ(blind->jobs[0].preemptions, 1);
  EXPECT_EQ(End(*blind, 1), 550);
  EXPECT_EQ(End(*blind, 0), 660);
  sim::SimOptions so;
  so.eta.enabled = true;
  so.eta.sigma = 0;
  so.eta.after_fraction = 0.01;
  auto eta = RunPolicy("schedmate", t, OneVc(1), {}, so);
  ASSERT_OK(eta);
  EXPECT_EQ(eta->jobs[0].preemptions, 0);
  EXPECT_EQ(End(*eta, 0), 570);
  EXPECT_EQ(End(*eta, 1), 620);
}

TEST(SchedmatePolicyTest, DeterministicOnAShuffledWorkload) {
  // Many small jobs with wrong estimates on two nodes: the same input gives the same outcome.
  JobTable t;
  for (int i = 0; i < 200; ++i) {
    JobRecord j = JobBuilder()
                      .Gpus(1 + (i * 7) % 8)
                      .SubmitAt(i * 13)
                      .Runtime(30 + (i * 37) % 900)
                      .Estimate(30 + (i * 53) % 600)
                      .Build();
    j.id = "j" + std::to_string(i);
    t.jobs.push_back(std::move(j));
  }
  auto a = RunPolicy("schedmate", t, OneVc(2));
  auto b = RunPolicy("schedmate", t, OneVc(2));
  ASSERT_OK(a);
  ASSERT_OK(b);
  int64_t preemptions = 0;
  for (size_t j = 0; j < t.jobs.size(); ++j) {
    EXPECT_EQ(a->jobs[j].finish, b->jobs[j].finish);
    EXPECT_TRUE(a->jobs[j].finished());
    preemptions += a->jobs[j].preemptions;
  }
  EXPECT_GT(preemptions, 0);  // the workload does exercise preemption
}

}  // namespace
}  // namespace schedmate::policy
