// Policy tests: placement rules, registries, the co-location model, and every policy on small
// hand-made traces whose outcomes are worked out by hand in the comments.

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "policy/colocation_model.h"
#include "policy/estimator_registry.h"
#include "policy/fifo_policy.h"
#include "policy/free_map.h"
#include "policy/lucid_policy.h"
#include "policy/placer.h"
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

// ---- FreeMap and placers --------------------------------------------------------------------

// Three 8-GPU nodes with 3, 6 and 8 GPUs free.
FreeMap ThreeNodes() {
  FreeMap m(3, 8);
  m.Take(0, 5);
  m.Take(1, 2);
  return m;
}

TEST(PlacerTest, ConsolidateFollowsLucidsRules) {
  struct Case {
    const char* name;
    int32_t gpus;
    std::vector<NodeShare> want;  // empty: does not fit
  };
  const Case cases[] = {
      {"best_fit_3", 3, {{0, 3}}},  // smallest free >= 3 is node 0 (3)
      {"best_fit_6", 6, {{1, 6}}},  // node 1 (6)
      {"best_fit_7", 7, {{2, 7}}},  // only node 2 has >= 7
      {"whole_node", 8, {{2, 8}}},
      {"two_parts", 12, {{2, 8}, {1, 4}}},  // one idle node + 4 on the most-free node
      {"needs_two_idle", 16, {}},           // only one idle node
      {"more_than_free", 18, {}},           // 17 free in total
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FreeMap m = ThreeNodes();
    auto p = Place(PlacementKind::kConsolidate, c.gpus, m);
    if (c.want.empty()) {
      EXPECT_FALSE(p.has_value());
      EXPECT_EQ(m.total_free(), 17);  // untouched
    } else {
      ASSERT_TRUE(p.has_value());
      EXPECT_EQ(p->nodes, c.want);
      EXPECT_EQ(m.total_free(), 17 - c.gpus);
    }
  }
}

TEST(PlacerTest, ConsolidateRemainderGoesToTheNextIdleNode) {
  // Lucid's rule: with idle nodes left, the remainder of a 12-GPU job goes to the second idle
  // node, not to node 0 where 4 GPUs would fit exactly.
  FreeMap m(3, 8);
  m.Take(0, 4);
  auto p = Place(PlacementKind::kConsolidate, 12, m);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->nodes, (std::vector<NodeShare>{{1, 8}, {2, 4}}));
}

TEST(PlacerTest, SpreadUsesTheMostFreeNode) {
  FreeMap m = ThreeNodes();
  auto p = Place(PlacementKind::kSpread, 2, m);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->nodes, (std::vector<NodeShare>{{2, 2}}));
  auto q = Place(PlacementKind::kSpread, 13, m);  // 6 + 6 (node 2 now 6) + 1 from node 0
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->total_gpus(), 13);
}

TEST(FreeMapTest, DownNodesHoldNothing) {
  FreeMap m(2, 8);
  m.SetDown(1);
  EXPECT_EQ(m.total_free(), 8);
  EXPECT_EQ(m.total_up_gpus(), 8);
  EXPECT_FALSE(Place(PlacementKind::kConsolidate, 16, m).has_value());
  m.SetUp(1);
  EXPECT_EQ(m.total_free(), 16);
  EXPECT_EQ(m.FirstWithFree(8, 0), 1);
}

TEST(FreeMapTest, ManyNodesCrossWordBoundaries) {
  FreeMap m(130, 8);
  for (int n = 0; n < 129; ++n) m.Take(n, 8);
  EXPECT_EQ(m.BestFit(1), 129);
  EXPECT_EQ(m.FirstWithFree(0, 63), 64);
}

// ---- registries -----------------------------------------------------------------------------

TEST(PolicyRegistryTest, BuiltinsAndDuplicates) {
  PolicyRegistry r;
  ASSERT_OK(RegisterBuiltinPolicies(r));
  for (const auto& name : DefaultPolicyNames()) EXPECT_TRUE(r.Contains(name)) << name;
  EXPECT_TRUE(r.Contains("reject-all"));
  Status dup = r.Register("fifo", "again", [](const PolicyConfig& c) {
    return std::unique_ptr<SchedulingPolicy>(std::make_unique<FifoPolicy>(c));
  });
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists);
  auto missing = r.Create("nope", {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("tiresias"), std::string::npos);
  auto fifo = r.Create("fifo", {});
  ASSERT_OK(fifo);
  EXPECT_EQ((*fifo)->Name(), "fifo");
}

TEST(EstimatorRegistryTest, BuiltinsAndOnlineLearning) {
  EstimatorRegistry r;
  ASSERT_OK(RegisterBuiltinEstimators(r));
  EXPECT_EQ(
      r.Register("file", "dup",
                 [] { return Result<std::unique_ptr<DurationEstimator>>(Status::Internal("x")); })
          .code(),
      StatusCode::kAlreadyExists);
  EXPECT_EQ(r.Create("missing").status().code(), StatusCode::kNotFound);
  auto um = r.Create("user-mean");
  ASSERT_OK(um);
  JobRecord a = JobBuilder().User("u").Gpus(1).Runtime(100).Build();
  JobRecord b = JobBuilder().User("u").Gpus(1).Runtime(300).Build();
  EXPECT_EQ((*um)->Estimate(a, SimTime()).duration, Duration::Hours(1));  // no history
  (*um)->Observe(a, SimTime());
  (*um)->Observe(b, SimTime());
  EXPECT_EQ((*um)->Estimate(a, SimTime()).duration, Duration::Seconds(200));  // (100+300)/2
  auto file = r.Create("file");
  ASSERT_OK(file);
  EXPECT_EQ((*file)->Estimate(JobBuilder().Estimate(42).Build(), SimTime()).duration,
            Duration::Seconds(42));
  EXPECT_TRUE(DefaultEstimatorRegistry().Contains("oracle"));
}

// ---- co-location model ----------------------------------------------------------------------

JobBuilder Ppo() { return JobBuilder().Model("PPO", "CartPole", 32, 0).Gmem(1000); }
JobBuilder Vgg() { return JobBuilder().Model("VGG", "ImageNet", 64, 0).Gmem(12000); }

TEST(ColocationModelTest, MeasuredPairsBothWays) {
  auto m = FixtureColocationModel();
  ASSERT_OK(m);
  const auto r1 = m->Rates(ResNet18Job().Build(), Ppo().Build());
  EXPECT_TRUE(r1.measured);
  EXPECT_DOUBLE_EQ(r1.a, 0.8);
  EXPECT_DOUBLE_EQ(r1.b, 0.7);
  const auto r2 = m->Rates(Ppo().Build(), ResNet18Job().Build());
  EXPECT_DOUBLE_EQ(r2.a, 0.7);
  EXPECT_DOUBLE_EQ(r2.b, 0.8);
  EXPECT_EQ(m->ShareScore(ResNet18Job().Build()), 0);
  EXPECT_EQ(m->ShareScore(Ppo().Build()), 1);
}

TEST(ColocationModelTest, UnmeasuredPairsUseUtilisation) {
  ColocationModel m;  // no measurements
  JobRecord a = JobBuilder().Build(), b = JobBuilder().Build();
  a.gpu_util = 30;
  b.gpu_util = 50;
  EXPECT_DOUBLE_EQ(m.Rates(a, b).a, 1.0);  // 80 % <= 100 %: no slowdown
  b.gpu_util = 170;
  EXPECT_DOUBLE_EQ(m.Rates(a, b).a, 0.5);  // 100 / (30 + 170)
  EXPECT_FALSE(m.Rates(a, b).measured);
}

TEST(ColocationModelTest, BadFileNamesFileAndLine) {
  testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("c.csv"),
                              "model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,"
                              "batchsize2,amp2,speed2\nA,B,32,0,fast,C,D,32,0,0.5\n"));
  auto m = ColocationModel::Load(dir.File("c.csv"), testing::TestDataPath("sim/single_data.csv"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(dir.File("c.csv") + ":2"), std::string::npos)
      << m.status().message();
}

// ---- policies on hand-made traces -----------------------------------------------------------

TEST(FifoPolicyTest, HeadOfLineBlocks) {
  // One 8-GPU node. X (4 GPUs) runs 0..100. A (8 GPUs) arrives at 1 and must wait for X; B (1
  // GPU, at 2) would fit beside X but FIFO does not backfill: A runs 100..110, then B 110..120.
  JobTable t = Table({JobBuilder().Gpus(4).SubmitAt(0).Runtime(100),
                      JobBuilder().Gpus(8).SubmitAt(1).Runtime(10),
                      JobBuilder().Gpus(1).SubmitAt(2).Runtime(10)});
  auto r = RunPolicy("fifo", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 100);
  EXPECT_EQ(Start(*r, 2), 110);
  EXPECT_EQ(r->jobs[2].queued.seconds(), 108);
}

TEST(SjfPolicyTest, ShortestFirstAfterTheBlocker) {
  // X holds the node 0..100; A (50 s), B (10 s), C (30 s) queue at 1. SJF: B 100..110,
  // C 110..140, A 140..190.
  JobTable t = Table(
      {JobBuilder().Gpus(8).SubmitAt(0).Runtime(100), JobBuilder().Gpus(8).SubmitAt(1).Runtime(50),
       JobBuilder().Gpus(8).SubmitAt(1).Runtime(10), JobBuilder().Gpus(8).SubmitAt(1).Runtime(30)});
  auto r = RunPolicy("sjf", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 2), 100);
  EXPECT_EQ(Start(*r, 3), 110);
  EXPECT_EQ(Start(*r, 1), 140);
}

TEST(QssfPolicyTest, OrdersByEstimateTimesGpus) {
  // X holds the node 0..100. At 10: P (4 GPUs, est 100 -> 400), Q (2 GPUs, est 300 -> 600),
  // R (8 GPUs, est 40 -> 320). At 100 R goes first (runs 50 s: 100..150), then P and Q together
  // at 150 (4 + 2 GPUs fit).
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(100).Estimate(100),
                      JobBuilder().Gpus(4).SubmitAt(10).Runtime(20).Estimate(100),
                      JobBuilder().Gpus(2).SubmitAt(10).Runtime(30).Estimate(300),
                      JobBuilder().Gpus(8).SubmitAt(10).Runtime(50).Estimate(40)});
  auto r = RunPolicy("qssf", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 3), 100);
  EXPECT_EQ(Start(*r, 1), 150);
  EXPECT_EQ(Start(*r, 2), 150);
  EXPECT_EQ(r->jobs[1].queued.seconds(), 140);
}

TEST(QssfPolicyTest, LucidCompatOrdersAllNewJobsByGpus) {
  // J1 (1 GPU, est 1000 -> 1000) and J2 (8 GPUs, est 10 -> 80) arrive together at 0.
  // Lucid: with only new jobs queued it sorts by gpu_num, so J1 starts and J2 (8 GPUs) waits for
  // it: J2 starts at 100. Default mode: priority order, J2 first, J1 at 100.
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(0).Runtime(100).Estimate(1000),
                      JobBuilder().Gpus(8).SubmitAt(0).Runtime(100).Estimate(10)});
  PolicyConfig compat;
  compat.lucid_compat = true;
  sim::SimOptions so;
  so.lucid_compat = true;
  auto lucid = RunPolicy("qssf", t, OneVc(1), compat, so);
  ASSERT_OK(lucid);
  EXPECT_EQ(Start(*lucid, 0), 0);
  EXPECT_EQ(Start(*lucid, 1), 100);
  auto plain = RunPolicy("qssf", t, OneVc(1));
  ASSERT_OK(plain);
  EXPECT_EQ(Start(*plain, 1), 0);
  EXPECT_EQ(Start(*plain, 0), 100);
}

TEST(TiresiasPolicyTest, DemotesAfterThresholdAndPreempts) {
  // One node. A (8 GPUs, 10000 s) starts at 0. B (8 GPUs, 100 s) arrives at 60; both in the high
  // queue, A first (earlier submit), so B waits. A's attained service exceeds 18000 GPU-s at
  // 18001/8 = 2250.125 s; the next 60 s tick is 2280: A is demoted and preempted (7720 s left +
  // 40 s cost = 7760 s), B runs 2280..2380; at the next tick, 2400, A resumes and ends at
  // 2400 + 7760 = 10160.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(10000),
                      JobBuilder().Gpus(8).SubmitAt(60).Runtime(100)});
  auto r = RunPolicy("tiresias", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 2280);
  EXPECT_EQ(End(*r, 1), 2380);
  EXPECT_EQ(End(*r, 0), 10160);
  EXPECT_EQ(r->jobs[0].queued.seconds(), 120);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
}

TEST(LucidPolicyTest, PacksCompatibleJobsAndSlowsThem) {
  // One node. X (ResNet18, 8 GPUs, 100 s) runs from 0. A (PPO, 8 GPUs, 70 s) arrives at 10: the
  // node is full (contention), the pair is measured at 0.8 (ResNet18) / 0.7 (PPO), scores 0+1,
  // memory 4 GB: A shares X's GPUs. A needs 70 / 0.7 = 100 s: ends at 110. X had 90 s left at 10,
  // does 0.8 x 100 = 80 of it by 110, then the last 10 s alone: ends at 120.
  JobTable t = Table({ResNet18Job().Gpus(8).SubmitAt(0).Runtime(100).Estimate(100),
                      Ppo().Gpus(8).SubmitAt(10).Runtime(70).Estimate(70)});
  auto r = RunPolicyColocated("lucid", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 10);
  EXPECT_EQ(End(*r, 1), 110);
  EXPECT_EQ(End(*r, 0), 120);
}

TEST(LucidPolicyTest, DoesNotPackPairsThatSlowDown) {
  // VGG + PPO is measured at 0.4 / 0.5: not packed; A waits for X (ends at 100) and runs alone.
  JobTable t = Table({Vgg().Gpus(8).SubmitAt(0).Runtime(100).Estimate(100),
                      Ppo().Gpus(8).SubmitAt(10).Runtime(70).Estimate(70)});
  auto r = RunPolicyColocated("lucid", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 100);
  EXPECT_EQ(End(*r, 1), 170);
}

TEST(SchedmatePolicyTest, ShortEstimatedServiceFirst) {
  // X holds the node 0..100. L (8 GPUs, est 500) at 10, S (4 GPUs, est 50) at 11. Priorities:
  // S = 50 x 4 = 200 < L = 500 x 8 = 4000, so S runs 100..150 and L 150..650 (FIFO would run L
  // first: S at 600).
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(100).Estimate(100),
                      JobBuilder().Gpus(8).SubmitAt(10).Runtime(500).Estimate(500),
                      JobBuilder().Gpus(4).SubmitAt(11).Runtime(50).Estimate(50)});
  auto r = RunPolicy("schedmate", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 2), 100);
  EXPECT_EQ(Start(*r, 1), 150);
  auto f = RunPolicy("fifo", t, OneVc(1));
  ASSERT_OK(f);
  EXPECT_EQ(Start(*f, 2), 600);
}

TEST(SchedmatePolicyTest, UnpacksWhenContentionEnds) {
  // Two nodes. X1, X2 (ResNet18, 8 GPUs) start at 0 (1000 s and 100 s). A (ResNet18, 8 GPUs,
  // 2000 s, est 2000) arrives at 10: both nodes busy, ResNet18 x2 measured 0.9 / 0.9, so A packs
  // onto X1. At 100 X2 ends; no job waits, A runs at 0.9 < 0.95 with 1910 s estimated left, so it
  // is moved alone to node 1: it had done 0.9 x 90 = 81 s, so 1919 s + 40 s cost remain: ends at
  // 100 + 1959 = 2059. X1: 990 s left at 10, 0.9 x 90 = 81 done by 100, 909 s alone: ends 1009.
  JobTable t = Table({ResNet18Job().Gpus(8).SubmitAt(0).Runtime(1000).Estimate(1000),
                      ResNet18Job().Gpus(8).SubmitAt(0).Runtime(100).Estimate(100),
                      ResNet18Job().Gpus(8).SubmitAt(10).Runtime(2000).Estimate(2000)});
  auto r = RunPolicyColocated("schedmate", t, OneVc(2));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 2), 10);
  EXPECT_EQ(r->jobs[2].preemptions, 1);
  EXPECT_EQ(End(*r, 2), 2059);
  EXPECT_EQ(End(*r, 0), 1009);
}

TEST(PackingTest, PairingLossCountsBothJobsSlowdown) {
  // A job of 100 at rate 0.8 runs 125: 25 more; a partner of 50 at rate 0.5 overlaps it for
  // min(125, 50 / 0.5) = 100 and loses half of that: 75 in all. An unknown partner (-1) overlaps
  // the whole 125: 25 + 62.5.
  EXPECT_DOUBLE_EQ(PairingLoss(100, 50, {.a = 0.8, .b = 0.5}), 75.0);
  EXPECT_DOUBLE_EQ(PairingLoss(100, -1, {.a = 0.8, .b = 0.5}), 87.5);
  EXPECT_DOUBLE_EQ(PairingLoss(100, 1000, {.a = 1.0, .b = 1.0}), 0.0);
}

TEST(SchedmatePolicyTest, PacksWithThePartnerThatSlowsThePairLeast) {
  // Two nodes. P (PPO) and R (ResNet18), 8 GPUs and 1000 s each, start at 0, P first. A
  // (ResNet18, 8 GPUs, 100 s) arrives at 10 with both nodes busy; both pass Lucid's checks.
  // With P (A at 0.8, P at 0.7) the pair loses 100 / 0.8 - 100 + 125 x 0.3 = 62.5 s, with R (0.9
  // each) 11.1 + 111.1 x 0.1 = 22.2 s: schedmate packs A onto R, A ends at 10 + 100 / 0.9 = 121.1
  // and R, 0.9 x 111.1 = 100 s behind, at 1011.1; P is untouched (1000). Lucid takes the first
  // started candidate that passes, P: A ends at 10 + 125 = 135 and P at 135 + (990 - 87.5) =
  // 1037.5.
  JobTable t = Table({Ppo().Gpus(8).SubmitAt(0).Runtime(1000).Estimate(1000),
                      ResNet18Job().Gpus(8).SubmitAt(0).Runtime(1000).Estimate(1000),
                      ResNet18Job().Gpus(8).SubmitAt(10).Runtime(100).Estimate(100)});
  auto s = RunPolicyColocated("schedmate", t, OneVc(2));
  ASSERT_OK(s);
  EXPECT_EQ(Start(*s, 2), 10);
  EXPECT_EQ(End(*s, 2), 121);
  EXPECT_EQ(End(*s, 1), 1011);
  EXPECT_EQ(End(*s, 0), 1000);
  auto l = RunPolicyColocated("lucid", t, OneVc(2));
  ASSERT_OK(l);
  EXPECT_EQ(Start(*l, 2), 10);
  EXPECT_EQ(End(*l, 2), 135);
  EXPECT_EQ(End(*l, 0), 1037);
  EXPECT_EQ(End(*l, 1), 1000);
}

}  // namespace
}  // namespace schedmate::policy
