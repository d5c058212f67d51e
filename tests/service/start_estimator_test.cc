#include "service/start_estimator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace schedmate::service {
namespace {

const SimTime kNow = SimTime::FromSeconds(1'000'000);

PendingJobRequest Pending(const std::string& id, int gpus, int minutes, int64_t priority = 100,
                          int nodes = 1) {
  return {id, priority, kNow, nodes, gpus, Duration::Minutes(minutes), "Resources"};
}

TEST(StartTimeEstimator, EmptyClusterStartsNow) {
  StartTimeEstimator est;
  auto out = est.Estimate(kNow, {{"gpu1", 8, true}}, {}, {Pending("1", 4, 10)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].start, kNow);
  EXPECT_EQ(out[0].nodes, std::vector<std::string>{"gpu1"});
}

TEST(StartTimeEstimator, RequeuedJobWaitsForItsReleaseAndAvoidsExcludedNodes) {
  StartTimeEstimator est;
  PendingJobRequest job = Pending("7", 4, 10);
  job.reason = "BeginTime";
  job.not_before = kNow + Duration::Minutes(2);
  job.excluded_nodes = {"gpu1"};
  auto out = est.Estimate(kNow, {{"gpu1", 8, true}, {"gpu2", 8, true}}, {}, {job});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].start, kNow + Duration::Minutes(2));
  EXPECT_EQ(out[0].nodes, std::vector<std::string>{"gpu2"});
  EXPECT_NE(out[0].note.find("eligible in"), std::string::npos) << out[0].note;
  // Excluded from every node that could hold it: no time, and the note says why.
  job.excluded_nodes = {"gpu1", "gpu2"};
  out = est.Estimate(kNow, {{"gpu1", 8, true}, {"gpu2", 8, true}}, {}, {job});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].start.has_value());
  EXPECT_NE(out[0].note.find("ExcNodeList (gpu1,gpu2)"), std::string::npos) << out[0].note;
  // Requeued held: no time at all.
  job.reason = "job_requeued_in_held_state";
  out = est.Estimate(kNow, {{"gpu1", 8, true}}, {}, {job});
  EXPECT_FALSE(out[0].start.has_value());
  EXPECT_NE(out[0].note.find("held"), std::string::npos);
}

TEST(StartTimeEstimator, WaitsForPredictedEndsInPriorityOrder) {
  StartTimeEstimator est;
  std::vector<RunningJobLoad> running = {
      {"r1", {"gpu1"}, 8, kNow - Duration::Minutes(10), Duration::Minutes(30), std::nullopt},
      {"r2", {"gpu2"}, 8, kNow - Duration::Minutes(10), Duration::Minutes(20), std::nullopt}};
  auto out = est.Estimate(kNow, {{"gpu1", 8, true}, {"gpu2", 8, true}}, running,
                          {Pending("low", 8, 60, 10), Pending("high", 8, 60, 500)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].job_id, "high");
  EXPECT_EQ(out[0].start, kNow + Duration::Minutes(10));  // r2 ends first, on gpu2
  EXPECT_EQ(out[0].nodes, std::vector<std::string>{"gpu2"});
  EXPECT_EQ(out[1].start, kNow + Duration::Minutes(20));  // then r1 on gpu1
}

TEST(StartTimeEstimator, BackfillsShortJobIntoGapWithoutDelayingEarlierOne) {
  StartTimeEstimator est;
  std::vector<RunningJobLoad> running = {
      {"r1", {"gpu1"}, 4, kNow, Duration::Minutes(30), std::nullopt}};
  auto out = est.Estimate(kNow, {{"gpu1", 8, true}}, running,
                          {Pending("big", 8, 60, 100), Pending("small", 4, 20, 50)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].start, kNow + Duration::Minutes(30));
  EXPECT_EQ(out[1].start, kNow);  // fits in the 4 free GPUs and ends before "big" needs them
}

TEST(StartTimeEstimator, OverrunJobsAndTimeLimits) {
  StartTimeEstimator est;
  std::vector<RunningJobLoad> running = {
      // Outlived its prediction: assumed to end one minute from now.
      {"late", {"gpu1"}, 8, kNow - Duration::Hours(2), Duration::Hours(1), std::nullopt},
      // Predicted 3 h but its limit ends it in 15 min.
      {"limited",
       {"gpu2"},
       8,
       kNow - Duration::Minutes(45),
       Duration::Hours(3),
       Duration::Hours(1)}};
  auto out = est.Estimate(kNow, {{"gpu1", 8, true}, {"gpu2", 8, true}}, running,
                          {Pending("a", 8, 10), Pending("b", 8, 10)});
  EXPECT_EQ(out[0].start, kNow + Duration::Minutes(1));
  EXPECT_EQ(out[1].start, kNow + Duration::Minutes(11));  // "a" then fits on gpu1 first
}

TEST(StartTimeEstimator, HeldInfeasibleAndMultiNode) {
  StartTimeEstimator est;
  PendingJobRequest held = Pending("held", 1, 10);
  held.reason = "JobHeldUser";
  auto out = est.Estimate(
      kNow, {{"gpu1", 8, true}, {"gpu2", 8, false}}, {},
      {held, Pending("huge", 16, 10), Pending("two", 8, 10, 1, 2), Pending("ok", 8, 10, 0)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_FALSE(out[0].start.has_value());
  EXPECT_NE(out[0].note.find("held"), std::string::npos);
  EXPECT_FALSE(out[1].start.has_value());  // 16 GPUs on one node never fits
  EXPECT_FALSE(out[2].start.has_value());  // two nodes but gpu2 is drained
  EXPECT_EQ(out[3].start, kNow);
}

TEST(StartTimeEstimator, BackfillPlansByTimeLimitsAsSlurmDoes) {
  // gpu1 (8 GPUs) has r1 on 4 GPUs for 30 more minutes (limit ends it at the same time). "big"
  // (8 GPUs) waits for it; "small" (4 GPUs) would finish in 20 min by its prediction, but Slurm
  // plans it by its limit: 25 min fits before big's reservation at +30, 60 min does not, and
  // then small waits for big to end (+30 + 10).
  StartTimeEstimator est;
  std::vector<RunningJobLoad> running = {{"r1",
                                          {"gpu1"},
                                          4,
                                          kNow - Duration::Minutes(30),
                                          Duration::Minutes(60),
                                          Duration::Minutes(60)}};
  for (int limit : {25, 60}) {
    SCOPED_TRACE(limit);
    PendingJobRequest big = Pending("big", 8, 10, 100);
    big.time_limit = Duration::Minutes(15);
    PendingJobRequest small = Pending("small", 4, 20, 50);
    small.time_limit = Duration::Minutes(limit);
    auto out = est.Estimate(kNow, {{"gpu1", 8, true}}, running, {big, small});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].job_id, "big");
    EXPECT_EQ(out[0].start, kNow + Duration::Minutes(30));
    EXPECT_EQ(out[1].job_id, "small");
    EXPECT_EQ(out[1].start, limit == 25 ? kNow : kNow + Duration::Minutes(40));
  }
}

TEST(StartTimeEstimator, NodesOfDifferentSizesAndBestFit) {
  // gpu1 has 4 GPUs, gpu2 has 8: an 8-GPU job only fits on gpu2; a 4-GPU job then fits on
  // gpu1 (best fit: the node with the fewest free GPUs that holds it), a second 4-GPU job waits
  // for the first to end (10 min).
  StartTimeEstimator est;
  auto out = est.Estimate(
      kNow, {{"gpu2", 8, true}, {"gpu1", 4, true}}, {},
      {Pending("eight", 8, 30, 300), Pending("four-a", 4, 10, 200), Pending("four-b", 4, 10, 100)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].start, kNow);
  EXPECT_EQ(out[0].nodes, std::vector<std::string>{"gpu2"});
  EXPECT_EQ(out[1].start, kNow);
  EXPECT_EQ(out[1].nodes, std::vector<std::string>{"gpu1"});
  EXPECT_EQ(out[2].start, kNow + Duration::Minutes(10));
  EXPECT_EQ(out[2].nodes, std::vector<std::string>{"gpu1"});
}

}  // namespace
}  // namespace schedmate::service

namespace schedmate::service {
namespace {

StartEstimateInputs Queue(size_t pending) {
  StartEstimateInputs in;
  in.now = kNow;
  for (int n = 1; n <= 4; ++n) in.nodes.push_back({"gpu" + std::to_string(n), 8, true});
  for (size_t i = 0; i < pending; ++i) {
    in.pending.push_back(Pending("p" + std::to_string(i), 1 + static_cast<int>(i % 8),
                                 10 + static_cast<int>(i % 50), static_cast<int64_t>(i % 97)));
  }
  return in;
}

TEST(StartEstimateRunner, SmallQueueIsEstimatedInThePass) {
  StartEstimateRunner runner;
  StartEstimateInputs in = Queue(3);
  auto want = StartTimeEstimator().Estimate(in.now, in.nodes, in.running, in.pending);
  auto got = runner.Run(in);
  EXPECT_FALSE(runner.background());
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].job_id, want[i].job_id);
    EXPECT_EQ(got[i].start, want[i].start);
  }
}

// Past kSyncStartEstimatePending jobs the fast-forward runs on the worker: the pass gets nothing
// at first, then, once, exactly what the estimator computes for the snapshot it was given.
TEST(StartEstimateRunner, LargeQueueIsEstimatedInTheBackgroundOnce) {
  StartEstimateRunner runner;
  StartEstimateInputs in = Queue(kSyncStartEstimatePending + 1);
  auto want = StartTimeEstimator().Estimate(in.now, in.nodes, in.running, in.pending);
  EXPECT_TRUE(runner.Run(in).empty());
  EXPECT_TRUE(runner.background());
  std::vector<StartEstimate> got;
  for (int i = 0; i < 6000 && got.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    got = runner.Run(in);
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].job_id, want[i].job_id);
    EXPECT_EQ(got[i].start, want[i].start);
    EXPECT_EQ(got[i].note, want[i].note);
  }
  EXPECT_GT(runner.last_seconds(), 0.0);
  EXPECT_TRUE(runner.Run(in).empty());  // handed out once; the next run has not finished
}

}  // namespace
}  // namespace schedmate::service
