#include "advisor/history_estimator.h"

#include <gtest/gtest.h>

#include "advisor/replay.h"
#include "testing/job_builder.h"
#include "testing/test_util.h"

namespace schedmate::advisor {
namespace {

using testing::JobBuilder;

JobBuilder Resnet(const std::string& id, const std::string& user, int64_t runtime) {
  return JobBuilder()
      .Id(id)
      .User(user)
      .Gpus(4)
      .Cpus(8)
      .Model("ResNet50")
      .Dataset("ImageNet")
      .Batch(256)
      .Runtime(runtime);
}

void Feed(HistoryEstimator& e, const JobRecord& j, int64_t finish_s) {
  e.Observe(j, SimTime::FromSeconds(finish_s));
}

TEST(HistoryEstimatorTest, ColdStartIsHonest) {
  HistoryEstimator e;
  DetailedEstimate d = e.EstimateDetailed(Resnet("q", "alice", 0).Build(),
                                          FingerprintOf(Resnet("q", "alice", 0).Build()));
  EXPECT_EQ(d.tier, "cold-start");
  EXPECT_EQ(d.estimate.confidence, 0);
  EXPECT_EQ(d.estimate.duration, Duration::Hours(1));
  EXPECT_TRUE(d.neighbours.empty());
  JobRecord limited = Resnet("q", "alice", 0).Limit(7200).Build();
  DurationEstimate l = e.Estimate(limited, SimTime());
  EXPECT_EQ(l.duration, Duration::Seconds(7200));
  EXPECT_NE(l.explanation.find("time limit"), std::string::npos);
}

// Evidence is the exact tier's recent jobs; the point estimate is their 0.35 quantile
// (index floor(0.35 * n) of the sorted values) and the interval their range.
TEST(HistoryEstimatorTest, ExactTierQuantileAndInterval) {
  HistoryEstimator e({.cap_by_user_latest = false});
  const int64_t runs[] = {1000, 400, 800, 1200, 600};
  for (int i = 0; i < 5; ++i) Feed(e, Resnet("a" + std::to_string(i), "alice", runs[i]).Build(), i);
  JobRecord q = Resnet("q", "alice", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "exact");
  // sorted 400 600 800 1000 1200, floor(0.35*5)=1 -> 600
  EXPECT_EQ(d.estimate.duration, Duration::Seconds(600));
  EXPECT_EQ(d.estimate.low, Duration::Seconds(400));
  EXPECT_EQ(d.estimate.high, Duration::Seconds(1200));
  ASSERT_EQ(d.neighbours.size(), 5u);
  EXPECT_EQ(d.neighbours[0].job_id, "a4");  // most recent first
  EXPECT_GT(d.estimate.confidence, 0.1);
  EXPECT_NE(d.estimate.explanation.find("exact"), std::string::npos);
  EXPECT_NE(d.estimate.explanation.find("5 finished jobs"), std::string::npos);
}

TEST(HistoryEstimatorTest, OnlyTheMostRecentJobsCount) {
  HistoryEstimator e({.recent = 3, .quantile = 0.5, .cap_by_user_latest = false});
  const int64_t runs[] = {10, 10, 10, 500, 600, 700};
  for (int i = 0; i < 6; ++i) Feed(e, Resnet("a" + std::to_string(i), "alice", runs[i]).Build(), i);
  JobRecord q = Resnet("q", "alice", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.neighbours.size(), 3u);
  EXPECT_EQ(d.estimate.duration, Duration::Seconds(600));
}

TEST(HistoryEstimatorTest, CapByUsersLatestJob) {
  HistoryEstimator e;
  for (int i = 0; i < 4; ++i) Feed(e, Resnet("a" + std::to_string(i), "alice", 1000).Build(), i);
  // Alice's latest finished job (another workload) crashed after 30 s.
  Feed(e, JobBuilder().Id("crash").User("alice").Gpus(1).Model("BERT").Runtime(30).Build(), 10);
  JobRecord q = Resnet("q", "alice", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "exact");
  EXPECT_TRUE(d.capped_by_user_latest);
  EXPECT_EQ(d.estimate.duration, Duration::Seconds(30));
  EXPECT_NE(d.estimate.explanation.find("most recently finished"), std::string::npos);
}

// Fallback order, one case per tier, each set up so that only that tier (and later ones) match.
TEST(HistoryEstimatorTest, FallbacksInStatedOrder) {
  HistoryEstimatorOptions o;
  o.cap_by_user_latest = false;
  o.quantile = 0.5;
  HistoryEstimator e(o);
  Feed(e, Resnet("same", "alice", 100).Build(), 1);               // exact
  Feed(e, Resnet("othercpu", "alice", 200).Cpus(16).Build(), 2);  // workload
  Feed(e, Resnet("b128", "bob", 300).Batch(128).Build(), 3);      // peers (similar)
  Feed(e, JobBuilder().Id("bert").User("carol").Gpus(2).Model("BERT").Runtime(400).Build(), 4);
  Feed(e, JobBuilder().Id("gpt").User("dave").Gpus(8).Model("GPT").Runtime(500).Build(), 5);
  struct Case {
    const char* name;
    JobRecord query;
    const char* tier;
    int64_t want_s;
  };
  const Case cases[] = {
      {"exact", Resnet("q", "alice", 0).Build(), "exact", 100},
      {"workload", Resnet("q", "alice", 0).Cpus(32).Build(), "workload", 200},
      {"similar", Resnet("q", "alice", 0).Batch(128).Build(), "similar", 200},
      {"user-gpus", JobBuilder().Id("q").User("carol").Gpus(2).Model("T5").Build(), "user-gpus",
       400},
      {"user", JobBuilder().Id("q").User("carol").Gpus(1).Model("T5").Build(), "user", 400},
      {"peers", Resnet("q", "erin", 0).Batch(128).Build(), "peers", 300},
      {"class", JobBuilder().Id("q").User("erin").Gpus(8).Model("T5").Build(), "class", 500},
      {"global", JobBuilder().Id("q").User("erin").Gpus(3).Model("T5").Build(), "global", 300},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DetailedEstimate d = e.EstimateDetailed(c.query, FingerprintOf(c.query));
    EXPECT_EQ(d.tier, c.tier);
    EXPECT_EQ(d.estimate.duration, Duration::Seconds(c.want_s));
    EXPECT_FALSE(d.neighbours.empty());
    EXPECT_FALSE(d.estimate.explanation.empty());
  }
}

TEST(HistoryEstimatorTest, ScalesByWorkWhenKnown) {
  HistoryEstimator e({.cap_by_user_latest = false});
  // 1000 steps x 256 / 4 GPUs took 600 s; the query does twice the steps.
  Feed(e, Resnet("a", "alice", 600).Steps(1000).Build(), 1);
  JobRecord q = Resnet("q", "alice", 0).Steps(2000).Build();
  JobFingerprint fp = FingerprintOf(q);
  JobRecord past = Resnet("a", "alice", 600).Steps(1000).Build();
  ASSERT_EQ(FingerprintOf(past).workload, fp.workload);
  DetailedEstimate d = e.EstimateDetailed(q, fp);
  EXPECT_EQ(d.estimate.duration, Duration::Seconds(1200));
  ASSERT_EQ(d.neighbours.size(), 1u);
  EXPECT_DOUBLE_EQ(d.neighbours[0].duration_s, 600);
  EXPECT_DOUBLE_EQ(d.neighbours[0].scaled_s, 1200);
}

// The replay must never show a job's outcome before its own submit time: predictions computed by
// replay must equal predictions from an estimator fed by hand with only the jobs finished by then,
// and changing a job's duration must not change any prediction made before it finished.
TEST(ReplayTest, NoFutureLeak) {
  JobTable t;
  t.jobs = {Resnet("1", "alice", 100).SubmitAt(0).Build(),
            Resnet("2", "alice", 50).SubmitAt(10).Build(),
            Resnet("3", "alice", 70).SubmitAt(60).Build(),    // job 2 done at 60: visible
            Resnet("4", "alice", 10).SubmitAt(99).Build(),    // job 1 done at 100: not yet
            Resnet("5", "alice", 10).SubmitAt(100).Build()};  // job 1 visible now
  HistoryEstimator e1({.cap_by_user_latest = false});
  auto p = ReplayTrace(t, e1);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].tier, "cold-start");
  EXPECT_EQ(p[1].tier, "cold-start");
  EXPECT_EQ(p[2].observed_before, 1u);
  EXPECT_DOUBLE_EQ(p[2].predicted_s, 50);
  EXPECT_EQ(p[3].observed_before, 1u);
  EXPECT_EQ(p[4].observed_before, 2u);

  // Perturb job 1's duration to something huge: predictions 1..4 (made before it finished in
  // either version) must not change.
  JobTable t2 = t;
  t2.jobs[0].duration = Duration::Seconds(99);  // now finishes at 99: visible to job 4
  HistoryEstimator e2({.cap_by_user_latest = false});
  auto p2 = ReplayTrace(t2, e2);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(p[i].predicted_s, p2[i].predicted_s) << i;
  EXPECT_EQ(p2[3].observed_before, 2u);
  // And the job's own duration never matters for its own prediction.
  JobTable t3 = t;
  t3.jobs[2].duration = Duration::Seconds(123456);
  HistoryEstimator e3({.cap_by_user_latest = false});
  auto p3 = ReplayTrace(t3, e3);
  EXPECT_DOUBLE_EQ(p[2].predicted_s, p3[2].predicted_s);
}

TEST(ReplayTest, SameSubmitTimeKeepsTraceOrder) {
  JobTable t;
  t.jobs = {Resnet("b", "u", 5).SubmitAt(10).Build(), Resnet("a", "u", 5).SubmitAt(10).Build(),
            Resnet("c", "u", 5).SubmitAt(0).Build()};
  HistoryEstimator e;
  auto p = ReplayTrace(t, e);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].job_id, "c");
  EXPECT_EQ(p[1].job_id, "b");
  EXPECT_EQ(p[2].job_id, "a");
}

}  // namespace
}  // namespace schedmate::advisor
