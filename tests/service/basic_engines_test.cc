#include "service/basic_engines.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using schedmate::testing::TempDir;

TEST(BasicLogTracker, ReadsIncrementallyAndFlagsStall) {
  TempDir dir;
  std::string path = dir.File("log");
  ASSERT_OK(WriteStringToFile(path, "epoch 1\nstep 5/50 loss=1.25 step_time 0.40s\nstep 6/5"));
  BasicLogTracker tracker({.stall_after = Duration::Minutes(5)});
  SimTime t = SimTime::FromSeconds(1000);
  auto m = tracker.Observe("j", path, t);
  ASSERT_OK(m);
  EXPECT_EQ(m->step, std::optional<int64_t>(5));
  EXPECT_EQ(m->loss, std::optional<double>(1.25));
  EXPECT_EQ(m->step_time_s, std::optional<double>(0.4));
  EXPECT_NEAR(*m->progress, 0.1, 1e-9);
  ASSERT_TRUE(m->eta.has_value());
  EXPECT_EQ(m->eta->seconds(), 18);
  {
    std::ofstream out(path, std::ios::app);
    out << "0 loss=1.0\n";  // completes the partial line
  }
  m = tracker.Observe("j", path, t + Duration::Minutes(1));
  ASSERT_OK(m);
  EXPECT_EQ(m->step, std::optional<int64_t>(6));
  EXPECT_FALSE(m->stalled);
  m = tracker.Observe("j", path, t + Duration::Minutes(7));
  ASSERT_OK(m);
  EXPECT_TRUE(m->stalled);
  EXPECT_NE(m->note.find("stalled"), std::string::npos);
  EXPECT_EQ(tracker.Tracked(), 1u);
  tracker.Forget("j");
  EXPECT_EQ(tracker.Tracked(), 0u);
  EXPECT_EQ(tracker.Observe("k", dir.File("missing"), t).status().code(), StatusCode::kNotFound);
}

TEST(BasicLogTracker, DetectsSlowdownAndSkipsHugeGrowth) {
  TempDir dir;
  std::string path = dir.File("log");
  std::string text;
  for (int i = 1; i <= 10; ++i) text += "step " + std::to_string(i) + " step_time 1.0s\n";
  ASSERT_OK(WriteStringToFile(path, text));
  BasicLogTracker tracker({.max_read_bytes = 1 << 16});
  auto m = tracker.Observe("j", path, SimTime::FromSeconds(10));
  ASSERT_OK(m);
  EXPECT_FALSE(m->slowdown);
  {
    std::ofstream out(path, std::ios::app);
    out << "step 11 step_time 2.5s\n";
  }
  m = tracker.Observe("j", path, SimTime::FromSeconds(20));
  ASSERT_OK(m);
  EXPECT_TRUE(m->slowdown);
  {
    std::ofstream out(path, std::ios::app);
    out << std::string(200000, 'x') << "\nstep 99 step_time 1.0s\n";
  }
  m = tracker.Observe("j", path, SimTime::FromSeconds(30));
  ASSERT_OK(m);
  EXPECT_EQ(m->step, std::optional<int64_t>(99));  // jumped to the newest bytes
}

struct DiagCase {
  const char* name;
  const char* state;
  const char* log;
  FailureClass cls;
  const char* category;
  bool requeue;
};

TEST(BasicFailureDiagnoser, Table) {
  const DiagCase cases[] = {
      {"xid", "FAILED",
       "ok\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1\nTraceback\nRuntimeError: CUDA\n",
       FailureClass::kInfra, "gpu_xid", true},
      {"ecc", "FAILED", "uncorrectable ECC error encountered\n", FailureClass::kInfra, "ecc", true},
      {"nccl", "FAILED",
       "NCCL WARN NET/IB : Got completion with error; NCCL error: unhandled system error\n",
       FailureClass::kInfra, "nccl_network", true},
      {"node fail without log", "NODE_FAIL", "", FailureClass::kInfra, "node_fail", true},
      {"python", "FAILED", "Traceback (most recent call last):\n  x\nValueError: bad lr\n",
       FailureClass::kApp, "python_exception", false},
      {"oom", "FAILED", "torch.cuda.OutOfMemoryError: CUDA out of memory.\n", FailureClass::kApp,
       "cuda_oom", false},
      {"timeout", "TIMEOUT", "step 5\n", FailureClass::kApp, "timeout", false},
      {"nothing", "FAILED", "step 5\n", FailureClass::kUnknown, "", false},
  };
  BasicFailureDiagnoser diag;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    FailedJob job{"1", "j", c.state, 1, 0, {"gpu3"}, Duration::Minutes(1)};
    job.retry_budget = 1;
    auto d = diag.Diagnose(job, c.log);
    ASSERT_OK(d);
    EXPECT_EQ(d->cls, c.cls);
    EXPECT_EQ(d->category, c.category);
    bool requeue = false;
    for (const auto& a : d->plan) requeue |= a.kind == PlannedAction::Kind::kRequeue;
    EXPECT_EQ(requeue, c.requeue);
    if (c.cls == FailureClass::kInfra) {
      ASSERT_FALSE(d->plan.empty());
      EXPECT_EQ(d->plan.front().kind, PlannedAction::Kind::kDrainNode);
      EXPECT_EQ(d->plan.front().node, "gpu3");
    }
  }
}

TEST(BasicFailureDiagnoser, InfraPlanCarriesExclusionCheckpointAndBudget) {
  BasicFailureDiagnoser diag;
  FailedJob job{"7", "j", "FAILED", 1, 0, {"gpu3"}, Duration::Minutes(5)};
  job.retry_budget = 2;
  job.retries_used = 1;
  std::string log =
      "step 1200 loss 0.3\nSaved checkpoint to ckpt/step_1200.pt\n"
      "failed to save checkpoint to /tmp/broken.pt\n"  // a failed save is not a resume point
      "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus\n"
      "saving checkpoint to ckpt/after.pt\n";  // after the failure: not trusted
  auto d = diag.Diagnose(job, log);
  ASSERT_OK(d);
  ASSERT_EQ(d->plan.size(), 3u);
  EXPECT_EQ(d->checkpoint, std::optional<std::string>("ckpt/step_1200.pt"));
  const PlannedAction& rq = d->plan[1];
  EXPECT_EQ(rq.kind, PlannedAction::Kind::kRequeue);
  EXPECT_EQ(rq.attempt, 2);
  EXPECT_FALSE(rq.delay.has_value());  // the service's backoff applies
  EXPECT_EQ(rq.exclude_nodes, std::vector<std::string>{"gpu3"});
  EXPECT_EQ(rq.checkpoint, std::optional<std::string>("ckpt/step_1200.pt"));
  EXPECT_EQ(d->plan[2].kind, PlannedAction::Kind::kNotifyUser);
  // Budget used: hold and tell the operators instead of requeueing.
  job.retries_used = 2;
  auto spent = diag.Diagnose(job, log);
  ASSERT_OK(spent);
  std::vector<PlannedAction::Kind> kinds;
  for (const auto& a : spent->plan) kinds.push_back(a.kind);
  EXPECT_EQ(kinds, (std::vector<PlannedAction::Kind>{PlannedAction::Kind::kDrainNode,
                                                     PlannedAction::Kind::kHold,
                                                     PlannedAction::Kind::kNotifyAdmin}));
  EXPECT_NE(spent->plan[1].reason.find("retry budget of 2 used"), std::string::npos);
  EXPECT_NE(spent->plan[2].hint.find("scontrol release 7"), std::string::npos);
}

TEST(BasicJobAdvisor, MedianOfSameNameThenFallbacks) {
  auto advisor = BasicJobAdvisor::Create(nullptr);
  ASSERT_OK(advisor);
  JobContext job;
  job.name = "bert";
  job.user = "ann";
  auto prior = (*advisor)->Predict(job, SimTime());
  ASSERT_OK(prior);
  EXPECT_EQ(prior->duration, Duration::Hours(1));
  job.time_limit_min = 40;
  EXPECT_EQ((*advisor)->Predict(job, SimTime())->duration, Duration::Minutes(20));
  for (int m : {10, 12, 30}) (*advisor)->Observe(job, Duration::Minutes(m), JobState::kCompleted);
  (*advisor)->Observe(job, Duration::Minutes(1), JobState::kFailed);  // failures do not teach
  auto p = (*advisor)->Predict(job, SimTime());
  ASSERT_OK(p);
  EXPECT_EQ(p->duration, Duration::Minutes(12));
  EXPECT_NE(p->explanation.find("3 past run(s) of 'bert' by ann"), std::string::npos);
  job.user = "bob";
  EXPECT_NE((*advisor)->Predict(job, SimTime())->explanation.find("by any user"),
            std::string::npos);
}

}  // namespace
}  // namespace schedmate::service
