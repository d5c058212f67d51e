#include "service/pending_reasons.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedmate::service {
namespace {

const ReasonCatalogue& C() { return ReasonCatalogue::Builtin(); }

TEST(PendingReasons, ExplicitCodesHaveTheirKind) {
  EXPECT_EQ(C().Lookup("Resources").kind, ReasonKind::kResources);
  EXPECT_EQ(C().Lookup("Priority").kind, ReasonKind::kPriority);
  EXPECT_EQ(C().Lookup("Dependency").kind, ReasonKind::kDependency);
  EXPECT_EQ(C().Lookup("BeginTime").kind, ReasonKind::kBeginTime);
  EXPECT_EQ(C().Lookup("JobHeldUser").kind, ReasonKind::kHeld);
  EXPECT_EQ(C().Lookup("PartitionTimeLimit").kind, ReasonKind::kPartition);
  EXPECT_TRUE(C().Lookup("Resources").known);
  EXPECT_FALSE(C().Lookup("Resources").words.empty());
}

TEST(PendingReasons, LimitFamiliesAreReadFromTheirParts) {
  ReasonInfo grp = C().Lookup("AssocGrpGRES");
  EXPECT_TRUE(grp.known);
  EXPECT_EQ(grp.kind, ReasonKind::kLimitGroup);
  EXPECT_EQ(grp.scope, "Assoc");
  EXPECT_EQ(grp.limit, "Grp");
  EXPECT_EQ(grp.resource, "GRES");
  EXPECT_FALSE(grp.minutes);

  ReasonInfo wall = C().Lookup("QOSMaxWallDurationPerJobLimit");
  EXPECT_EQ(wall.kind, ReasonKind::kLimitJob);
  EXPECT_EQ(wall.scope, "QOS");
  EXPECT_EQ(wall.resource, "WallDuration");
  EXPECT_EQ(wall.per, "PerJob");

  ReasonInfo run = C().Lookup("AssocGrpCPURunMinutesLimit");
  EXPECT_EQ(run.kind, ReasonKind::kLimitGroup);
  EXPECT_EQ(run.resource, "CPU");
  EXPECT_TRUE(run.minutes);

  ReasonInfo account = C().Lookup("MaxGRESPerAccount");
  EXPECT_EQ(account.scope, "Account");
  EXPECT_EQ(account.kind, ReasonKind::kLimitGroup);

  ReasonInfo min = C().Lookup("QOSMinCPUsNotSatisfied");
  EXPECT_EQ(min.kind, ReasonKind::kLimitJob);
  EXPECT_EQ(min.limit, "Min");

  // A user's running-job cap and submit cap are aggregates, not per-request limits.
  EXPECT_EQ(C().Lookup("AssocMaxJobsLimit").kind, ReasonKind::kLimitGroup);
  EXPECT_EQ(C().Lookup("QOSMaxSubmitJobPerUserLimit").kind, ReasonKind::kLimitGroup);
  EXPECT_EQ(C().Lookup("QOSMaxGRESPerUser").kind, ReasonKind::kLimitGroup);
  EXPECT_EQ(C().Lookup("QOSMaxGRESPerNode").kind, ReasonKind::kLimitJob);
}

// Every reason code Slurm 22.05's squeue(1) and job_reason_string() name is explained.
TEST(PendingReasons, EverySlurmCodeIsKnown) {
  const std::vector<std::string> codes = {
      "None",
      "Prolog",
      "Priority",
      "Dependency",
      "Resources",
      "PartitionNodeLimit",
      "PartitionTimeLimit",
      "PartitionDown",
      "PartitionInactive",
      "JobHeldAdmin",
      "JobHeldUser",
      "BeginTime",
      "Licenses",
      "AssociationJobLimit",
      "AssociationResourceLimit",
      "AssociationTimeLimit",
      "Reservation",
      "ReqNodeNotAvail",
      "FrontEndDown",
      "NodeDown",
      "BadConstraints",
      "SystemFailure",
      "JobLaunchFailure",
      "NonZeroExitCode",
      "TimeLimit",
      "InactiveLimit",
      "InvalidAccount",
      "InvalidQOS",
      "QOSUsageThreshold",
      "QOSJobLimit",
      "QOSResourceLimit",
      "QOSTimeLimit",
      "BlockMaxError",
      "BlockFreeAction",
      "Cleaning",
      "QOSNotAllowed",
      "AccountNotAllowed",
      "DependencyNeverSatisfied",
      "QOSGrpCpuLimit",
      "QOSGrpCPUMinutesLimit",
      "QOSGrpCPURunMinutesLimit",
      "QOSGrpJobsLimit",
      "QOSGrpMemLimit",
      "QOSGrpNodeLimit",
      "QOSGrpSubmitJobsLimit",
      "QOSGrpWallLimit",
      "QOSMaxCpuPerJobLimit",
      "QOSMaxCpuMinutesPerJobLimit",
      "QOSMaxNodePerJobLimit",
      "QOSMaxWallDurationPerJobLimit",
      "QOSMaxCpuPerUserLimit",
      "QOSMaxJobsPerUserLimit",
      "QOSMaxNodePerUserLimit",
      "QOSMaxSubmitJobPerUserLimit",
      "QOSMinCpuNotSatisfied",
      "AssocGrpCpuLimit",
      "AssocGrpCPUMinutesLimit",
      "AssocGrpCPURunMinutesLimit",
      "AssocGrpJobsLimit",
      "AssocGrpMemLimit",
      "AssocGrpNodeLimit",
      "AssocGrpSubmitJobsLimit",
      "AssocGrpWallLimit",
      "AssocMaxJobsLimit",
      "AssocMaxCpuPerJobLimit",
      "AssocMaxCpuMinutesPerJobLimit",
      "AssocMaxNodePerJobLimit",
      "AssocMaxWallDurationPerJobLimit",
      "AssocMaxSubmitJobLimit",
      "JobHoldMaxRequeue",
      "JobArrayTaskLimit",
      "BurstBufferResources",
      "BurstBufferStageIn",
      "BurstBufferOperation",
      "PowerNotAvail",
      "PowerReserved",
      "AssocGrpUnknown",
      "AssocGrpUnknownMinutes",
      "AssocGrpUnknownRunMinutes",
      "AssocMaxUnknownPerJob",
      "AssocMaxUnknownPerNode",
      "AssocMaxUnknownMinutesPerJob",
      "AssocGrpGRES",
      "AssocGrpGRESMinutes",
      "AssocGrpGRESRunMinutes",
      "AssocMaxGRESPerJob",
      "AssocMaxGRESPerNode",
      "AssocMaxGRESMinutesPerJob",
      "AssocGrpLicense",
      "AssocGrpLicenseMinutes",
      "AssocGrpLicenseRunMinutes",
      "AssocMaxLicensePerJob",
      "AssocMaxLicenseMinutesPerJob",
      "AssocGrpBB",
      "AssocGrpBBMinutes",
      "AssocGrpBBRunMinutes",
      "AssocMaxBBPerJob",
      "AssocMaxBBPerNode",
      "AssocMaxBBMinutesPerJob",
      "AssocGrpEnergy",
      "AssocGrpEnergyMinutes",
      "AssocGrpEnergyRunMinutes",
      "AssocMaxEnergyPerJob",
      "AssocMaxEnergyPerNode",
      "AssocMaxEnergyMinutesPerJob",
      "AssocGrpBilling",
      "AssocGrpBillingMinutes",
      "AssocGrpBillingRunMinutes",
      "AssocMaxBillingPerJob",
      "AssocMaxBillingPerNode",
      "AssocMaxBillingMinutesPerJob",
      "AssocMaxCpuPerNode",
      "AssocMaxMemPerJob",
      "AssocMaxMemPerNode",
      "AssocMaxMemMinutesPerJob",
      "AssocGrpMemMinutes",
      "AssocGrpMemRunMinutes",
      "AssocGrpNodeMinutes",
      "AssocGrpNodeRunMinutes",
      "AssocMaxNodeMinutesPerJob",
      "QOSGrpGRES",
      "QOSGrpGRESMinutes",
      "QOSGrpGRESRunMinutes",
      "QOSMaxGRESPerJob",
      "QOSMaxGRESPerNode",
      "QOSMaxGRESPerUser",
      "QOSMaxGRESMinutesPerJob",
      "QOSMinGRES",
      "QOSGrpMemoryMinutes",
      "QOSGrpMemoryRunMinutes",
      "QOSMaxMemoryPerJob",
      "QOSMaxMemoryPerNode",
      "QOSMaxMemoryPerUser",
      "QOSMaxMemoryMinutesPerJob",
      "QOSMinMemory",
      "QOSMaxCpuPerNode",
      "QOSGrpBilling",
      "QOSMaxBillingPerUser",
      "QOSMinBilling",
      "QOSMinNode",
      "QOSMinBB",
      "QOSMinEnergy",
      "QOSMinLicense",
      "QOSMinUnknown",
      "MaxCpuPerAccount",
      "MaxGRESPerAccount",
      "MaxJobsPerAccount",
      "MaxMemoryPerAccount",
      "MaxNodePerAccount",
      "MaxSubmitJobsPerAccount",
      "MaxBillingPerAccount",
      "MaxBBPerAccount",
      "MaxEnergyPerAccount",
      "MaxLicensePerAccount",
      "MaxUnknownPerAccount",
      "MaxMemPerLimit",
      "AccountingPolicy",
      "PartitionConfig",
      "Constraints",
      "DeadLine",
      "FedJobLock",
      "ReservationDeleted",
      "SchedDefer",
      "OutOfMemory",
      "QOSMaxCpusMinsPerJobLimit",
      "QOSMaxNodesPerJobLimit",
      "AssocMaxCpusMinsPerJobLimit",
      "QOSGrpCPUMinsLimit",
      "QOSMinCPUsNotSatisfied",
  };
  for (const auto& code : codes) {
    ReasonInfo r = C().Lookup(code);
    EXPECT_TRUE(r.known) << code;
    EXPECT_NE(r.kind, ReasonKind::kUnknown) << code;
    EXPECT_EQ(r.code, code);
    EXPECT_FALSE(r.words.empty()) << code;
  }
}

TEST(PendingReasons, UnknownCodeIsShownAsIsAndDetailsAreKept) {
  ReasonInfo r = C().Lookup("SomethingSlurmAddsLater");
  EXPECT_FALSE(r.known);
  EXPECT_EQ(r.kind, ReasonKind::kUnknown);
  EXPECT_NE(r.words.find("SomethingSlurmAddsLater"), std::string::npos);
  // A family shape with an unknown resource is not guessed at.
  EXPECT_FALSE(C().Lookup("AssocGrpWidgets").known);

  ReasonInfo nodes = C().Lookup("ReqNodeNotAvail, UnavailableNodes:gpu1");
  EXPECT_EQ(nodes.code, "ReqNodeNotAvail");
  EXPECT_EQ(nodes.detail, "UnavailableNodes:gpu1");
  EXPECT_EQ(nodes.kind, ReasonKind::kNodes);
  EXPECT_EQ(C().Lookup("").kind, ReasonKind::kUnknown);
}

TEST(PendingReasons, ParseErrorsNameTheFileAndLine) {
  const std::string bad_kind =
      "version: 1\nexplicit:\n  - {code: X, kind: waiting, words: w}\n"
      "families: {scopes: {Assoc: a, QOS: q, Account: c}, resources: {GRES: g}}\n";
  auto r = ReasonCatalogue::Parse(bad_kind, "reasons.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reasons.yaml:3"), std::string::npos) << r.status().message();
  auto twice = ReasonCatalogue::Parse(
      "explicit:\n  - {code: X, kind: held, words: w}\n  - {code: X, kind: held, words: w}\n"
      "families: {scopes: {Assoc: a, QOS: q, Account: c}, resources: {GRES: g}}\n",
      "r.yaml");
  EXPECT_FALSE(twice.ok());
  auto no_scope = ReasonCatalogue::Parse(
      "explicit: []\nfamilies: {scopes: {Assoc: a}, resources: {GRES: g}}\n", "r.yaml");
  EXPECT_FALSE(no_scope.ok());
  EXPECT_FALSE(ReasonCatalogue::Parse("explicit: [\n", "r.yaml").ok());
  EXPECT_GT(C().explicit_count(), 40u);
}

}  // namespace
}  // namespace schedmate::service
