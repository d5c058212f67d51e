#include "service/companion.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/file_util.h"
#include "service/component_adapters.h"
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
    if (auto it = by_name.find(job.name); it != by_name.end()) {
      return Prediction{it->second, it->second / 2, it->second * 2, 0.6, "test", "counting", now};
    }
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
  std::map<std::string, Duration> by_name;  // predictions by job name (else 10 minutes)
  std::string last_script;
  std::vector<Duration> observed;
};

// Returns a fixed diagnosis (a planner's output as the component adapter would give it).
class ScriptedDiagnoser final : public FailureDiagnoser {
 public:
  Result<Diagnosis> Diagnose(const FailedJob& job, std::string_view) override {
    seen.push_back(job);
    return diagnosis;
  }
  Diagnosis diagnosis;
  std::vector<FailedJob> seen;
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
  Companion& Make(slurm::CommandRunner* runner = nullptr, FailureDiagnoser* diagnoser = nullptr) {
    backend_ = std::make_unique<slurm::SlurmBackend>(runner ? *runner : fake_,
                                                     slurm::SlurmBackendOptions{});
    // The service's diagnoser, with the backoff of this test's configuration (as MakeEngines).
    diagnoser_ = std::move(
        FailureHandlerDiagnoser::Create(config_.backoff_base, config_.backoff_cap, nullptr)
            .value());
    companion_ = std::make_unique<Companion>(
        CompanionDeps{*backend_, *history_, *store_, advisor_, tracker_,
                      diagnoser != nullptr ? *diagnoser : *diagnoser_, clock_},
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
  // Job `id` on `node` with `log_text` as its log (file `log_name`): a fresh companion sees it
  // running (one tick), then it fails with `exit_code`; the next Tick() handles the failure.
  struct SeenFailure {
    FakeJob& job;
    Companion& companion;
    std::string log;
  };
  SeenFailure SeenRunningThenFailed(const std::string& id, const std::string& node,
                                    const std::string& log_name, const std::string& log_text,
                                    int exit_code) {
    std::string log = Log(log_name, log_text);
    FakeJob& j = Running(id, node, log);
    cluster_.Render();
    Companion& c = Make();
    EXPECT_OK(c.Tick());
    Fail(j, exit_code);
    cluster_.Render();
    return {j, c, log};
  }
  std::vector<ActionRecord> Actions() { return store_->RecentActions(100).value_or({}); }
  // The job runs again (a new run after a requeue) and fails again.
  void Rerun(Companion& c, FakeJob& j, int restarts) {
    j.state = "RUNNING";
    j.start = clock_.Now().seconds() + 5;
    j.restarts = restarts;
    j.end = 0;
    cluster_.Render();
    clock_.Advance(Duration::Seconds(30));
    ASSERT_OK(c.Tick());
    Fail(j, 1);
    cluster_.Render();
    ASSERT_OK(c.Tick());
  }
  std::vector<ActionRecord> ActionsOf(const std::string& job, ActionKind kind) {
    std::vector<ActionRecord> out;
    for (auto& a : Actions())
      if (a.job_id == job && a.kind == kind) out.push_back(a);
    std::reverse(out.begin(), out.end());  // oldest first
    return out;
  }

  TempDir dir_;
  std::unique_ptr<store::SqliteDb> db_;
  std::unique_ptr<store::SqliteHistoryStore> history_;
  std::unique_ptr<ServiceStore> store_;
  slurm::FakeCommandRunner fake_;
  FakeCluster cluster_{fake_};
  CountingAdvisor advisor_;
  TrackerLogTracker tracker_{Duration::Minutes(10)};
  std::unique_ptr<FailureHandlerDiagnoser> diagnoser_;
  FakeClock clock_{SimTime::FromSeconds(1'800'000'000)};
  ServiceConfig config_;
  std::unique_ptr<slurm::SlurmBackend> backend_;
  std::unique_ptr<Companion> companion_;
};

// While a job waits on an association limit, the companion reads the associations (sacctmgr,
// at most once a minute) into its view, where why names the limit's value.
TEST_F(CompanionTest, AssociationsAreReadWhileAJobWaitsOnAnAssocLimit) {
  FakeJob& j = cluster_.Job("5");
  j.id = "5";
  j.name = "big";
  cluster_.Render();
  fake_.SetOutput({"scontrol", "show", "config"}, "ClusterName             = c\n");
  fake_.SetOutput({"sacctmgr"},
                  "Cluster|Account|User|Partition|ParentName|GrpTRES\n"
                  "c|root||||\nc|root|root|||gres/gpu=3\n");
  Companion& c = Make();
  ASSERT_OK(c.Tick());  // waiting on Resources: no sacctmgr
  EXPECT_TRUE(fake_.CallsStartingWith("sacctmgr").empty());
  EXPECT_TRUE(c.View()->assocs.empty());
  j.reason = "AssocGrpGRES";
  cluster_.Render();
  clock_.Advance(Duration::Seconds(2));
  ASSERT_OK(c.Tick());
  ASSERT_EQ(fake_.CallsStartingWith("sacctmgr -P show assoc where cluster=c").size(), 1u);
  ASSERT_EQ(c.View()->assocs.size(), 2u);
  EXPECT_EQ(c.View()->assocs[1].limits.at("GrpTRES"), "gres/gpu=3");
  EXPECT_TRUE(fake_.CallsStartingWith("sacctmgr -P show qos").empty());
  clock_.Advance(Duration::Seconds(30));
  ASSERT_OK(c.Tick());  // within the minute: not asked again
  EXPECT_EQ(fake_.CallsStartingWith("sacctmgr").size(), 1u);
  clock_.Advance(Duration::Seconds(31));
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("sacctmgr").size(), 2u);
}

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
  EXPECT_EQ(failures->front().cls, FailureClass::kInfra);
  EXPECT_EQ(failures->front().evidence_line, 2);
  // The copy was taken before the requeue truncated the original.
  auto copy = ReadFileToString(failures->front().log_copy);
  ASSERT_OK(copy);
  EXPECT_NE(copy->find("Xid"), std::string::npos);
  EXPECT_EQ(ReadFileToString(log).value_or("x"), "");
  // Another user's output: the copy is the service's alone (0600 in a 0700 directory), however
  // readable the original was.
  struct stat st {};
  ASSERT_EQ(chmod(log.c_str(), 0644), 0);
  ASSERT_EQ(stat(failures->front().log_copy.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(stat(config_.CapturedLogDir().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  auto drains = fake_.CallsStartingWith("scontrol update NodeName=gpu2 State=DRAIN");
  ASSERT_EQ(drains.size(), 1u);
  EXPECT_NE(drains[0].find("Reason=schedmate: " + failures->front().category + " in job 9"),
            std::string::npos)
      << drains[0];
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 9").size(), 1u);
  // Released after the default backoff (60 s), avoiding the drained node.
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=9 ExcNodeList=gpu2").size(), 1u);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=9 StartTime=now+60").size(), 1u);
  auto actions = Actions();
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[2].kind, ActionKind::kDrainNode);
  EXPECT_EQ(actions[2].outcome, ActionOutcome::kDone);
  EXPECT_EQ(actions[2].node, "gpu2");
  EXPECT_EQ(actions[1].kind, ActionKind::kRequeue);
  EXPECT_EQ(actions[1].outcome, ActionOutcome::kDone);
  EXPECT_EQ(actions[1].attempt, 1);
  EXPECT_EQ(actions[1].budget, 1);
  EXPECT_EQ(actions[1].delay, Duration::Seconds(60));
  EXPECT_EQ(actions[1].release_at, clock_.Now() + Duration::Seconds(60));
  EXPECT_EQ(actions[1].exclude_nodes, std::vector<std::string>{"gpu2"});
  EXPECT_EQ(actions[0].kind, ActionKind::kNotifyUser);
  EXPECT_EQ(actions[0].requeue_outcome, ActionOutcome::kDone);
  // The same run is never handled twice.
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue").size(), 1u);
  EXPECT_EQ(c.View()->failures_by_class.at(FailureClass::kInfra), 1);
  EXPECT_EQ(c.View()->failures_by_engine.at("builtin"), 1);
  // A restarted service counts it once too (its counters are rebuilt from the store).
  Companion& again = Make();
  EXPECT_EQ(again.View()->failures_by_class.at(FailureClass::kInfra), 1);
  EXPECT_EQ(again.View()->failures_by_engine.at("builtin"), 1);
}

TEST_F(CompanionTest, AppFailureIsNotRequeuedAndSaysWhy) {
  auto [j, c, log] = SeenRunningThenFailed(
      "11", "gpu1", "app.out",
      "Traceback (most recent call last):\n  File \"t.py\", line 3\nKeyError: 'lr'\n", 3);
  ASSERT_OK(c.Tick());
  auto view = c.View();
  ASSERT_EQ(view->failures.size(), 1u);
  EXPECT_EQ(view->failures[0].cls, FailureClass::kApp);
  EXPECT_NE(view->failures[0].reason.find("KeyError: 'lr'"), std::string::npos);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName").empty());
  ASSERT_EQ(view->actions.size(), 1u);
  EXPECT_EQ(view->actions[0].kind, ActionKind::kNotifyUser);
}

TEST_F(CompanionTest, DryRunRecordsButDoesNothing) {
  config_.dry_run = true;
  auto [j, c, log] = SeenRunningThenFailed("12", "gpu1", "infra.out",
                                           "uncorrectable ECC error detected on GPU 3\n", 1);
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol hold").empty());
  auto actions = Actions();
  ASSERT_EQ(actions.size(), 3u);
  for (const auto& a : actions) {
    EXPECT_TRUE(a.dry_run);
    EXPECT_FALSE(a.reason.empty());
  }
  // The full plan is visible: what would be drained, and when and where the retry would run.
  EXPECT_EQ(actions[2].outcome, ActionOutcome::kDryRun);
  EXPECT_EQ(actions[2].kind, ActionKind::kDrainNode);
  EXPECT_EQ(actions[2].node, "gpu1");
  EXPECT_EQ(actions[1].outcome, ActionOutcome::kDryRun);
  EXPECT_EQ(actions[1].kind, ActionKind::kRequeue);
  EXPECT_EQ(actions[1].attempt, 1);
  EXPECT_EQ(actions[1].budget, 1);
  EXPECT_EQ(actions[1].delay, Duration::Minutes(1));
  EXPECT_EQ(actions[1].exclude_nodes, std::vector<std::string>{"gpu1"});
  EXPECT_EQ(actions[1].release_at, clock_.Now() + Duration::Minutes(1));
  // Notices are records, so "done" even in a dry run.
  EXPECT_EQ(actions[0].kind, ActionKind::kNotifyUser);
  EXPECT_EQ(actions[0].outcome, ActionOutcome::kDone);
}

TEST_F(CompanionTest, ActionSinkSeesEveryOutcomeAndPolicyIsSummarised) {
  config_.dry_run = true;
  std::string log = Log("infra.out", "NVRM: Xid 79\n");
  FakeJob& j = Running("14", "gpu1", log);
  cluster_.Render();
  Companion& c = Make();
  std::vector<std::pair<ActionKind, ActionOutcome>> seen;
  c.SetActionSink([&](const ActionRecord& a) { seen.emplace_back(a.kind, a.outcome); });
  ASSERT_OK(c.Tick());
  Fail(j, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  EXPECT_EQ(seen, (std::vector<std::pair<ActionKind, ActionOutcome>>{
                      {ActionKind::kDrainNode, ActionOutcome::kDryRun},
                      {ActionKind::kRequeue, ActionOutcome::kDryRun},
                      {ActionKind::kNotifyUser, ActionOutcome::kDone}}));
  EXPECT_EQ(c.ActionPolicySummary(),
            "drain on (at most 1 node(s)), requeue on (1 per job, backoff 1m..30m, exclude "
            "failed nodes on), hold after budget on, hold unclear failures off, job comments on; "
            "DRY RUN: actions are recorded, never executed");
}

TEST_F(CompanionTest, RecordShowsTheExclusionSlurmActuallyGot) {
  auto [j, c, log] = SeenRunningThenFailed("15", "gpu2", "w.out", "NVRM: Xid 79\n", 1);
  // The job was submitted with `sbatch -w gpu2`: it cannot be kept off gpu2.
  fake_.SetOutput({"scontrol", "show", "job", "-d", "-o", "15"},
                  "JobId=15 JobName=train-15 UserId=root(0) JobState=FAILED Restarts=0 "
                  "ReqNodeList=gpu2 ExcNodeList=(null) NodeList=gpu2 StdOut=" +
                      log + "\n");
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update JobId=15 ExcNodeList").empty());
  auto requeues = ActionsOf("15", ActionKind::kRequeue);
  ASSERT_EQ(requeues.size(), 1u);
  EXPECT_EQ(requeues[0].outcome, ActionOutcome::kDone);
  EXPECT_TRUE(requeues[0].exclude_nodes.empty());  // in the database too
  EXPECT_EQ(requeues[0].attempt, 1);
}

TEST_F(CompanionTest, StaleBacklogIsRecordedButNotAnnounced) {
  std::string log = Log("old.out", "NVRM: Xid 79\n");
  FakeJob& j = Running("16", "gpu1", log);
  Fail(j, 1);
  j.end = clock_.Now().seconds() - 3600;
  j.start = j.end - 60;
  cluster_.Render();
  Companion& c = Make();
  int announced = 0;
  c.SetActionSink([&](const ActionRecord&) { ++announced; });
  ASSERT_OK(c.Tick());
  EXPECT_EQ(announced, 0);
  auto actions = Actions();
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[1].skip_reason, "stale");
  EXPECT_EQ(actions[2].skip_reason, "stale");
}

TEST_F(CompanionTest, DryRunShowsTheHoldAfterTheBudget) {
  config_.dry_run = true;
  config_.retries_per_job = 0;
  auto [j, c, log] = SeenRunningThenFailed("13", "gpu1", "infra.out", "NVRM: Xid 79 on gpu1\n", 1);
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeuehold").empty());
  std::vector<std::pair<ActionKind, ActionOutcome>> kinds;
  for (const auto& a : Actions()) {
    kinds.emplace_back(a.kind, a.outcome);
    EXPECT_EQ(a.job_id, "13");
    EXPECT_TRUE(a.dry_run);
  }
  // The budget of 0 is used: no requeue is planned, the job would be held.
  EXPECT_EQ(kinds, (std::vector<std::pair<ActionKind, ActionOutcome>>{
                       {ActionKind::kNotifyAdmin, ActionOutcome::kDone},
                       {ActionKind::kHold, ActionOutcome::kDryRun},
                       {ActionKind::kDrainNode, ActionOutcome::kDryRun}}));
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
  // The budget is used: the job is requeued held for a person, with the reason on record.
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeuehold 20").size(), 1u);
  auto comments = fake_.CallsStartingWith("scontrol update JobId=20 Comment=schedmate: held:");
  EXPECT_EQ(comments.size(), 1u);
  bool budget_hold = false, cap_skip = false, admin = false, kept_a_node = false;
  for (const auto& act : Actions()) {
    if (act.kind == ActionKind::kHold && act.outcome == ActionOutcome::kDone && act.job_id == "20")
      budget_hold = true;
    if (act.kind == ActionKind::kNotifyAdmin && act.job_id == "20") admin = true;
    if (act.kind == ActionKind::kDrainNode && act.outcome == ActionOutcome::kSkipped &&
        act.skip_reason == "drain_cap")
      cap_skip = true;
    // Job 21's node stayed in service (cap) and gpu1 is drained: excluding gpu2 as well would
    // leave it nowhere to run, so it is not excluded, and the record says why.
    if (act.kind == ActionKind::kRequeue && act.job_id == "21" &&
        act.outcome == ActionOutcome::kDone && act.exclude_nodes.empty())
      kept_a_node = true;
  }
  EXPECT_TRUE(budget_hold);
  EXPECT_TRUE(admin);
  EXPECT_TRUE(cap_skip);
  EXPECT_TRUE(kept_a_node);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update JobId=21 ExcNodeList").empty());
}

TEST_F(CompanionTest, NodeResumedOutsideTheServiceFreesTheDrainCap) {
  std::string log1 = Log("a.out", "NVRM: Xid 48\n");
  FakeJob& a = Running("23", "gpu1", log1);
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  Fail(a, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());  // drains gpu1 (cap 1)
  ASSERT_EQ(fake_.CallsStartingWith("scontrol update NodeName=gpu1 State=DRAIN").size(), 1u);
  // sinfo shows gpu1 drained, then an operator resumes it with scontrol (not through the API).
  cluster_.SetDrained("gpu1", "schedmate: gpu_xid in job 23");
  cluster_.Render();
  ASSERT_OK(c.Tick());
  cluster_.AddNode("gpu1", 8);  // resumed
  cluster_.Render();
  ASSERT_OK(c.Tick());
  std::string log2 = Log("b.out", "NVRM: Xid 48\n");
  FakeJob& b = Running("24", "gpu2", log2);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  Fail(b, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update NodeName=gpu2 State=DRAIN").size(), 1u);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=24 ExcNodeList=gpu2").size(), 1u);
}

TEST_F(CompanionTest, NoHoldAfterBudgetWhenTurnedOff) {
  config_.retries_per_job = 0;
  config_.hold_after_budget = false;
  std::string log = Log("a.out", "NVRM: Xid 48\n");
  FakeJob& a = Running("22", "gpu1", log);
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  Fail(a, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  bool skipped = false;
  for (const auto& act : Actions())
    if (act.kind == ActionKind::kHold && act.outcome == ActionOutcome::kSkipped &&
        act.skip_reason == "disabled")
      skipped = true;
  EXPECT_TRUE(skipped);
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
  ASSERT_EQ(actions.size(), 3u);
  EXPECT_EQ(actions[0].kind, ActionKind::kNotifyUser);  // the user is still told
  EXPECT_EQ(actions[1].outcome, ActionOutcome::kSkipped);
  EXPECT_EQ(actions[2].outcome, ActionOutcome::kSkipped);
  EXPECT_EQ(actions[1].skip_reason, "stale");
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
  EXPECT_EQ(view->actions.size(), 3u);
  ASSERT_OK(again.Tick());
  EXPECT_EQ(advisor_.calls, 2);  // predictions were reused, not redone
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue").size(), 1u);
  auto finished = history_->FindJob("40");
  ASSERT_OK(finished);
  ASSERT_TRUE(finished->has_value());
  EXPECT_TRUE((*finished)->finish.has_value());
}

TEST_F(CompanionTest, RequeueBackoffDoublesUpToTheCapAndAvoidsTheNode) {
  config_.retries_per_job = 3;
  config_.backoff_base = Duration::Seconds(30);
  config_.backoff_cap = Duration::Seconds(100);
  auto [j, c, log] = SeenRunningThenFailed("60", "gpu1", "r.out", "NVRM: Xid 79 on gpu1\n", 1);
  ASSERT_OK(c.Tick());
  Rerun(c, j, 1);
  Rerun(c, j, 2);
  Rerun(c, j, 3);  // budget of 3 used: held
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=60 StartTime="),
            (std::vector<std::string>{"scontrol update JobId=60 StartTime=now+30",
                                      "scontrol update JobId=60 StartTime=now+60",
                                      "scontrol update JobId=60 StartTime=now+100"}));
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=60 ExcNodeList=gpu1").size(), 3u);
  auto requeues = ActionsOf("60", ActionKind::kRequeue);
  ASSERT_EQ(requeues.size(), 3u);
  const Duration delays[] = {Duration::Seconds(30), Duration::Seconds(60), Duration::Seconds(100)};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(requeues[i].outcome, ActionOutcome::kDone);
    EXPECT_EQ(requeues[i].attempt, i + 1);
    EXPECT_EQ(requeues[i].budget, 3);
    EXPECT_EQ(requeues[i].delay, delays[i]);
    ASSERT_TRUE(requeues[i].release_at.has_value());
    EXPECT_EQ(*requeues[i].release_at - requeues[i].at, delays[i]);
    EXPECT_EQ(requeues[i].exclude_nodes, std::vector<std::string>{"gpu1"});
  }
  auto holds = ActionsOf("60", ActionKind::kHold);
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].outcome, ActionOutcome::kDone);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeuehold 60").size(), 1u);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 60").size(), 3u);
}

TEST_F(CompanionTest, DelayedRequeueIsNudgedOnceItsReleaseTimeHasPassed) {
  auto [j, c, log] = SeenRunningThenFailed("59", "gpu1", "d.out", "NVRM: Xid 79\n", 1);
  ASSERT_OK(c.Tick());
  ASSERT_EQ(fake_.CallsStartingWith("scontrol update JobId=59 StartTime=now+60").size(), 1u);
  // What Slurm shows after the requeue: pending for BeginTime until now + 60 s.
  j.state = "PENDING";
  j.reason = "BeginTime";
  j.restarts = 1;
  j.node.clear();
  j.start = j.end = 0;
  j.eligible = clock_.Now().seconds() + 60;
  cluster_.Render();
  clock_.Advance(Duration::Seconds(30));
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=59 StartTime=").size(), 1u);
  clock_.Advance(Duration::Seconds(31));
  ASSERT_OK(c.Tick());  // released by Slurm's clock, still waiting for its scheduling cycle
  auto starts = fake_.CallsStartingWith("scontrol update JobId=59 StartTime=");
  EXPECT_EQ(starts, (std::vector<std::string>{"scontrol update JobId=59 StartTime=now+60",
                                              "scontrol update JobId=59 StartTime=now"}));
  ASSERT_OK(c.Tick());  // once
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=59 StartTime=").size(), 2u);
}

TEST_F(CompanionTest, CheckpointReachesRecordsNoticeAndComment) {
  auto [j, c, log] =
      SeenRunningThenFailed("61", "gpu2", "c.out",
                            "step 1200 loss 0.31\nSaved checkpoint to ckpt/step_1200.pt\n"
                            "step 1250 loss 0.30\nNVRM: Xid 79 GPU has fallen off the bus\n",
                            1);
  ASSERT_OK(c.Tick());
  auto view = c.View();
  ASSERT_EQ(view->failures.size(), 1u);
  EXPECT_EQ(view->failures[0].checkpoint, "ckpt/step_1200.pt");
  auto requeues = ActionsOf("61", ActionKind::kRequeue);
  ASSERT_EQ(requeues.size(), 1u);
  EXPECT_EQ(requeues[0].checkpoint, "ckpt/step_1200.pt");
  auto notices = ActionsOf("61", ActionKind::kNotifyUser);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].checkpoint, "ckpt/step_1200.pt");
  EXPECT_EQ(notices[0].requeue_outcome, ActionOutcome::kDone);
  auto comment = fake_.CallsStartingWith("scontrol update JobId=61 Comment=");
  ASSERT_EQ(comment.size(), 1u);
  EXPECT_NE(comment[0].find("ckpt/step_1200.pt"), std::string::npos) << comment[0];
  // With annotate_comment off the Comment is left alone.
  auto stored = store_->RecentFailures(1);
  ASSERT_OK(stored);
  EXPECT_EQ(stored->front().checkpoint, "ckpt/step_1200.pt");  // survives in the database
}

TEST_F(CompanionTest, CommentLeftAloneWhenAnnotationIsOff) {
  config_.annotate_comment = false;
  auto [j, c, log] = SeenRunningThenFailed("62", "gpu2", "c.out",
                                           "Saved checkpoint to ckpt/a.pt\nNVRM: Xid 79\n", 1);
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 62").size(), 1u);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update JobId=62 Comment").empty());
}

TEST_F(CompanionTest, NeverInterruptsARunSlurmAlreadyRestarted) {
  auto [j, c, log] = SeenRunningThenFailed("63", "gpu1", "n.out", "NVRM: Xid 79\n", 1);
  // slurmctld already requeued and restarted it by the time the service acts.
  fake_.SetOutput({"scontrol", "show", "job", "-d", "-o", "63"},
                  "JobId=63 JobName=train-63 UserId=root(0) JobState=RUNNING Restarts=1 "
                  "NodeList=gpu2 StdOut=" +
                      log + "\n");
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  auto requeues = ActionsOf("63", ActionKind::kRequeue);
  ASSERT_EQ(requeues.size(), 1u);
  EXPECT_EQ(requeues[0].outcome, ActionOutcome::kSkipped);
  EXPECT_EQ(requeues[0].skip_reason, "job_active");
  auto notices = ActionsOf("63", ActionKind::kNotifyUser);
  ASSERT_EQ(notices.size(), 1u);
  // The notice follows what happened, not what the planner expected.
  EXPECT_EQ(notices[0].requeue_outcome, ActionOutcome::kSkipped);
}

TEST_F(CompanionTest, NoticeSaysTheRequeueWasSkippedOrOnlySimulated) {
  config_.requeue_on_infra = false;
  auto [j, c, log] = SeenRunningThenFailed("65", "gpu1", "s.out", "NVRM: Xid 79\n", 1);
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  auto notices = ActionsOf("65", ActionKind::kNotifyUser);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].requeue_outcome, ActionOutcome::kSkipped);
  auto requeues = ActionsOf("65", ActionKind::kRequeue);
  ASSERT_EQ(requeues.size(), 1u);
  EXPECT_EQ(requeues[0].skip_reason, "disabled");
}

TEST_F(CompanionTest, DryRunNoticeDoesNotClaimARequeue) {
  config_.dry_run = true;
  auto [j, c, log] = SeenRunningThenFailed("66", "gpu1", "d.out", "NVRM: Xid 79\n", 1);
  ASSERT_OK(c.Tick());
  auto notices = ActionsOf("66", ActionKind::kNotifyUser);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].requeue_outcome, ActionOutcome::kDryRun);
}

// Defect: with the job's user empty or unknown, the log was read with the service's own uid as
// the expected owner, so a root service captured (and served) any root-owned file.
TEST_F(CompanionTest, LogOfAJobWhoseUserDoesNotResolveIsNeitherTrackedNorCaptured) {
  for (const std::string user : {"", "schedmate-no-such-user-4711"}) {
    SCOPED_TRACE("user '" + user + "'");
    std::string id = user.empty() ? "67" : "68";
    std::string log = Log("u" + id + ".out", "step 5/10\nNVRM: Xid 79\n");
    FakeJob& j = Running(id, "gpu1", log);
    j.user = user;
    cluster_.Render();
    Companion& c = Make();
    ASSERT_OK(c.Tick());
    auto view = c.View();
    ASSERT_FALSE(view->jobs.empty());
    for (const auto& v : view->jobs) {
      if (v.job.id != id) continue;
      EXPECT_TRUE(v.log_path.empty());
      EXPECT_FALSE(v.metrics.has_value());
    }
    Fail(j, 1);
    cluster_.Render();
    ASSERT_OK(c.Tick());
    auto failures = store_->RecentFailures(10);
    ASSERT_OK(failures);
    ASSERT_FALSE(failures->empty());
    EXPECT_EQ(failures->front().job_id, id);
    EXPECT_TRUE(failures->front().log_copy.empty());
    EXPECT_NE(failures->front().reason.find("[log:"), std::string::npos);
    cluster_.Remove(id);
  }
}

TEST_F(CompanionTest, CrashBetweenRecordAndActIsMarkedInterruptedNeverRepeated) {
  std::string log = Log("k.out", "NVRM: Xid 79\n");
  FakeJob& j = Running("64", "gpu1", log);
  cluster_.Render();
  {
    Companion& c = Make();
    ASSERT_OK(c.Tick());
  }
  companion_.reset();
  // What a process killed mid-plan leaves behind: the run marked handled, the failure and the
  // requeue recorded as planned, never executed.
  Fail(j, 1);
  cluster_.Render();
  std::string run = fmt::format("64@{}", j.start);
  ASSERT_OK(store_->MarkRunHandled(run, "64", "FAILED"));
  ActionRecord planned;
  planned.at = clock_.Now();
  planned.job_id = "64";
  planned.kind = ActionKind::kRequeue;
  planned.reason = "infrastructure failure (gpu_xid)";
  planned.outcome = ActionOutcome::kPlanned;
  planned.detail = "would requeue, attempt 1/1, starts in 1m, excluding gpu1";
  ASSERT_OK(store_->AddAction(planned));
  Reattach();
  Companion& again = Make();
  auto view = again.View();
  ASSERT_EQ(view->actions.size(), 1u);
  EXPECT_EQ(view->actions[0].outcome, ActionOutcome::kInterrupted);
  EXPECT_NE(view->actions[0].detail.find(planned.detail), std::string::npos);  // kept
  ASSERT_OK(again.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update").empty());
  // The interrupted requeue may have happened: it counts against the budget.
  EXPECT_EQ(store_->CountRequeues("64").value_or(0), 1);
  Rerun(again, j, 1);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue 64").empty());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeuehold 64").size(), 1u);
}

// A store that refuses the action records (a full disk, a read-only file) while the rest of the
// database still works: the failure is recorded, but no action runs without its record.
TEST_F(CompanionTest, ActionWhoseRecordFailsIsNotExecuted) {
  auto [j, c, log] = SeenRunningThenFailed("69", "gpu2", "f.out", "NVRM: Xid 79\n", 1);
  ASSERT_OK(
      db_->Exec("CREATE TEMP TRIGGER refuse_actions BEFORE INSERT ON service_actions "
                "BEGIN SELECT RAISE(FAIL, 'disk I/O error (injected)'); END;"));
  std::vector<std::pair<ActionKind, ActionOutcome>> seen;
  c.SetActionSink([&](const ActionRecord& a) { seen.emplace_back(a.kind, a.outcome); });
  ASSERT_OK(c.Tick());
  // Diagnosed and recorded as a failure; neither drained nor requeued.
  ASSERT_EQ(store_->RecentFailures(10).value_or({}).size(), 1u);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update JobId=69").empty());
  EXPECT_TRUE(Actions().empty());
  EXPECT_EQ(seen, (std::vector<std::pair<ActionKind, ActionOutcome>>{
                      {ActionKind::kDrainNode, ActionOutcome::kNotRecorded},
                      {ActionKind::kRequeue, ActionOutcome::kNotRecorded},
                      {ActionKind::kNotifyUser, ActionOutcome::kNotRecorded}}));
  auto view = c.View();
  ASSERT_EQ(view->actions.size(), 3u);
  EXPECT_EQ(view->actions[0].outcome, ActionOutcome::kNotRecorded);
  EXPECT_EQ(view->actions_by_kind.at({ActionKind::kRequeue, ActionOutcome::kNotRecorded}), 1);
  EXPECT_EQ(view->store.errors, 3);
  EXPECT_TRUE(view->store.degraded);
  EXPECT_EQ(view->store.last_error_at, clock_.Now());
  EXPECT_NE(view->store.last_error.find("injected"), std::string::npos) << view->store.last_error;
  // Ten minutes without another store error: healthy again (the count stays).
  clock_.Advance(Duration::Minutes(11));
  ASSERT_OK(c.Tick());
  EXPECT_FALSE(c.View()->store.degraded);
  EXPECT_EQ(c.View()->store.errors, 3);
}

// The whole file read-only: not even the run can be marked handled, so nothing acts on it; once
// the store writes again, the run is handled then (nothing lost, nothing done twice).
TEST_F(CompanionTest, ReadOnlyStoreDefersTheRunUntilItCanBeRecorded) {
  auto [j, c, log] = SeenRunningThenFailed("70", "gpu2", "g.out", "NVRM: Xid 79\n", 1);
  ASSERT_OK(db_->Exec("PRAGMA query_only = ON"));
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeue").empty());
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName").empty());
  EXPECT_GE(c.View()->store.errors, 1);
  EXPECT_TRUE(c.View()->store.degraded);
  ASSERT_OK(db_->Exec("PRAGMA query_only = OFF"));
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 70").size(), 1u);
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 70").size(), 1u);
  EXPECT_EQ(ActionsOf("70", ActionKind::kRequeue).at(0).outcome, ActionOutcome::kDone);
}

// The action ran but its outcome could not be written: the row stays "planned", so the next
// start marks it interrupted, and it is never run again.
TEST_F(CompanionTest, OutcomeThatCannotBeWrittenIsInterruptedAtRestartNeverRepeated) {
  auto [j, c, log] = SeenRunningThenFailed("71", "gpu2", "h.out", "NVRM: Xid 79\n", 1);
  ASSERT_OK(
      db_->Exec("CREATE TEMP TRIGGER refuse_outcomes BEFORE UPDATE ON service_actions "
                "BEGIN SELECT RAISE(FAIL, 'disk I/O error (injected)'); END;"));
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 71").size(), 1u);
  EXPECT_EQ(c.View()->store.errors, 2);  // drain and requeue outcomes
  auto requeues = ActionsOf("71", ActionKind::kRequeue);
  ASSERT_EQ(requeues.size(), 1u);
  EXPECT_EQ(requeues[0].outcome, ActionOutcome::kPlanned);
  ASSERT_OK(db_->Exec("DROP TRIGGER refuse_outcomes"));
  companion_.reset();
  Reattach();
  Companion& again = Make();
  EXPECT_EQ(ActionsOf("71", ActionKind::kRequeue).at(0).outcome, ActionOutcome::kInterrupted);
  ASSERT_OK(again.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeue 71").size(), 1u);
  EXPECT_EQ(again.View()->store.errors, 0);
}

TEST_F(CompanionTest, PlannerDelayAndUnknownHoldAreHonoured) {
  ScriptedDiagnoser scripted;
  Diagnosis& d = scripted.diagnosis;
  d.cls = FailureClass::kInfra;
  d.category = "preemption";
  d.reason = "preempted";
  PlannedAction rq;
  rq.kind = PlannedAction::Kind::kRequeue;
  rq.reason = "preempted: retry at once";
  rq.delay = Duration::Zero();
  d.plan.push_back(rq);
  config_.retries_per_job = 2;
  std::string log = Log("p.out", "step 3\n");
  FakeJob& j = Running("65", "gpu1", log);
  cluster_.Render();
  Companion& c = Make(nullptr, &scripted);
  ASSERT_OK(c.Tick());
  Fail(j, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  ASSERT_EQ(scripted.seen.size(), 1u);
  EXPECT_EQ(scripted.seen[0].retries_used, 0);
  EXPECT_EQ(scripted.seen[0].retry_budget, 2);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update JobId=65 StartTime="),
            std::vector<std::string>{"scontrol update JobId=65 StartTime=now"});
  auto requeue = ActionsOf("65", ActionKind::kRequeue).at(0);
  EXPECT_EQ(requeue.attempt, 1);
  EXPECT_EQ(requeue.budget, 2);
  EXPECT_EQ(requeue.delay, Duration::Zero());
  EXPECT_EQ(requeue.release_at, requeue.at);
  // An unclear failure: the planner asks for a hold and an operator notice.
  d = Diagnosis();
  d.cls = FailureClass::kUnknown;
  d.reason = "unclear";
  PlannedAction hold;
  hold.kind = PlannedAction::Kind::kHold;
  hold.reason = "failure cause unclear; held for a person to look";
  d.plan.push_back(hold);
  PlannedAction admin;
  admin.kind = PlannedAction::Kind::kNotifyAdmin;
  admin.reason = hold.reason;
  admin.hint = "label it with schedmate diagnose --learn";
  d.plan.push_back(admin);
  Rerun(c, j, 1);
  auto holds = ActionsOf("65", ActionKind::kHold);
  ASSERT_EQ(holds.size(), 1u);
  EXPECT_EQ(holds[0].outcome, ActionOutcome::kSkipped);  // actions.hold_unknown defaults to false
  EXPECT_EQ(holds[0].skip_reason, "disabled");
  auto admins = ActionsOf("65", ActionKind::kNotifyAdmin);
  ASSERT_EQ(admins.size(), 1u);
  EXPECT_EQ(admins[0].outcome, ActionOutcome::kDone);
  EXPECT_NE(admins[0].reason.find(admin.hint), std::string::npos);  // the planner's next step
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol requeuehold").empty());
}

TEST_F(CompanionTest, UnknownHoldWhenAllowed) {
  config_.hold_unknown = true;
  ScriptedDiagnoser scripted;
  scripted.diagnosis.cls = FailureClass::kUnknown;
  PlannedAction hold;
  hold.kind = PlannedAction::Kind::kHold;
  hold.reason = "failure cause unclear";
  scripted.diagnosis.plan.push_back(hold);
  std::string log = Log("u.out", "step 3\n");
  FakeJob& j = Running("66", "gpu1", log);
  cluster_.Render();
  Companion& c = Make(nullptr, &scripted);
  ASSERT_OK(c.Tick());
  Fail(j, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  EXPECT_EQ(fake_.CallsStartingWith("scontrol requeuehold 66").size(), 1u);
  EXPECT_EQ(ActionsOf("66", ActionKind::kHold).at(0).outcome, ActionOutcome::kDone);
}

TEST_F(CompanionTest, DiagnosesAreCountedByEngineLiveAndAfterARestart) {
  ScriptedDiagnoser scripted;
  scripted.diagnosis.cls = FailureClass::kApp;
  scripted.diagnosis.reason = "KeyError";
  scripted.diagnosis.engine = "failure-handler llm (qwen2.5-7b)";
  std::string log = Log("e.out", "step 3\n");
  FakeJob& a = Running("67", "gpu1", log);
  FakeJob& b = Running("68", "gpu2", log);
  cluster_.Render();
  Companion& c = Make(nullptr, &scripted);
  ASSERT_OK(c.Tick());
  Fail(a, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  scripted.diagnosis.engine = "failure-handler builtin (llm unavailable: connection refused)";
  Fail(b, 1);
  cluster_.Render();
  ASSERT_OK(c.Tick());
  ASSERT_EQ(scripted.seen.size(), 2u);
  std::map<std::string, int64_t> want = {{"llm", 1}, {"llm_fallback", 1}};
  EXPECT_EQ(c.View()->failures_by_engine, want);
  EXPECT_EQ(c.View()->failures_by_class.at(FailureClass::kApp), 2);
  Companion& again = Make(nullptr, &scripted);
  EXPECT_EQ(again.View()->failures_by_engine, want);
  EXPECT_EQ(again.View()->failures_by_class.at(FailureClass::kApp), 2);
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
}

}  // namespace
}  // namespace schedmate::service

namespace schedmate::service {
namespace {

// Order mode on a full two-node cluster: "long" (60 min) queued before "short" (1 min).
class CompanionOrderTest : public CompanionTest {
 protected:
  void SetUp() override {
    CompanionTest::SetUp();
    fake_.SetOutput({"scontrol", "show", "config"},
                    "Configuration data as of now\nPriorityType            = priority/basic\n");
    config_.scheduling_mode = SchedulingMode::kOrder;
    advisor_.by_name["long"] = Duration::Minutes(60);
    advisor_.by_name["short"] = Duration::Minutes(1);
    for (const char* id : {"1", "2"}) {
      FakeJob& r = Running(id, std::string("gpu") + id, "");
      r.gpus_per_node = 8;
    }
    Pending("10", "long", kBasic - 10);
    Pending("11", "short", kBasic - 11);
    cluster_.Render();
  }
  static constexpr int64_t kBasic = 4294901760;
  FakeJob& Pending(const std::string& id, const std::string& name, int64_t priority) {
    FakeJob& j = cluster_.Job(id);
    j.id = id;
    j.name = name;
    j.gpus_per_node = 8;
    j.reason = "Priority";
    j.submit = clock_.Now().seconds() - 30 + std::stoll(id);
    j.priority = priority;
    return j;
  }
  // Job id -> priority from the "scontrol update JobId=N Priority=P" calls so far.
  std::map<std::string, int64_t> Updates() {
    std::map<std::string, int64_t> out;
    for (const auto& call : fake_.CallsStartingWith("scontrol update JobId=")) {
      auto at = call.find(" Priority=");
      if (at == std::string::npos) continue;
      std::string id = call.substr(22, call.find(' ', 22) - 22);
      out[id] = std::stoll(call.substr(at + 10));
    }
    return out;
  }
  // What Slurm would show after the updates.
  void Apply(const std::map<std::string, int64_t>& updates) {
    for (const auto& [id, p] : updates) cluster_.Job(id).priority = p;
    cluster_.Render();
  }
};

TEST_F(CompanionOrderTest, ShortJobGetsTheHigherPriorityWithItsReasonRecorded) {
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  auto u = Updates();
  ASSERT_EQ(u.size(), 2u);
  EXPECT_GT(u["11"], u["10"]);
  EXPECT_GE(u["10"], config_.order.priority_min);
  auto rec = store_->FindPriority("10");
  ASSERT_OK(rec);
  ASSERT_TRUE(rec->has_value());
  EXPECT_EQ((*rec)->original, kBasic - 10);
  EXPECT_EQ((*rec)->ours, u["10"]);
  auto actions = ActionsOf("11", ActionKind::kPriority);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].outcome, ActionOutcome::kDone);
  auto v = c.View();
  EXPECT_EQ(v->scheduling.mode, SchedulingMode::kOrder);
  ASSERT_EQ(v->scheduling.ranking.size(), 2u);
  EXPECT_EQ(v->scheduling.ranking[0].job_id, "11");
  EXPECT_EQ(v->scheduling.changes_total, 2);
  // Slurm took the values: the next pass changes nothing.
  Apply(u);
  fake_.ClearCalls();
  ASSERT_OK(c.Tick());
  EXPECT_TRUE(Updates().empty());
  // Restore puts both originals back.
  auto r = c.RestorePriorities("test");
  ASSERT_OK(r);
  EXPECT_EQ(r->restored, 2);
  auto back = Updates();
  EXPECT_EQ(back["10"], kBasic - 10);
  EXPECT_EQ(back["11"], kBasic - 11);
  EXPECT_EQ(ActionsOf("10", ActionKind::kRestore).size(), 1u);
}

TEST_F(CompanionOrderTest, DryRunRecordsThePlanOnceAndChangesNothing) {
  config_.dry_run = true;
  Companion& c = Make();
  for (int i = 0; i < 3; ++i) ASSERT_OK(c.Tick());
  EXPECT_TRUE(Updates().empty());
  auto actions = ActionsOf("11", ActionKind::kPriority);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(actions[0].outcome, ActionOutcome::kDryRun);
  EXPECT_EQ(c.View()->scheduling.ranking.at(0).job_id, "11");
  auto r = c.RestorePriorities("test");
  ASSERT_OK(r);
  EXPECT_EQ(r->restored, 0);
  EXPECT_TRUE(Updates().empty());
}

TEST_F(CompanionOrderTest, NiceAndExplicitPrioritiesAreLeftAlone) {
  Pending("12", "short", kBasic - 12).nice = 100;
  Pending("13", "short", 5000);  // far below priority/basic's numbering: set by someone
  cluster_.Render();
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  auto u = Updates();
  EXPECT_EQ(u.count("12"), 0u);
  EXPECT_EQ(u.count("13"), 0u);
  EXPECT_EQ(u.size(), 2u);
  auto left = c.View()->scheduling.left_alone;
  EXPECT_EQ(left.count("12"), 1u);
  EXPECT_EQ(left.count("13"), 1u);
}

TEST_F(CompanionOrderTest, RestartAfterAKillPutsOriginalsBackAtLoad) {
  {
    Companion& c = Make();
    ASSERT_OK(c.Tick());
    Apply(Updates());
  }
  companion_.reset();  // killed: no restore ran
  fake_.ClearCalls();
  config_.scheduling_mode = SchedulingMode::kAdvise;
  Companion& again = Make();  // Load() restores
  auto back = Updates();
  EXPECT_EQ(back["10"], kBasic - 10);
  EXPECT_EQ(back["11"], kBasic - 11);
  EXPECT_EQ(again.RestoredAtLoad().restored, 2);
  Apply(back);
  fake_.ClearCalls();
  ASSERT_OK(again.Tick());
  EXPECT_TRUE(Updates().empty());  // advise mode: nothing more
}

TEST_F(CompanionOrderTest, PriorityChangedBySomeoneElseIsNotRestoredOrReordered) {
  Companion& c = Make();
  ASSERT_OK(c.Tick());
  auto u = Updates();
  u["10"] = 4294967000;  // an operator's scontrol top-like value
  Apply(u);
  fake_.ClearCalls();
  ASSERT_OK(c.Tick());
  EXPECT_EQ(Updates().count("10"), 0u);
  EXPECT_EQ(c.View()->scheduling.left_alone.count("10"), 1u);
  auto r = c.RestorePriorities("test");
  ASSERT_OK(r);
  EXPECT_EQ(r->skipped, 1);
  EXPECT_EQ(r->restored, 1);
  EXPECT_EQ(Updates().count("10"), 0u);
}

}  // namespace
}  // namespace schedmate::service
