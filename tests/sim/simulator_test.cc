// Engine tests: tie rules, event order, preemption cost, multi-node jobs, co-location slowdown,
// failure injection, determinism, and the trivial test policies. Every expected number is worked
// out by hand in the comments.

#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/rng.h"
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
  EXPECT_EQ(Summarize(*r).counts.jobs, 0);
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
  EXPECT_EQ(Summarize(*a).counts.jobs, 200);
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

// ---- guards: configurations that cannot finish, cluster bounds, the event limit ----------------

SimOptions FailuresEvery(double mtbf_s, double ckpt_s, double mttr_s = 60) {
  SimOptions o;
  o.failures.enabled = true;
  o.failures.mtbf = Duration::FromSecondsF(mtbf_s);
  o.failures.mttr = Duration::FromSecondsF(mttr_s);
  o.failures.checkpoint_interval = Duration::FromSecondsF(ckpt_s);
  return o;
}

TEST(SimulatorGuardTest, FailureFeasibilityRule) {
  // One 10-hour job on 2 nodes (16 GPUs of 8-GPU nodes): it runs MTBF/2 between failures.
  JobTable t = Table({JobBuilder().Id("long").Gpus(16).SubmitAt(0).Runtime(36000)});
  const ClusterSpec c = OneVc(4);
  struct Case {
    const char* name;
    double mtbf_s, ckpt_s;
    bool ok;
  };
  const Case cases[] = {
      // Without checkpoints the run may be at most 4 x MTBF/2: MTBF >= 18000 s.
      {"no_checkpoints_long_enough", 18000, 0, true},
      {"no_checkpoints_too_short", 17000, 0, false},
      {"no_checkpoints_an_hour", 3600, 0, false},
      // With checkpoints MTBF/2 >= 2 x (interval + restore 60 s for > 8 GPUs).
      {"checkpoints_fit", 4 * (600 + 60), 600, true},
      {"checkpoints_just_short", 4 * (600 + 60) - 1, 600, false},
      {"interval_longer_than_mtbf", 3600, 7200, false},
      {"interval_longer_than_the_job", 4 * (36000 + 60), 1e6, true},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const SimOptions o = FailuresEvery(k.mtbf_s, k.ckpt_s);
    Status st = CheckFailureFeasibility(t, c, o);
    EXPECT_EQ(st.ok(), k.ok) << st.ToString();
    auto r = RunPolicy("fifo", t, c, {}, o);
    if (k.ok) {
      EXPECT_OK(r);
    } else {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(r.status().message().find("long"), std::string::npos) << r.status().message();
    }
  }
  // Failures off: anything goes; jobs the partition rejects do not count.
  EXPECT_OK(CheckFailureFeasibility(t, c, SimOptions{}));
  EXPECT_OK(CheckFailureFeasibility(t, OneVc(1), FailuresEvery(1, 0)));
}

TEST(SimulatorGuardTest, BadFailureOptionsAndClusterSizesAreRefused) {
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(0).Runtime(10)});
  struct Case {
    const char* name;
    ClusterSpec cluster;
    SimOptions options;
  };
  SimOptions zero_mtbf = FailuresEvery(1000, 0);
  zero_mtbf.failures.mtbf = Duration::Zero();
  SimOptions infinite_mtbf = FailuresEvery(1000, 0);
  infinite_mtbf.failures.mtbf = Duration::Infinite();
  SimOptions negative_mttr = FailuresEvery(1000, 0, -1);
  SimOptions negative_ckpt = FailuresEvery(1000, -5);
  ClusterSpec too_many_gpus = OneVc(static_cast<int32_t>(kMaxClusterGpus / 8 + 1));
  ClusterSpec too_many_per_node = OneVc(1, kMaxGpusPerNode + 1);
  ClusterSpec negative_nodes = OneVc(-1);
  const Case cases[] = {
      {"zero_mtbf", OneVc(1), zero_mtbf},
      {"infinite_mtbf", OneVc(1), infinite_mtbf},
      {"negative_mttr", OneVc(1), negative_mttr},
      {"negative_checkpoint_interval", OneVc(1), negative_ckpt},
      {"too_many_gpus", too_many_gpus, SimOptions{}},
      {"too_many_gpus_per_node", too_many_per_node, SimOptions{}},
      {"negative_nodes", negative_nodes, SimOptions{}},
      {"failures_on_too_many_nodes", OneVc(static_cast<int32_t>(kMaxFailureNodes + 1)),
       FailuresEvery(1e9, 0)},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(CheckSimConfig(k.cluster, k.options).code(), StatusCode::kInvalidArgument);
    auto r = RunPolicy("fifo", t, k.cluster, {}, k.options);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
  // At the bounds: accepted.
  EXPECT_OK(CheckSimConfig(OneVc(static_cast<int32_t>(kMaxClusterGpus / 8)), SimOptions{}));
  EXPECT_OK(CheckSimConfig(OneVc(static_cast<int32_t>(kMaxFailureNodes)), FailuresEvery(1e9, 0)));
}

// A policy that never starts anything and asks to be woken every second: without the event limit
// the run would never end (a pending job, a wake-up always due).
class NeverStartsPolicy : public policy::SchedulingPolicy {
 public:
  std::string_view Name() const override { return "never-starts"; }
  policy::Decisions Schedule(const policy::SchedulingInput& in) override {
    policy::Decisions d;
    d.wake_at = in.now + Duration::Seconds(1);
    return d;
  }
};

TEST(SimulatorGuardTest, EventLimitStopsARunThatWouldNotEnd) {
  JobTable t = Table({JobBuilder().Id("stuck").Gpus(1).SubmitAt(0).Runtime(10)});
  auto maker = []() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
    return std::make_unique<NeverStartsPolicy>();
  };
  SimOptions o;
  o.max_events = 5000;
  auto r = Simulate(t, OneVc(1), maker, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("5000"), std::string::npos) << r.status().message();
  // The default limit stops it too.
  auto d = Simulate(t, OneVc(1), maker);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kResourceExhausted);
}

// Waits `wakes` one-second wake-ups before starting anything: a long run with an event per second.
class SlowStartPolicy : public policy::SchedulingPolicy {
 public:
  explicit SlowStartPolicy(int64_t wakes) : wakes_(wakes) {}
  std::string_view Name() const override { return "slow-start"; }
  policy::Decisions Schedule(const policy::SchedulingInput& in) override {
    policy::Decisions d;
    if (++calls_ < wakes_) {
      d.wake_at = in.now + Duration::Seconds(1);
      return d;
    }
    for (const auto& v : in.pending) {
      policy::Placement p;
      p.nodes.push_back({0, static_cast<int32_t>(v.record->gpus.ceil_whole())});
      d.start.push_back({v.index, p});
    }
    return d;
  }

 private:
  int64_t wakes_;
  int64_t calls_ = 0;
};

TEST(SimulatorGuardTest, TimeSeriesMemoryIsBounded) {
  // 1.2 million samples' worth of events at a 1 s sampling period: the series is thinned below
  // kMaxSeriesPoints, stays in time order, and the run still finishes.
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(0).Runtime(10)});
  SimOptions o;
  o.sample_interval = Duration::Seconds(1);
  o.max_events = 2'000'000;
  const int64_t wakes = 1'200'000;
  auto r = Simulate(
      t, OneVc(1),
      [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
        return std::make_unique<SlowStartPolicy>(wakes);
      },
      o);
  ASSERT_OK(r);
  EXPECT_EQ(r->unfinished, 0);
  EXPECT_LT(r->series.size(), kMaxSeriesPoints);
  EXPECT_GT(r->series.size(), kMaxSeriesPoints / 4);
  for (size_t i = 1; i < r->series.size(); ++i) {
    ASSERT_LT(r->series[i - 1].time, r->series[i].time) << i;
  }
}

TEST(SimulatorGuardTest, DefaultLimitLeavesValidRunsAlone) {
  // Failure runs stay far below the default limit, with and without checkpoints.
  JobTable t = FailureTrace();
  for (int64_t ckpt : {0, 600}) {
    SCOPED_TRACE(ckpt);
    const SimOptions o = FailureOptionsFor(7, ckpt);
    auto r = RunPolicy("tiresias", t, OneVc(4), {}, o);
    ASSERT_OK(r);
    EXPECT_EQ(r->unfinished, 0);
    EXPECT_GT(r->events, 0);
    EXPECT_LT(r->events * 10, DefaultMaxEvents(t, OneVc(4), o));
  }
  // A limit the run needs is a limit it reaches: the guard counts what the run queues.
  auto full = RunPolicy("fifo", t, OneVc(4));
  ASSERT_OK(full);
  SimOptions tight;
  tight.max_events = full->events - 1;
  auto cut = RunPolicy("fifo", t, OneVc(4), {}, tight);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kResourceExhausted);
  tight.max_events = full->events;
  EXPECT_OK(RunPolicy("fifo", t, OneVc(4), {}, tight));
}

TEST(MetricsTest, QuantileInterpolatesLinearly) {
  const std::vector<double> v = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 25);  // between 20 and 30
  EXPECT_DOUBLE_EQ(Quantile(v, 1.0), 40);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.0), 10);
  EXPECT_DOUBLE_EQ(Quantile({}, 0.5), 0);
}

TEST(MetricsTest, SummaryPercentilesAreThoseOfTheSortedJcts) {
  // Summarize selects the percentiles' order statistics instead of sorting: they must be the
  // sorted vector's, with ties, unfinished and skipped jobs among them, in any job order.
  SimResult r;
  r.partitions = {""};
  std::vector<double> finished;
  Rng rng(7);
  for (int i = 0; i < 20'011; ++i) {
    JobOutcome o;
    o.partition = i % 50 == 0 ? -1 : 0;
    o.submit = SimTime::FromMicros(0);
    const int64_t jct_s = i % 3 == 0 ? 100 : static_cast<int64_t>(rng.Uniform() * 1e7);
    if (i % 41 != 0) o.finish = SimTime::FromMicros(jct_s * 1'000'000);
    if (o.partition == 0 && o.finished()) finished.push_back(static_cast<double>(jct_s));
    r.jobs.push_back(o);
  }
  std::sort(finished.begin(), finished.end());
  const Summary s = Summarize(r);
  EXPECT_EQ(s.counts.jobs, static_cast<int64_t>(finished.size()));
  EXPECT_EQ(s.p50_jct_s, Quantile(finished, 0.50));
  EXPECT_EQ(s.p95_jct_s, Quantile(finished, 0.95));
  EXPECT_EQ(s.p99_jct_s, Quantile(finished, 0.99));
  EXPECT_GT(s.p99_jct_s, s.p50_jct_s);
}

TEST(SimulatorTest, RunningAtStartHoldsItsNodesUntilItsRemainingTimeHasRun) {
  // A snapshot at t=100: job 0 started at t=40 and has 30 s left, on node 1 (4 GPUs); job 1 (8
  // GPUs) and job 2 (4 GPUs) arrive at t=100 on two 8-GPU nodes. FIFO: job 1 takes the idle
  // node 0 at once; job 2 fits beside job 0 on node 1 (best fit) at once too. Job 0 ends at
  // 100 + 30, and its outcome keeps the real start (40) and nodes.
  JobTable t = testing::Table({testing::JobBuilder().Gpus(4).SubmitAt(100).Runtime(30),
                               testing::JobBuilder().Gpus(8).SubmitAt(100).Runtime(10),
                               testing::JobBuilder().Gpus(4).SubmitAt(100).Runtime(5)});
  SimOptions so;
  so.record_first_nodes = true;
  so.running_at_start.push_back({0, SimTime::FromSeconds(40), {{1, 4}}});
  auto r = testing::RunPolicy("fifo", t, testing::OneVc(2), {}, so);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs[0].first_start.seconds(), 40);
  EXPECT_EQ(r->jobs[0].finish.seconds(), 130);
  EXPECT_EQ(r->jobs[0].first_nodes, std::vector<int32_t>{1});
  EXPECT_EQ(r->jobs[1].first_start.seconds(), 100);
  EXPECT_EQ(r->jobs[1].first_nodes, std::vector<int32_t>{0});
  EXPECT_EQ(r->jobs[2].first_start.seconds(), 100);
  EXPECT_EQ(r->jobs[2].first_nodes, std::vector<int32_t>{1});
  EXPECT_EQ(r->unfinished, 0);
  // A third 4-GPU job on the full node 1 would not fit: the snapshot is refused, naming it.
  so.running_at_start.push_back({2, SimTime::FromSeconds(50), {{1, 8}}});
  auto bad = testing::RunPolicy("fifo", t, testing::OneVc(2), {}, so);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  so.running_at_start.back() = {2, SimTime::FromSeconds(50), {{0, 4}}};
  so.running_at_start.push_back({2, SimTime::FromSeconds(50), {{0, 4}}});  // twice
  bad = testing::RunPolicy("fifo", t, testing::OneVc(2), {}, so);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace schedmate::sim

namespace schedmate::sim {
namespace {

// Starts every pending job on node 0 and records the running jobs' tracker ETAs, waking every
// 10 s.
class EtaRecorder : public policy::SchedulingPolicy {
 public:
  explicit EtaRecorder(std::vector<std::pair<int64_t, std::optional<Duration>>>* out) : out_(out) {}
  std::string_view Name() const override { return "eta-recorder"; }
  policy::Decisions Schedule(const policy::SchedulingInput& in) override {
    policy::Decisions d;
    for (const auto& v : in.running) out_->push_back({in.now.seconds(), v.EtaAt(in.now)});
    for (const auto& v : in.pending) {
      policy::Placement p;
      p.nodes.push_back({0, v.gpus()});
      d.start.push_back({v.index, p});
    }
    d.wake_at = in.now + Duration::Seconds(10);
    return d;
  }

 private:
  std::vector<std::pair<int64_t, std::optional<Duration>>>* out_;
};

std::vector<std::pair<int64_t, std::optional<Duration>>> RecordEtas(const EtaOptions& eta,
                                                                    uint64_t seed) {
  JobTable t = Table({JobBuilder().Gpus(1).SubmitAt(0).Runtime(100)});
  std::vector<std::pair<int64_t, std::optional<Duration>>> out;
  SimOptions o;
  o.eta = eta;
  o.seed = seed;
  auto r = Simulate(
      t, OneVc(1),
      [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
        return std::make_unique<EtaRecorder>(&out);
      },
      o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return out;
}

TEST(SimulatorEtaTest, ModelledEtaIsNoisyRemainingTimeAfterTheFraction) {
  // A 100 s job, ETA known after half its run: none at 10..40 s, then the true remaining time
  // (50, 40, ... s) times one per-job factor exp(0.5 Z).
  EtaOptions eta{true, 0.5, 0.5};
  const auto a = RecordEtas(eta, 7);
  ASSERT_EQ(a.size(), 9u);  // calls at 10..90 s while the job runs
  double factor = 0;
  for (const auto& [t, e] : a) {
    SCOPED_TRACE(t);
    if (t < 50) {
      EXPECT_FALSE(e.has_value());
      continue;
    }
    ASSERT_TRUE(e.has_value());
    const double f = e->seconds_f() / static_cast<double>(100 - t);
    if (factor == 0) factor = f;
    EXPECT_NEAR(f, factor, 1e-5);  // one draw per job
  }
  EXPECT_GT(std::fabs(std::log(factor)), 1e-6);  // noisy
  EXPECT_EQ(RecordEtas(eta, 7), a);              // seeded: the same run twice
  EXPECT_NE(RecordEtas(eta, 8), a);              // another seed draws another factor
  // sigma 0: the exact remaining time; disabled: no ETA at all.
  for (const auto& [t, e] : RecordEtas(EtaOptions{true, 0.0, 0.5}, 7)) {
    if (t >= 50) {
      EXPECT_EQ(e, Duration::Seconds(100 - t));
    }
  }
  for (const auto& [t, e] : RecordEtas(EtaOptions{}, 7)) EXPECT_FALSE(e.has_value());
}

TEST(SimulatorEtaTest, BadEtaOptionsAreRefused) {
  SimOptions o;
  o.eta = EtaOptions{true, -0.1, 0.1};
  EXPECT_EQ(CheckSimConfig(OneVc(1), o).code(), StatusCode::kInvalidArgument);
  o.eta = EtaOptions{true, 0.3, 1.5};
  EXPECT_EQ(CheckSimConfig(OneVc(1), o).code(), StatusCode::kInvalidArgument);
  o.eta = EtaOptions{true, 0.3, 0.1};
  EXPECT_TRUE(CheckSimConfig(OneVc(1), o).ok());
}

}  // namespace
}  // namespace schedmate::sim
