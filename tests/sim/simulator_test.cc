// Engine tests: tie rules, event order, preemption cost, multi-node jobs, co-location slowdown,
// failure injection, determinism, and the trivial test policies. Every expected number is worked
// out by hand in the comments.

#include "sim/simulator.h"

#include <gtest/gtest.h>

#include "sim/job_builder.h"
#include "sim/metrics.h"
#include "testing/test_util.h"

namespace schedmate::sim {
namespace {

using testing::JobBuilder;
using testing::OneVc;
using testing::RunPolicy;
using testing::Table;

int64_t Start(const SimResult& r, int j) { return r.jobs[j].first_start.seconds(); }
int64_t End(const SimResult& r, int j) { return r.jobs[j].finish.seconds(); }

TEST(SimulatorTest, EqualSubmitTimesKeepFileOrder) {
  struct Case {
    const char* name;
    int64_t first_runtime, second_runtime;
    int64_t first_end, second_end;
  };
  // One 8-GPU node, two 8-GPU jobs submitted at t=0: whichever comes first in the file runs
  // first under FIFO; the other starts when it ends.
  const Case cases[] = {
      {"long_first", 100, 10, /*first_end=*/100, /*second_end=*/100 + 10},
      {"short_first", 10, 100, /*first_end=*/10, /*second_end=*/10 + 100},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(c.first_runtime),
                        JobBuilder().Gpus(8).SubmitAt(0).Runtime(c.second_runtime)});
    auto r = RunPolicy("fifo", t, OneVc(1));
    ASSERT_OK(r);
    EXPECT_EQ(End(*r, 0), c.first_end);
    EXPECT_EQ(End(*r, 1), c.second_end);
  }
}

TEST(SimulatorTest, FinishBeforeArrivalAtTheSameInstant) {
  // A holds the node until t=50; B arrives at t=50. Finishes are handled before arrivals, so
  // B starts at 50 with no queueing.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(50),
                      JobBuilder().Gpus(8).SubmitAt(50).Runtime(10)});
  auto r = RunPolicy("fifo", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 50);
  EXPECT_EQ(r->jobs[1].queued.seconds(), 0);
  EXPECT_EQ(End(*r, 1), 60);
}

TEST(SimulatorTest, ArrivalsOutOfFileOrderAreSortedStably) {
  // File order C(submit 5), A(0), B(0): arrival order A, B, C. Under one-at-a-time each runs 10s.
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(5).Runtime(10),
                      JobBuilder().Gpus(1).SubmitAt(0).Runtime(10),
                      JobBuilder().Gpus(1).SubmitAt(0).Runtime(10)});
  auto r = RunPolicy("one-at-a-time", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 0);   // A
  EXPECT_EQ(Start(*r, 2), 10);  // B
  EXPECT_EQ(Start(*r, 0), 20);  // C
}

TEST(SimulatorTest, PreemptionPaysCheckpointCost) {
  // SRTF on one 8-GPU node. A (8 GPUs, 1000 s) starts at 0. B (8 GPUs, 10 s) arrives at 100:
  // A has 900 s left, B 10 s, so A is preempted and owes 900 + cost. B runs 100..110; A resumes
  // at 110 and ends at 110 + 900 + cost.
  struct Case {
    const char* name;
    int64_t cost;
    int64_t a_end;
  };
  const Case cases[] = {{"cost40", 40, 110 + 900 + 40}, {"cost0", 0, 110 + 900}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(1000),
                        JobBuilder().Gpus(8).SubmitAt(100).Runtime(10)});
    SimOptions o;
    o.preemption_cost.small = Duration::Seconds(c.cost);
    auto r = RunPolicy("srtf", t, OneVc(1), {}, o);
    ASSERT_OK(r);
    EXPECT_EQ(End(*r, 1), 110);
    EXPECT_EQ(End(*r, 0), c.a_end);
    EXPECT_EQ(r->jobs[0].preemptions, 1);
    EXPECT_EQ(r->jobs[0].queued.seconds(), 10);  // waited 100..110
  }
}

TEST(SimulatorTest, LucidCompatCountsPreemptiveFinishOneStepLate) {
  // Same as above in Lucid-compatible mode: a countdown job is seen finished one step after its
  // remaining time reaches 0. B: 100 + 10 + 1 = 111. A resumes at 111 with 900 + 40 left and
  // ends at 111 + 940 + 1 = 1052.
  JobTable t = Table({JobBuilder().Gpus(8).SubmitAt(0).Runtime(1000),
                      JobBuilder().Gpus(8).SubmitAt(100).Runtime(10)});
  SimOptions o;
  o.lucid_compat = true;
  auto r = RunPolicy("srtf", t, OneVc(1), {}, o);
  ASSERT_OK(r);
  EXPECT_EQ(End(*r, 1), 111);
  EXPECT_EQ(End(*r, 0), 1052);
  EXPECT_EQ(r->jobs[0].queued.seconds(), 11);
}

TEST(SimulatorTest, LargeJobsPayTheLargeCost) {
  // Two nodes. A (16 GPUs, 1000 s) preempted at 100 by B (16 GPUs, 10 s): cost for > 8 GPUs is
  // 60 s, so A ends at 110 + 900 + 60 = 1070.
  JobTable t = Table({JobBuilder().Gpus(16).SubmitAt(0).Runtime(1000),
                      JobBuilder().Gpus(16).SubmitAt(100).Runtime(10)});
  auto r = RunPolicy("srtf", t, OneVc(2));
  ASSERT_OK(r);
  EXPECT_EQ(End(*r, 0), 1070);
}

TEST(SimulatorTest, MultiNodeJobWaitsForWholeNodes) {
  // Two 8-GPU nodes. X (1 GPU) sits on node 0 until t=100. Y (16 GPUs) needs two idle nodes
  // (consolidate placement), so it starts at 100 although 15 GPUs are free before that.
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(0).Runtime(100),
                      JobBuilder().Gpus(16).SubmitAt(1).Runtime(50)});
  auto r = RunPolicy("fifo", t, OneVc(2));
  ASSERT_OK(r);
  EXPECT_EQ(Start(*r, 1), 100);
  EXPECT_EQ(End(*r, 1), 150);
}

TEST(SimulatorTest, JobsLargerThanTheirVcAreRejected) {
  JobTable t = Table(
      {JobBuilder().Gpus(9).SubmitAt(0).Runtime(10), JobBuilder().Gpus(8).SubmitAt(0).Runtime(10)});
  auto r = RunPolicy("fifo", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_TRUE(r->jobs[0].rejected);
  EXPECT_EQ(r->rejected, 1);
  EXPECT_EQ(End(*r, 1), 10);
}

TEST(SimulatorTest, JobsRunInTheirVc) {
  // Two VCs of one node each. Both jobs take a whole node; in separate VCs they do not wait.
  ClusterSpec c;
  c.vcs.push_back({"a", 1, 8, 0});
  c.vcs.push_back({"b", 1, 8, 0});
  JobTable t = Table({JobBuilder().Vc("a").Gpus(8).SubmitAt(0).Runtime(10),
                      JobBuilder().Vc("b").Gpus(8).SubmitAt(0).Runtime(10),
                      JobBuilder().Vc("zzz").Gpus(8).SubmitAt(0).Runtime(10),
                      JobBuilder().Vc("a").Gpus(0).SubmitAt(0).Runtime(10)});
  auto r = RunPolicy("fifo", t, c);
  ASSERT_OK(r);
  EXPECT_EQ(End(*r, 0), 10);
  EXPECT_EQ(End(*r, 1), 10);
  EXPECT_EQ(r->jobs[1].partition, 1);
  EXPECT_EQ(r->skipped_unknown_vc, 1);
  EXPECT_EQ(r->skipped_no_gpu, 1);
}

TEST(SimulatorTest, RejectAllRunsNothing) {
  JobTable t = Table(
      {JobBuilder().Gpus(1).SubmitAt(0).Runtime(10), JobBuilder().Gpus(2).SubmitAt(5).Runtime(10)});
  auto r = RunPolicy("reject-all", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(r->rejected, 2);
  EXPECT_FALSE(r->jobs[0].finished());
  EXPECT_EQ(Summarize(*r).jobs, 0);
}

TEST(SimulatorTest, OneAtATimeSerialises) {
  // Three 1-GPU jobs of 10 s at t=0 on 8 GPUs run one after another: ends 10, 20, 30.
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(0).Runtime(10),
                      JobBuilder().Gpus(1).SubmitAt(0).Runtime(10),
                      JobBuilder().Gpus(1).SubmitAt(0).Runtime(10)});
  auto r = RunPolicy("one-at-a-time", t, OneVc(1));
  ASSERT_OK(r);
  EXPECT_EQ(End(*r, 0), 10);
  EXPECT_EQ(End(*r, 1), 20);
  EXPECT_EQ(End(*r, 2), 30);
  // Mean JCT (10 + 20 + 30) / 3 = 20; mean queue (0 + 10 + 20) / 3 = 10.
  const Summary s = Summarize(*r);
  EXPECT_DOUBLE_EQ(s.avg_jct_s, 20);
  EXPECT_DOUBLE_EQ(s.avg_queue_s, 10);
}

TEST(SimulatorTest, KillAfterNKillsLongJobsAtTheirDeadline) {
  // kill_after = 50 s: the 100 s job is killed at 50 (rejected, never finishes); the 30 s job ends.
  JobTable t = Table({JobBuilder().Gpus(4).SubmitAt(0).Runtime(100),
                      JobBuilder().Gpus(4).SubmitAt(0).Runtime(30)});
  policy::PolicyConfig pc;
  pc.kill_after = Duration::Seconds(50);
  auto r = RunPolicy("kill-after-n", t, OneVc(1), pc);
  ASSERT_OK(r);
  EXPECT_TRUE(r->jobs[0].rejected);
  EXPECT_FALSE(r->jobs[0].finished());
  EXPECT_EQ(End(*r, 1), 30);
  EXPECT_EQ(r->rejected, 1);
}

TEST(SimulatorTest, UtilisationAndMakespan) {
  // One 8-GPU node: a 4-GPU job for 100 s. Makespan 100 s, busy 400 GPU-s of 800: 0.5.
  JobTable t = Table({JobBuilder().Gpus(4).SubmitAt(0).Runtime(100)});
  auto r = RunPolicy("fifo", t, OneVc(1));
  ASSERT_OK(r);
  const Summary s = Summarize(*r);
  EXPECT_DOUBLE_EQ(s.makespan_s, 100);
  EXPECT_DOUBLE_EQ(s.gpu_utilization, 0.5);
}

JobTable FailureTrace() {
  JobTable t;
  for (int i = 0; i < 200; ++i) {
    t.jobs.push_back(JobBuilder()
                         .Id("f" + std::to_string(i))
                         .Gpus(1 + (i % 8))
                         .SubmitAt(i * 300)
                         .Runtime(3600 + (i * 37) % 7200)
                         .Build());
  }
  return t;
}

SimOptions FailureOptionsFor(uint64_t seed, int64_t ckpt_s) {
  SimOptions o;
  o.seed = seed;
  o.failures.enabled = true;
  o.failures.mtbf = Duration::Hours(20);
  o.failures.mttr = Duration::Hours(1);
  o.failures.checkpoint_interval = Duration::Seconds(ckpt_s);
  return o;
}

bool SameOutcomes(const SimResult& a, const SimResult& b) {
  if (a.jobs.size() != b.jobs.size()) return false;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    if (a.jobs[i].finish != b.jobs[i].finish || a.jobs[i].first_start != b.jobs[i].first_start ||
        a.jobs[i].failure_restarts != b.jobs[i].failure_restarts)
      return false;
  }
  return a.node_failures == b.node_failures;
}

TEST(SimulatorTest, FailureInjectionIsDeterministicPerSeed) {
  JobTable t = FailureTrace();
  auto a = RunPolicy("fifo", t, OneVc(4), {}, FailureOptionsFor(7, 0));
  auto b = RunPolicy("fifo", t, OneVc(4), {}, FailureOptionsFor(7, 0));
  auto c = RunPolicy("fifo", t, OneVc(4), {}, FailureOptionsFor(8, 0));
  ASSERT_OK(a);
  ASSERT_OK(b);
  ASSERT_OK(c);
  EXPECT_GT(a->node_failures, 0);
  EXPECT_TRUE(SameOutcomes(*a, *b));
  EXPECT_FALSE(SameOutcomes(*a, *c));
  EXPECT_EQ(a->unfinished, 0);
  EXPECT_EQ(Summarize(*a).jobs, 200);
  // Killed jobs restart from scratch: a restarted job runs its whole duration after its last
  // start, so finish - last possible start >= duration; JCT is at least the duration.
  int64_t restarts = 0;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    restarts += a->jobs[i].failure_restarts;
    EXPECT_GE(a->jobs[i].jct(), t.jobs[i].duration);
  }
  EXPECT_GT(restarts, 0);
}

TEST(SimulatorTest, CheckpointsLoseLessWork) {
  // Same failures (same seed) with checkpoints every 10 minutes: the busy GPU-time spent is
  // smaller than when every killed job restarts from scratch.
  JobTable t = FailureTrace();
  auto scratch = RunPolicy("fifo", t, OneVc(4), {}, FailureOptionsFor(7, 0));
  auto ckpt = RunPolicy("fifo", t, OneVc(4), {}, FailureOptionsFor(7, 600));
  ASSERT_OK(scratch);
  ASSERT_OK(ckpt);
  EXPECT_LT(ckpt->busy_gpu_seconds, scratch->busy_gpu_seconds);
}

TEST(SimulatorTest, SameSeedSameResult) {
  JobTable t = FailureTrace();
  for (const char* p : {"fifo", "sjf", "srtf", "qssf", "tiresias", "lucid", "schedmate"}) {
    SCOPED_TRACE(p);
    auto a = RunPolicy(p, t, OneVc(3), {}, FailureOptionsFor(3, 300));
    auto b = RunPolicy(p, t, OneVc(3), {}, FailureOptionsFor(3, 300));
    ASSERT_OK(a);
    ASSERT_OK(b);
    EXPECT_TRUE(SameOutcomes(*a, *b));
    EXPECT_EQ(a->unfinished, 0);
  }
}

TEST(SimulatorTest, EmptyClusterIsAnError) {
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(0).Runtime(10)});
  ClusterSpec c;
  auto r = RunPolicy("fifo", t, c);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

// A policy that returns an impossible start: the simulator reports kInternal, never crashes.
class BadPolicy : public policy::SchedulingPolicy {
 public:
  std::string_view Name() const override { return "bad"; }
  policy::Decisions Schedule(const policy::SchedulingInput& in) override {
    policy::Decisions d;
    for (const auto& v : in.pending) {
      policy::Placement p;
      p.nodes.push_back({0, 99});
      d.start.push_back({v.index, p});
    }
    return d;
  }
};

TEST(SimulatorTest, InvalidDecisionIsAnInternalError) {
  JobTable t = Table({JobBuilder().Id("x1").Gpus(1).SubmitAt(0).Runtime(10)});
  auto r = Simulate(t, OneVc(1), []() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
    return std::make_unique<BadPolicy>();
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("x1"), std::string::npos);
}

TEST(MetricsTest, QuantileInterpolatesLinearly) {
  const std::vector<double> v = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 25);  // between 20 and 30
  EXPECT_DOUBLE_EQ(Quantile(v, 1.0), 40);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.0), 10);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5), 0);
}

}  // namespace
}  // namespace schedmate::sim
