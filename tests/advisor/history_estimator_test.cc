#include "advisor/history_estimator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "advisor/density_grid.h"
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
  EXPECT_NEAR(l.duration.seconds_f(), 3600, 1);  // half the limit until ratios are learnt
  EXPECT_NE(l.explanation.find("time limit"), std::string::npos);
}

// Evidence is the exact tier's recent jobs; the point estimate (kWindowMode) is the centre of
// the densest factor-2 window of the runs, and p10 < median < p90 bracket it.
TEST(HistoryEstimatorTest, ExactTierWindowModeAndQuantiles) {
  HistoryEstimator e({.point = PointEstimate::kWindowMode});
  const int64_t runs[] = {1000, 400, 800, 1200, 600};
  for (int i = 0; i < 5; ++i) Feed(e, Resnet("a" + std::to_string(i), "alice", runs[i]).Build(), i);
  JobRecord q = Resnet("q", "alice", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "exact");
  // 600 is the smallest value whose [300, 1200] window holds all five.
  EXPECT_EQ(d.estimate.duration, Duration::Seconds(600));
  EXPECT_LT(d.p10_s, d.p50_s);
  EXPECT_LT(d.p50_s, d.p90_s);
  EXPECT_LT(d.p10_s, 600);
  EXPECT_GT(d.p90_s, 1000);
  EXPECT_EQ(d.estimate.low.seconds_f(), Duration::FromSecondsF(d.p10_s).seconds_f());
  ASSERT_EQ(d.neighbours.size(), 5u);
  EXPECT_EQ(d.neighbours[0].job_id, "a4");  // most recent first
  EXPECT_GT(d.estimate.confidence, 0.1);
  EXPECT_NE(d.estimate.explanation.find("exact"), std::string::npos);
  EXPECT_NE(d.estimate.explanation.find("5 finished jobs"), std::string::npos);
}

// The default point (kDensityWindow) is read from the smoothed evidence: a window that holds
// all five runs, and the same quantiles as kWindowMode (the point rule does not touch them).
TEST(HistoryEstimatorTest, DensityWindowPointHoldsTheDenseRuns) {
  HistoryEstimator e, mode({.point = PointEstimate::kWindowMode});
  const int64_t runs[] = {1000, 400, 800, 1200, 600};
  for (int i = 0; i < 5; ++i) {
    Feed(e, Resnet("a" + std::to_string(i), "alice", runs[i]).Build(), i);
    Feed(mode, Resnet("a" + std::to_string(i), "alice", runs[i]).Build(), i);
  }
  JobRecord q = Resnet("q", "alice", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  DetailedEstimate m = mode.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "exact");
  for (int64_t r : runs) {
    EXPECT_LE(std::abs(std::log2(d.estimate.duration.seconds_f() / r)), 1.0) << r;
  }
  EXPECT_DOUBLE_EQ(d.p10_s, m.p10_s);
  EXPECT_DOUBLE_EQ(d.p50_s, m.p50_s);
  EXPECT_DOUBLE_EQ(d.p90_s, m.p90_s);
  // EstimateDistribution: the same distribution, the median as the point.
  DurationEstimate dist = e.EstimateDistribution(q, SimTime());
  EXPECT_EQ(dist.duration, Duration::FromSecondsF(d.p50_s));
  EXPECT_EQ(dist.low, d.estimate.low);
  EXPECT_EQ(dist.high, d.estimate.high);
}

// A user whose short runs are always followed by a long one (and the long by a short): the
// next-run evidence says a long run comes after the newest (short) one; without it the recent
// short runs decide.
TEST(HistoryEstimatorTest, NextRunEvidenceFollowsTheUsersPattern) {
  auto run = [](double sequence_weight) {
    HistoryEstimator e({.sequence_weight = sequence_weight});
    for (int i = 0; i < 16; ++i) {
      Feed(e, Resnet("a" + std::to_string(i), "alice", i % 2 == 0 ? 4000 : 60).Build(), i);
    }
    JobRecord q = Resnet("q", "alice", 0).Build();
    return e.EstimateDetailed(q, FingerprintOf(q)).estimate.duration.seconds_f();
  };
  EXPECT_LE(std::abs(std::log2(run(0) / 60)), 0.25);
  EXPECT_LE(std::abs(std::log2(run(0.5) / 4000)), 0.25);
}

// The user mixture: a group with one run leans on the user's other runs as much as user_mix
// says.
TEST(HistoryEstimatorTest, UserMixLeansOnTheUsersOtherRuns) {
  auto run = [](double user_mix) {
    HistoryEstimator e({.user_mix = user_mix});
    for (int i = 0; i < 10; ++i) {
      Feed(e, Resnet("o" + std::to_string(i), "alice", 5000).Gpus(8).Build(), i);
    }
    Feed(e, Resnet("a", "alice", 100).Build(), 20);
    JobRecord q = Resnet("q", "alice", 0).Build();
    DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
    EXPECT_EQ(d.tier, "exact");
    return d.estimate.duration.seconds_f();
  };
  EXPECT_LE(std::abs(std::log2(run(0) / 100)), 0.25);
  EXPECT_LE(std::abs(std::log2(run(0.2) / 100)), 0.25);  // the default: the group's own run
  EXPECT_LE(std::abs(std::log2(run(0.8) / 5000)), 0.25);
}

TEST(HistoryEstimatorTest, OnlyTheMostRecentJobsCount) {
  HistoryEstimator e({.recent = 3});
  const int64_t runs[] = {10, 10, 10, 500, 600, 700};
  for (int i = 0; i < 6; ++i) Feed(e, Resnet("a" + std::to_string(i), "alice", runs[i]).Build(), i);
  JobRecord q = Resnet("q", "alice", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.neighbours.size(), 3u);
  EXPECT_GE(d.estimate.duration, Duration::Seconds(500));
  EXPECT_LE(d.estimate.duration, Duration::Seconds(700));
  EXPECT_GT(d.p10_s, 100);
}

// A user in a short-run regime: the newest jobs weigh most, so after a burst of quick crashes
// the estimate follows them rather than the older long runs.
TEST(HistoryEstimatorTest, RecentRegimeWeighsMost) {
  HistoryEstimator e({.point = PointEstimate::kWindowMode});
  for (int i = 0; i < 4; ++i) Feed(e, Resnet("a" + std::to_string(i), "alice", 1000).Build(), i);
  for (int i = 0; i < 3; ++i) Feed(e, Resnet("c" + std::to_string(i), "alice", 30).Build(), 10 + i);
  JobRecord q = Resnet("q", "alice", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "exact");
  EXPECT_EQ(d.estimate.duration, Duration::Seconds(30));
  EXPECT_GT(d.p90_s, 500);  // the long runs stay in the distribution
}

// Fallback order, one case per tier, each set up so that only that tier (and later ones) match.
TEST(HistoryEstimatorTest, FallbacksInStatedOrder) {
  HistoryEstimator e({.point = PointEstimate::kWindowMode});      // the runs' own values
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
      {"resources", Resnet("q", "alice", 0).Model("ViT").Build(), "resources", 100},
      {"workload", Resnet("q", "alice", 0).Cpus(32).Build(), "workload", 100},
      {"similar", Resnet("q", "alice", 0).Batch(128).Cpus(64).Build(), "similar", 100},
      {"user-gpus", JobBuilder().Id("q").User("carol").Gpus(2).Cpus(3).Model("T5").Build(),
       "user-gpus", 400},
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
  HistoryEstimator e({.point = PointEstimate::kWindowMode});
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
  HistoryEstimator e1;
  auto p = ReplayTrace(t, e1);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].tier, "cold-start");
  EXPECT_EQ(p[1].tier, "cold-start");
  EXPECT_EQ(p[2].observed_before, 1u);
  EXPECT_NEAR(std::log2(p[2].predicted_s), std::log2(50), DensityGrid::kStep);
  EXPECT_EQ(p[3].observed_before, 1u);
  EXPECT_EQ(p[4].observed_before, 2u);

  // Perturb job 1's duration to something huge: predictions 1..4 (made before it finished in
  // either version) must not change.
  JobTable t2 = t;
  t2.jobs[0].duration = Duration::Seconds(99);  // now finishes at 99: visible to job 4
  HistoryEstimator e2;
  auto p2 = ReplayTrace(t2, e2);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(p[i].predicted_s, p2[i].predicted_s) << i;
  EXPECT_EQ(p2[3].observed_before, 2u);
  // And the job's own duration never matters for its own prediction.
  JobTable t3 = t;
  t3.jobs[2].duration = Duration::Seconds(123456);
  HistoryEstimator e3;
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

// Runs alice's jobs one after the other, each resubmitted a minute after the previous one ended
// and estimated before it is observed (so the estimator learns each job's outcome in its
// context): 'C' completes after 3600 s, 'F' fails after 60 s. Returns the next submit time.
int64_t RunSequence(HistoryEstimator& e, const std::string& pattern) {
  int64_t t = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const bool completed = pattern[i] == 'C';
    JobRecord j =
        Resnet("j" + std::to_string(i), "alice", completed ? 3600 : 60).SubmitAt(t).Build();
    j.state = completed ? JobState::kCompleted : JobState::kFailed;
    JobRecord query = j;
    query.duration = Duration::Zero();
    query.state = JobState::kUnknown;
    (void)e.EstimateDetailed(query, FingerprintOf(query));
    t += completed ? 3600 : 60;
    e.Observe(j, SimTime::FromSeconds(t));
    t += 60;
  }
  return t;
}

// Outcomes come in runs (debugging bursts, then real runs): after an early end the estimator
// expects another one, after a completion a completion, learnt from the outcomes it saw.
TEST(HistoryEstimatorTest, OutcomeOddsFollowThePreviousOutcome) {
  const std::string blocks = "FFFFCCCCFFFFCCCCFFFFCCCC";
  HistoryEstimator after_c;
  int64_t t = RunSequence(after_c, blocks);
  DetailedEstimate d = after_c.EstimateDetailed(Resnet("q", "alice", 0).SubmitAt(t).Build(),
                                                FingerprintOf(Resnet("q", "alice", 0).Build()));
  EXPECT_GT(d.p_complete, 0.6);
  EXPECT_NE(d.estimate.explanation.find("P(completes)"), std::string::npos);
  HistoryEstimator after_f;
  t = RunSequence(after_f, blocks + "FFFF");
  d = after_f.EstimateDetailed(Resnet("q", "alice", 0).SubmitAt(t).Build(),
                               FingerprintOf(Resnet("q", "alice", 0).Build()));
  EXPECT_LT(d.p_complete, 0.4);
  EXPECT_NE(d.estimate.explanation.find("ended early"), std::string::npos);
  // A submit time before the previous job's end (unknown, as in `advise`): no odds.
  d = after_f.EstimateDetailed(Resnet("q", "alice", 0).Build(),
                               FingerprintOf(Resnet("q", "alice", 0).Build()));
  EXPECT_LT(d.p_complete, 0);
  EXPECT_EQ(d.estimate.explanation.find("P(completes)"), std::string::npos);
  // No previous job of the user: no odds.
  d = after_f.EstimateDetailed(Resnet("q", "bob", 0).SubmitAt(t).Build(),
                               FingerprintOf(Resnet("q", "bob", 0).Build()));
  EXPECT_LT(d.p_complete, 0);
}

// With the mixture on, the completed runs carry P(completes) of the evidence: after a block of
// completions the point is a full run although half the (equally weighted) evidence failed fast.
TEST(HistoryEstimatorTest, OutcomeMixtureReweightsTheEvidence) {
  const std::string blocks = "FFFFCCCCFFFFCCCCFFFFCCCC";
  HistoryEstimatorOptions opts{
      .recent = 8, .recency_decay = 1.0, .point = PointEstimate::kWindowMode};
  HistoryEstimator plain(opts);
  opts.outcome_mixture = true;
  HistoryEstimator mixed(opts);
  const int64_t t = RunSequence(plain, blocks);
  ASSERT_EQ(RunSequence(mixed, blocks), t);
  JobRecord q = Resnet("q", "alice", 0).SubmitAt(t).Build();
  // Half the mass within x2 of 60 s, half of 3600 s: the over-penalty picks the short mode.
  EXPECT_EQ(plain.EstimateDetailed(q, FingerprintOf(q)).estimate.duration, Duration::Seconds(60));
  DetailedEstimate m = mixed.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(m.estimate.duration, Duration::Seconds(3600));
  EXPECT_GT(m.p50_s, 1000);
}

// Workload range. Other users' runs: a "CNN" workload of 30 s .. 3,000 s and an "LLM" one of
// 50,000 .. 80,000 s, so the cluster spans 30 s .. 80,000 s and each label a narrow part of it.
JobBuilder Labelled(const std::string& id, const std::string& user, const std::string& model,
                    int64_t runtime) {
  return JobBuilder().Id(id).User(user).Gpus(4).Cpus(8).Model(model).Runtime(runtime);
}

void FeedCluster(HistoryEstimator& e) {
  for (int i = 0; i < 30; ++i) {
    const std::string n = std::to_string(i);
    Feed(e, Labelled("c" + n, "u" + n, "CNN", 30 + 100 * i).Gpus(1).Build(), 2 * i);
    Feed(e, Labelled("l" + n, "v" + n, "LLM", 50000 + 1000 * i).Gpus(1).Build(), 2 * i + 1);
  }
}

TEST(HistoryEstimatorTest, WorkloadRangeReplacesEvidenceThatCannotBeThisWorkload) {
  HistoryEstimator e;
  FeedCluster(e);
  for (int i = 0; i < 5; ++i) {
    Feed(e, Labelled("a" + std::to_string(i), "alice", "CNN", 100 + 50 * i).Build(), 100 + i);
  }
  // alice's same-resource jobs all ran under 400 s; LLM runs take 50,000 s or more.
  JobRecord q = Labelled("q", "alice", "LLM", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "workload-range");
  EXPECT_GE(d.estimate.duration, Duration::Seconds(50000));
  EXPECT_LE(d.estimate.duration, Duration::Seconds(80000));
  ASSERT_EQ(d.neighbours.size(), 30u);  // the LLM group's last `recent` runs
  for (const Evidence& n : d.neighbours) EXPECT_EQ(n.job_id[0], 'l');

  // alice's CNN jobs are inside CNN's range: nothing is set aside.
  JobRecord cnn = Labelled("q2", "alice", "CNN", 0).Build();
  DetailedEstimate c = e.EstimateDetailed(cnn, FingerprintOf(cnn));
  EXPECT_EQ(c.tier, "exact");
  EXPECT_EQ(c.neighbours.size(), 5u);

  // Off: the resources tier's short runs decide.
  HistoryEstimator off({.workload_range = false});
  FeedCluster(off);
  for (int i = 0; i < 5; ++i) {
    Feed(off, Labelled("a" + std::to_string(i), "alice", "CNN", 100 + 50 * i).Build(), 100 + i);
  }
  DetailedEstimate o = off.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(o.tier, "resources");
  EXPECT_LT(o.estimate.duration, Duration::Seconds(1000));
}

TEST(HistoryEstimatorTest, WorkloadRangeKeepsTheEvidenceInsideIt) {
  HistoryEstimator e({.point = PointEstimate::kWindowMode});
  FeedCluster(e);
  for (int i = 0; i < 5; ++i) {
    Feed(e, Labelled("a" + std::to_string(i), "alice", "CNN", 100 + 50 * i).Build(), 100 + i);
  }
  Feed(e, Labelled("x0", "alice", "Other", 60000).Build(), 110);
  Feed(e, Labelled("x1", "alice", "Other", 62000).Build(), 111);
  JobRecord q = Labelled("q", "alice", "LLM", 0).Build();
  DetailedEstimate d = e.EstimateDetailed(q, FingerprintOf(q));
  EXPECT_EQ(d.tier, "resources");
  ASSERT_EQ(d.neighbours.size(), 2u);
  EXPECT_EQ(d.neighbours[0].job_id, "x1");
  EXPECT_GE(d.estimate.duration, Duration::Seconds(60000));
  EXPECT_LE(d.estimate.duration, Duration::Seconds(62000));
}

// A label whose runs span the cluster's range says nothing about run time: no change.
TEST(HistoryEstimatorTest, WorkloadRangeIgnoresUninformativeLabels) {
  auto run = [](bool on) {
    HistoryEstimator e({.workload_range = on});
    FeedCluster(e);
    for (int i = 0; i < 30; ++i) {
      const std::string n = std::to_string(i);
      const int64_t runtime = i % 2 == 0 ? 30 + 100 * i : 50000 + 1000 * i;
      Feed(e, Labelled("m" + n, "w" + n, "MIX", runtime).Gpus(1).Build(), 200 + i);
    }
    for (int i = 0; i < 5; ++i) {
      Feed(e, Labelled("a" + std::to_string(i), "alice", "CNN", 100 + 50 * i).Build(), 300 + i);
    }
    JobRecord q = Labelled("q", "alice", "MIX", 0).Build();
    return e.EstimateDetailed(q, FingerprintOf(q));
  };
  DetailedEstimate on = run(true), off = run(false);
  EXPECT_EQ(on.tier, "resources");
  EXPECT_EQ(on.tier, off.tier);
  EXPECT_EQ(on.estimate.duration, off.estimate.duration);
  EXPECT_EQ(on.neighbours.size(), 5u);
}

}  // namespace
}  // namespace schedmate::advisor
