// The failure adapter hands the recovery planner's whole plan to the service: delay, attempt,
// exclusions and checkpoint of a requeue, the hold and operator notice after the budget.

#include "service/component_adapters.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "core/file_util.h"
#include "store/history_store.h"
#include "testing/test_util.h"

namespace schedmate::service {
namespace {

constexpr const char* kXidLog =
    "step 1200/5000 loss 0.31\n"
    "Saved checkpoint to ckpt/step_1200.pt\n"
    "step 1250/5000 loss 0.30\n"
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, GPU has fallen off the bus\n"
    "RuntimeError: CUDA error: unspecified launch failure\n";

std::vector<PlannedAction::Kind> Kinds(const Diagnosis& d) {
  std::vector<PlannedAction::Kind> out;
  for (const auto& a : d.plan) out.push_back(a.kind);
  return out;
}

TEST(FailureHandlerDiagnoser, RequeueCarriesBackoffAttemptExclusionAndCheckpoint) {
  auto diag = FailureHandlerDiagnoser::Create(Duration::Seconds(30), Duration::Minutes(10));
  ASSERT_OK(diag);
  FailedJob job{"12", "train", "FAILED", 1, 0, {"gpu3"}, Duration::Minutes(20)};
  job.retries_used = 1;
  job.retry_budget = 3;
  auto d = (*diag)->Diagnose(job, kXidLog);
  ASSERT_OK(d);
  EXPECT_EQ(d->cls, FailureClass::kInfra);
  EXPECT_EQ(d->checkpoint, std::optional<std::string>("ckpt/step_1200.pt"));
  ASSERT_EQ(Kinds(*d), (std::vector<PlannedAction::Kind>{PlannedAction::Kind::kDrainNode,
                                                         PlannedAction::Kind::kRequeue,
                                                         PlannedAction::Kind::kNotifyUser}));
  EXPECT_EQ(d->plan[0].node, "gpu3");
  const PlannedAction& rq = d->plan[1];
  EXPECT_EQ(rq.delay, std::optional<Duration>(Duration::Seconds(60)));  // 30 s x 2^1
  EXPECT_EQ(rq.attempt, 2);
  EXPECT_EQ(rq.exclude_nodes, std::vector<std::string>{"gpu3"});
  EXPECT_EQ(rq.checkpoint, std::optional<std::string>("ckpt/step_1200.pt"));
  EXPECT_NE(rq.reason.find("retry 2 of 3 from checkpoint ckpt/step_1200.pt"), std::string::npos)
      << rq.reason;
}

TEST(FailureHandlerDiagnoser, WithoutACheckpointInTheLogTheJobDirectoryIsSearched) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.File("out/ckpt"));
  ASSERT_OK(WriteStringToFile(dir.File("out/ckpt/step_800.pt"), "old"));
  ASSERT_OK(WriteStringToFile(dir.File("out/ckpt/step_900.pt"), "new"));
  std::filesystem::last_write_time(
      dir.File("out/ckpt/step_800.pt"),
      std::filesystem::last_write_time(dir.File("out/ckpt/step_900.pt")) - std::chrono::hours(1));
  // "ckpt" looks like a checkpoint too, and the atomic writes (rename) made it the newest entry.
  std::filesystem::last_write_time(
      dir.File("out/ckpt"), std::filesystem::last_write_time(dir.File("out/ckpt/step_800.pt")));
  auto diag = FailureHandlerDiagnoser::Create(Duration::Seconds(30), Duration::Minutes(10));
  ASSERT_OK(diag);
  FailedJob job{"13", "train", "FAILED", 1, 0, {"gpu3"}, Duration::Minutes(20)};
  job.retry_budget = 3;
  job.work_dir = dir.File("out");
  // No "saved checkpoint" line: the newest checkpoint of the job's directory.
  auto d =
      (*diag)->Diagnose(job, "step 900/5000 loss 0.3\nNVRM: Xid 79, GPU has fallen off the bus\n");
  ASSERT_OK(d);
  EXPECT_EQ(d->checkpoint, std::optional<std::string>(dir.File("out/ckpt/step_900.pt")));
  ASSERT_GE(d->plan.size(), 2u);
  EXPECT_EQ(d->plan[1].checkpoint, d->checkpoint);
  // A checkpoint the log names wins over the directory's newest file.
  auto named = (*diag)->Diagnose(job, kXidLog);
  ASSERT_OK(named);
  EXPECT_EQ(named->checkpoint, std::optional<std::string>("ckpt/step_1200.pt"));
}

TEST(FailureHandlerDiagnoser, BudgetUsedMeansHoldAndOperatorNotice) {
  auto diag = FailureHandlerDiagnoser::Create(Duration::Seconds(30), Duration::Minutes(10));
  ASSERT_OK(diag);
  FailedJob job{"12", "train", "FAILED", 1, 0, {"gpu3"}, Duration::Minutes(20)};
  job.retries_used = 2;
  job.retry_budget = 2;
  auto d = (*diag)->Diagnose(job, kXidLog);
  ASSERT_OK(d);
  ASSERT_EQ(Kinds(*d), (std::vector<PlannedAction::Kind>{PlannedAction::Kind::kDrainNode,
                                                         PlannedAction::Kind::kHold,
                                                         PlannedAction::Kind::kNotifyAdmin}));
  EXPECT_NE(d->plan[1].reason.find("retry budget of 2 exhausted"), std::string::npos)
      << d->plan[1].reason;
  EXPECT_NE(d->plan[2].reason.find("job 12 failed repeatedly"), std::string::npos);
}

TEST(FailureHandlerDiagnoser, ApplicationFailureOnlyNotifiesWithHint) {
  auto diag = FailureHandlerDiagnoser::Create();
  ASSERT_OK(diag);
  FailedJob job{"13", "train", "FAILED", 1, 0, {"gpu1"}, Duration::Minutes(2)};
  job.retry_budget = 3;
  auto d = (*diag)->Diagnose(
      job, "Traceback (most recent call last):\n  File \"t.py\", line 3\nKeyError: 'lr'\n");
  ASSERT_OK(d);
  EXPECT_EQ(d->cls, FailureClass::kApp);
  ASSERT_EQ(Kinds(*d), std::vector<PlannedAction::Kind>{PlannedAction::Kind::kNotifyUser});
}

}  // namespace
}  // namespace schedmate::service

namespace schedmate::service {
namespace {

// The advisor adapter serves POST /v1/estimate, which anyone who can reach the API may call.
class AdvisorJobAdvisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto history = store::SqliteHistoryStore::Open(":memory:");
    ASSERT_OK(history);
    history_ = std::move(*history);
    auto advisor = AdvisorJobAdvisor::Create(*history_);
    ASSERT_OK(advisor);
    advisor_ = std::move(*advisor);
    job_.job_id = "1";
    job_.gpus = 4;
    job_.nodes = 1;
  }
  std::unique_ptr<store::SqliteHistoryStore> history_;
  std::unique_ptr<AdvisorJobAdvisor> advisor_;
  JobContext job_;
};

TEST_F(AdvisorJobAdvisorTest, HostileNumbersInAScriptAreIgnoredNotCast) {
  job_.name = "ft";
  for (const char* steps : {"8888888888888888881000", "1e308", "-5", "nan"}) {
    SCOPED_TRACE(steps);
    job_.script = std::string("#!/bin/sh\ndeepspeed --num_gpus 4 finetune.py --max_steps ") +
                  steps + " --global_batch_size 99999999999999999999\n";
    auto p = advisor_->Predict(job_, SimTime());
    ASSERT_OK(p);  // under UBSan a float-to-int cast out of range would abort here
    EXPECT_GT(p->duration.micros(), 0);
  }
}

TEST_F(AdvisorJobAdvisorTest, WithoutAWorkDirNoFileIsReadFromTheServicesDirectory) {
  testing::TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("cfg.yaml"), "model: secretmodelname\n"));
  job_.name = "train";
  job_.script = "#!/bin/sh\npython train.py --config cfg.yaml\n";
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto without = advisor_->Predict(job_, SimTime());
  job_.work_dir = dir.path();
  auto with = advisor_->Predict(job_, SimTime());
  std::filesystem::current_path(cwd);
  ASSERT_OK(without);
  ASSERT_OK(with);
  EXPECT_EQ(without->fingerprint.find("secretmodelname"), std::string::npos)
      << without->fingerprint;
  // The same file is read when it is in the job's own directory.
  EXPECT_NE(with->fingerprint.find("secretmodelname"), std::string::npos) << with->fingerprint;
}

}  // namespace
}  // namespace schedmate::service
