#include "service/companion.h"

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "service/basic_engines.h"
#include "service/fake_cluster.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

using schedmate::testing::TempDir;
using testing::FakeCluster;
using testing::FakeJob;

// Counts Predict() calls so tests can tell a reused prediction from a new one.
class CountingAdvisor final : public JobAdvisor {
 public:
  Result<Prediction> Predict(const JobContext& job, SimTime now) override {
    ++calls;
    last_script = job.script;
    return Prediction{Duration::Minutes(10),
                      Duration::Minutes(5),
                      Duration::Minutes(20),
                      0.6,
                      "test: 10 minutes for " + job.name,
                      "counting",
                      now};
  }
  void Observe(const JobContext&, Duration actual, JobState) override {
    observed.push_back(actual);
  }
  int calls = 0;
  std::string last_script;
  std::vector<Duration> observed;
};

// Truncates a log when Slurm is asked to requeue, as a real requeue does to a non-append log.
class TruncatingRunner final : public slurm::CommandRunner {
 public:
  TruncatingRunner(slurm::CommandRunner& target, std::string log)
      : target_(target), log_(std::move(log)) {}
  Result<slurm::CommandOutput> Run(const std::vector<std::string>& argv,
                                   Duration timeout) override {
    if (argv.size() >= 2 && argv[0] == "scontrol" && argv[1] == "requeue") {
      (void)WriteStringToFile(log_, "");
    }
    return target_.Run(argv, timeout);
  }

 private:
  slurm::CommandRunner& target_;
  std::string log_;
};

class CompanionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::SqliteDb::Open(dir_.File("state.db"));
    ASSERT_OK(db);
    db_ = std::move(*db);
    Reattach();
    cluster_.AddNode("gpu1", 8);
    cluster_.AddNode("gpu2", 8);
    config_.data_dir = dir_.path();
    config_.metrics_interval = Duration::Zero();
  }
  void Reattach() {
    auto history = store::SqliteHistoryStore::Attach(*db_);
    ASSERT_OK(history);
    history_ = std::move(*history);
    auto st = ServiceStore::Attach(*db_);
    ASSERT_OK(st);
    store_ = std::move(*st);
  }
  Companion& Make(slurm::CommandRunner* runner = nullptr) {
    backend_ = std::make_unique<slurm::SlurmBackend>(runner ? *runner : fake_,
                                                     slurm::SlurmBackendOptions{});
    companion_ = std::make_unique<Companion>(
        CompanionDeps{*backend_, *history_, *store_, advisor_, tracker_, diagnoser_, clock_},
        config_);
    EXPECT_OK(companion_->Load());
    return *companion_;
  }
  std::string Log(const std::string& name, const std::string& text) {
    std::string path = dir_.File(name);
    EXPECT_OK(WriteStringToFile(path, text));
    return path;
  }
  FakeJob& Running(const std::string& id, const std::string& node, const std::string& log) {
    FakeJob& j = cluster_.Job(id);
    j.id = id;
    j.name = "train-" + id;
    j.state = "RUNNING";
    j.node = node;
    j.submit = clock_.Now().seconds() - 100;
    j.start = clock_.Now().seconds() - 60;
    j.std_out = log;
    return j;
  }
  void Fail(FakeJob& j, int exit_code) {
    clock_.Advance(Duration::Seconds(5));  // ends after the service started watching
    j.state = "FAILED";
    j.exit_code = exit_code;
    j.end = clock_.Now().seconds() - 1;
  }
  std::vector<ActionRecord> Actions() { return store_->RecentActions(100).value_or({}); }

  TempDir dir_;
  std::unique_ptr<store::SqliteDb> db_;
  std::unique_ptr<store::SqliteHistoryStore> history_;
  std::unique_ptr<ServiceStore> store_;
  slurm::FakeCommandRunner fake_;
  FakeCluster cluster_{fake_};
  CountingAdvisor advisor_;
  BasicLogTracker tracker_;
  BasicFailureDiagnoser diagnoser_;
  FakeClock clock_{SimTime::FromSeconds(1'800'000'000)};
  ServiceConfig config_;
  std::unique_ptr<slurm::SlurmBackend> backend_;
  std::unique_ptr<Companion> companion_;
};

TEST_F(CompanionTest, NewJobGetsOnePredictionStoredWithExplanation) {
  FakeJob& j = cluster_.Job("5");
  j.id = "5";
  j.name = "resnet";
  j.script = "#!/bin/bash\npython train.py --epochs 3\n";
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  ASSERT_OK(c.Tick());
  EXPECT_EQ(advisor_.calls, 1);
  EXPECT_NE(advisor_.last_script.find("train.py"), std::string::npos);
  auto preds = history_->ListPredictions("5");
  ASSERT_OK(preds);
  ASSERT_EQ(preds->size(), 1u);
  EXPECT_EQ(preds->front().explanation, "test: 10 minutes for resnet");
  auto view = c.View();
  ASSERT_EQ(view->jobs.size(), 1u);
  ASSERT_TRUE(view->jobs[0].prediction.has_value());
  ASSERT_TRUE(view->jobs[0].start_estimate.has_value());
  EXPECT_EQ(view->jobs[0].start_estimate->start, clock_.Now());  // the cluster is empty
}

TEST_F(CompanionTest, RunningJobMetricsFromItsLog) {
  std::string log = Log("train.out", "step 10/100 loss 0.9\nstep 20/100 loss 0.7\n");
  Running("7", "gpu1", log);
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  auto view = c.View();
  ASSERT_EQ(view->jobs.size(), 1u);
  ASSERT_TRUE(view->jobs[0].metrics.has_value()) << view->jobs[0].log_problem;
  EXPECT_EQ(view->jobs[0].metrics->step, std::optional<int64_t>(20));
  EXPECT_NEAR(*view->jobs[0].metrics->progress, 0.2, 1e-9);
  auto series = store_->MetricSeries("7", 10);
  ASSERT_OK(series);
  EXPECT_EQ(series->size(), 1u);
}

TEST_F(CompanionTest, InfraFailureCapturesLogThenDrainsAndRequeues) {
  std::string log =
      Log("infra.out", "step 1\nNVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus\n");
  FakeJob& j = Running("9", "gpu2", log);
  cluster_.Render();
  TruncatingRunner truncating(fake_, log);
  Companion& c = Make(&truncating);
  ASSERT_OK(c.Tick());
  Fail(j, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  auto failures = store_->RecentFailures(10);
  ASSERT_OK(failures);
  ASSERT_EQ(failures->size(), 1u);
  EXPECT_EQ(failures->front().cls, "infra");
  EXPECT_EQ(failures->front().evidence_line, 2);
  // The copy was taken before the requeue truncated the original.
  auto copy = ReadFileToString(failures->front().log_copy);
  ASSERT_OK(copy);
  EXPECT_NE(copy->find("Xid"), std::string::npos);
  EXPECT_EQ(ReadFileToString(log).value_or("x"), "");
  auto drains = fake_.CallsStartingWith("scontrol update NodeName=gpu2 State=DRAIN");
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_NE(drains[0].find("Reason=schedmate: gpu_xid in job 9"), std::string::npos);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 9").size(), 1u);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=9 StartTime=now").size(), 1u);
  auto actions = Actions();
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[1].kind, "drain");
  EXPECT_EQ(actions[1].outcome, "done");
  EXPECT_EQ(actions[0].kind, "requeue");
  EXPECT_EQ(actions[0].outcome, "done");
  // The same run is never handled twice.
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue").size(), 1u);
  EXPECT_EQ(c.View()->failures_by_class.at("infra"), 1);
}

TEST_F(CompanionTest, AppFailureIsNotRequeuedAndSaysWhy) {
  std::string log = Log(
      "app.out", "Traceback (most recent call last):\n  File \"t.py\", line 3\nKeyError: 'lr'\n");
  FakeJob& j = Running("11", "gpu1", log);
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  Fail(j, 3);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  auto view = c.View();
  ASSERT_EQ(view->failures.size(), 1u);
  EXPECT_EQ(view->failures[0].cls, "app");
  EXPECT_NE(view->failures[0].reason.find("KeyError: 'lr'"), std::string::npos);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName").empty());
  ASSERT_EQ(view->actions.size(), 1u);
  EXPECT_EQ(view->actions[0].kind, "notify");
}

TEST_F(CompanionTest, DryRunRecordsButDoesNothing) {
  config_.dry_run = true;
  std::string log = Log("infra.out", "uncorrectable ECC error detected on GPU 3\n");
  FakeJob& j = Running("12", "gpu1", log);
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  Fail(j, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  auto actions = Actions();
  ASSERT_EQ(actions.size(), 2u);
  for (const auto& a : actions) {
    EXPECT_TRUE(a.dry_run);
    EXPECT_EQ(a.outcome, "dry-run");
    EXPECT_FALSE(a.reason.empty());
  }
}

TEST_F(CompanionTest, DrainCapAndRetryBudgetBoundActions) {
  config_.max_drained_nodes = 1;
  config_.retries_per_job = 1;
  std::string log1 = Log("a.out", "NVRM: Xid 48 on node\n");
  std::string log2 = Log("b.out", "NVRM: Xid 48 on node\n");
  FakeJob& a = Running("20", "gpu1", log1);
  FakeJob& b = Running("21", "gpu2", log2);
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  Fail(a, 1);
  Fail(b, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update NodeName=").size(), 1u);  // cap of 1
  // Job 20 fails again in a second run: its retry budget is spent.
  a.state = "RUNNING";
  a.start = clock_.Now().seconds() + 5;
  a.restarts = 1;
  a.end = 0;
  cluster_.Render();
  clock_.Advance(Duration::Seconds(30));
  ASSERT_OK(c.Tick());
  Fail(a, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 20").size(), 1u);
  bool budget_skip = false, cap_skip = false;
  for (const auto& act : Actions()) {
    if (act.kind == "requeue" && act.outcome == "skipped" &&
        act.detail.find("retry budget") != std::string::npos)
      budget_skip = true;
    if (act.kind == "drain" && act.outcome == "skipped" &&
        act.detail.find("cap reached") != std::string::npos)
      cap_skip = true;
  }
  EXPECT_TRUE(budget_skip);
  EXPECT_TRUE(cap_skip);
}

TEST_F(CompanionTest, StaleFailuresAreRecordedNotActedOn) {
  std::string log = Log("old.out", "NVRM: Xid 79\n");
  FakeJob& j = Running("30", "gpu1", log);
  Fail(j, 1);
  j.end = clock_.Now().seconds() - 3600;
  j.start = j.end - 60;
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  auto actions = Actions();
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_EQ(actions[0].outcome, "skipped");
}

TEST_F(CompanionTest, RestartLosesNothingAndDoesNotRepeat) {
  std::string log = Log("x.out", "NVRM: Xid 79\n");
  FakeJob& j = Running("40", "gpu1", log);
  FakeJob& p = cluster_.Job("41");
  p.id = "41";
  p.submit = clock_.Now().seconds();
  cluster_.Render();
  {
    Companion& c = Make();
    ASSERT_OK(c.Tick());
    Fail(j, 1);
    cluster_.Render();
    ASSERT_OK(c.Tick());
  }
  EXPECT_EQ(advisor_.calls, 2);
  companion_.reset();
  Reattach();  // a new process would reopen the same file
  Companion& again = Make();
  auto view = again.View();
  EXPECT_EQ(view->failures.size(), 1u);
  EXPECT_EQ(view->actions.size(), 2u);
  ASSERT_OK(again.Tick());
  EXPECT_EQ(advisor_.calls, 2);  // predictions were reused, not redone
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue").size(), 1u);
  auto finished = history_->FindJob("40");
  ASSERT_OK(finished);
  ASSERT_TRUE(finished->has_value());
  EXPECT_TRUE((*finished)->finish.has_value());
}

TEST_F(CompanionTest, SlurmDownKeepsLastViewAndReportsIt) {
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  fake_.SetError({"squeue", "--json"}, Status::Unavailable("slurmctld down"));
  Status s = c.Tick();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_FALSE(c.View()->slurm_ok);
  EXPECT_NE(c.View()->last_error.find("slurmctld down"), std::string::npos);
}

TEST_F(CompanionTest, SubmitEstimateFollowsPolicy) {
  config_.submit_policy = SubmitPolicy::kSet;
  cluster_.Render();
  Companion& c = Make();
  JobContext job;
  job.name = "resnet";
  auto advice = c.EstimateSubmission(job);
  ASSERT_OK(advice);
  ASSERT_TRUE(advice->set_time_limit_min.has_value());
  EXPECT_EQ(*advice->set_time_limit_min, 30);  // ceil(1.5 x 20 min)
  EXPECT_NE(advice->message.find("time limit set to 30 min"), std::string::npos);
}

}  // namespace
}  // namespace schedmate::service
