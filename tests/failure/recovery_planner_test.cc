#include "failure/recovery_planner.h"

#include <gtest/gtest.h>

#include "failure/diagnosis_json.h"

namespace schedmate::failure {
namespace {

Diagnosis Infra(std::string category, bool drain) {
  Diagnosis d;
  d.root_cause = LogLine{12, "RuntimeError: CUDA error: uncorrectable ECC error encountered"};
  d.label = FailureLabel::kInfrastructure;
  d.category = std::move(category);
  d.confidence = 0.95;
  d.drain_suspect = drain;
  d.hint = "run diagnostics";
  return d;
}

TEST(RecoveryPlannerTest, DrainsTheNodeNamedInTheLogAndRequeuesFromCheckpoint) {
  Diagnosis d = Infra("gpu_hardware", true);
  d.nodes = {"gpu-b07"};
  d.checkpoint = "/ckpt/run1/step_900.pt";
  JobContext job{"4411", {"gpu-b06", "gpu-b07"}, 0, std::nullopt};
  RecoveryPlan plan = PlanRecovery(d, job, RecoveryPolicy{});
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].kind, RecoveryAction::Kind::kDrainNode);
  EXPECT_EQ(plan[0].node, "gpu-b07");
  EXPECT_NE(plan[0].reason.find("gpu_hardware"), std::string::npos);
  EXPECT_EQ(plan[1].kind, RecoveryAction::Kind::kRequeue);
  EXPECT_EQ(plan[1].checkpoint, "/ckpt/run1/step_900.pt");
  EXPECT_EQ(plan[1].attempt, 1);
  EXPECT_EQ(plan[1].delay, Duration::Seconds(60));
  EXPECT_EQ(plan[1].exclude_nodes, std::vector<std::string>{"gpu-b07"});
  EXPECT_EQ(plan[2].kind, RecoveryAction::Kind::kNotifyUser);
}

TEST(RecoveryPlannerTest, NodeFromJobListOnlyForSingleNodeJobs) {
  Diagnosis d = Infra("gpu_hardware", true);
  RecoveryPlan single = PlanRecovery(d, JobContext{"1", {"n5"}, 0, std::nullopt}, {});
  EXPECT_EQ(single[0].kind, RecoveryAction::Kind::kDrainNode);
  EXPECT_EQ(single[0].node, "n5");
  RecoveryPlan multi = PlanRecovery(d, JobContext{"1", {"n5", "n6"}, 0, std::nullopt}, {});
  EXPECT_EQ(multi[0].kind, RecoveryAction::Kind::kNotifyAdmin);
  EXPECT_NE(multi[0].reason.find("n5,n6"), std::string::npos);
  EXPECT_EQ(multi[1].kind, RecoveryAction::Kind::kRequeue);
}

TEST(RecoveryPlannerTest, JobDirCheckpointWinsAndBackoffDoublesUpToCap) {
  Diagnosis d = Infra("network_ib_nccl", false);
  d.checkpoint = "/from/log.pt";
  JobContext job{"2", {}, 2, std::string("/from/dir/ckpt-3")};
  RecoveryPolicy policy;
  RecoveryPlan plan = PlanRecovery(d, job, policy);
  ASSERT_EQ(plan[0].kind, RecoveryAction::Kind::kRequeue);
  EXPECT_EQ(plan[0].checkpoint, "/from/dir/ckpt-3");
  EXPECT_EQ(plan[0].delay, Duration::Seconds(240));
  EXPECT_EQ(plan[0].attempt, 3);
  policy.max_infra_retries = 10;
  job.restarts = 9;
  EXPECT_EQ(PlanRecovery(d, job, policy)[0].delay, Duration::Minutes(30));
  d.category = "preemption";
  EXPECT_EQ(PlanRecovery(d, job, policy)[0].delay, Duration::Zero());
}

TEST(RecoveryPlannerTest, RetryBudgetExhaustedHoldsForAPerson) {
  Diagnosis d = Infra("nccl_timeout", false);
  RecoveryPlan plan = PlanRecovery(d, JobContext{"77", {}, 3, std::nullopt}, RecoveryPolicy{});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].kind, RecoveryAction::Kind::kHold);
  EXPECT_NE(plan[0].reason.find("3 requeues"), std::string::npos);
  EXPECT_EQ(plan[1].kind, RecoveryAction::Kind::kNotifyAdmin);
  for (const auto& a : plan) EXPECT_NE(a.kind, RecoveryAction::Kind::kRequeue);
}

TEST(RecoveryPlannerTest, ApplicationFailureIsNeverRequeued) {
  Diagnosis d;
  d.root_cause = LogLine{5, "torch.OutOfMemoryError: CUDA out of memory."};
  d.label = FailureLabel::kApplication;
  d.category = "cuda_oom";
  d.explanation = "The model needs more GPU memory.";
  d.hint = "Lower the per-device batch size or enable gradient checkpointing.";
  d.nodes = {"gpu1"};
  RecoveryPlan plan = PlanRecovery(d, JobContext{"9", {"gpu1"}, 0, std::nullopt}, {});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].kind, RecoveryAction::Kind::kNotifyUser);
  EXPECT_NE(plan[0].hint.find("batch size"), std::string::npos);
  EXPECT_NE(plan[0].reason.find("cuda_oom"), std::string::npos);
}

TEST(RecoveryPlannerTest, UnknownHoldsWithoutDrainingAndNoFailureDoesNothing) {
  Diagnosis d;
  d.root_cause = LogLine{2, "ERROR: job failed"};
  d.label = FailureLabel::kUnknown;
  RecoveryPlan plan = PlanRecovery(d, JobContext{"3", {"n1"}, 0, std::nullopt}, {});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].kind, RecoveryAction::Kind::kHold);
  EXPECT_EQ(plan[1].kind, RecoveryAction::Kind::kNotifyAdmin);
  // The operator's notice says what the hold says (the hold's reason, not an empty one).
  EXPECT_NE(plan[0].reason.find("ERROR: job failed"), std::string::npos) << plan[0].reason;
  EXPECT_EQ(plan[1].reason, plan[0].reason);
  RecoveryPlan none = PlanRecovery(Diagnosis{}, JobContext{}, {});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].kind, RecoveryAction::Kind::kNotifyUser);
}

TEST(RecoveryPlannerTest, PlanJson) {
  Diagnosis d = Infra("gpu_hardware", true);
  d.nodes = {"g1"};
  nlohmann::json j = PlanToJson(PlanRecovery(d, JobContext{"1", {"g1"}, 0, std::nullopt}, {}));
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j[0]["action"], "drain_node");
  EXPECT_EQ(j[0]["node"], "g1");
  EXPECT_EQ(j[1]["action"], "requeue");
  EXPECT_EQ(j[1]["delay_s"], 60);
  EXPECT_TRUE(j[1]["checkpoint"].is_null());
  EXPECT_EQ(j[1]["exclude_nodes"], nlohmann::json::array({"g1"}));
}

}  // namespace
}  // namespace schedmate::failure
