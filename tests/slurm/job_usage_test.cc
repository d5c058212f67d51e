#include "slurm/job_usage.h"

#include <gtest/gtest.h>

#include "slurm/assoc.h"
#include "slurm/fake_command_runner.h"
#include "slurm/qos.h"
#include "slurm/slurm_backend.h"

namespace schedmate::slurm {
namespace {

// Captured from the local Slurm 22.05 (scripts/slurm-local.sh, jobacct_gather/linux).
constexpr const char* kSstat =
    "12.extern|cpu=00:00:00,energy=0,fs/disk=2332,mem=0,pages=0,vmem=0\n"
    "12.batch|cpu=00:01:30,energy=0,fs/disk=15431,mem=3196K,pages=0,vmem=5512K\n"
    "12.0|cpu=1-00:00:02.500,energy=0,fs/disk=0,mem=2G,pages=0,vmem=0\n";

TEST(JobUsage, SstatStepsWithCpuTimeAndMemory) {
  auto steps = ParseSstat(kSstat);
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_EQ((*steps)[1].step, "12.batch");
  EXPECT_DOUBLE_EQ(*(*steps)[1].cpu_seconds, 90.0);
  EXPECT_EQ(*(*steps)[1].mem_bytes, 3196 * 1024);
  EXPECT_DOUBLE_EQ(*(*steps)[2].cpu_seconds, 86402.5);
  EXPECT_EQ(*(*steps)[2].mem_bytes, int64_t{2} << 30);
  EXPECT_EQ(*(*steps)[0].mem_bytes, 0);
}

TEST(JobUsage, MalformedSstatNamesTheLine) {
  auto bad = ParseSstat("12.batch|cpu=00:00:01,mem=1K\n12.0|cpu=soon,mem=1K\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("sstat:2"), std::string::npos);
  EXPECT_FALSE(ParseSstat("no separator here").ok());
  EXPECT_FALSE(ParseSstat("1.0|mem=12Q").ok());
  EXPECT_TRUE(ParseSstat("\n\n")->empty());
}

TEST(JobUsage, CpuTimeAndSizeForms) {
  EXPECT_DOUBLE_EQ(*ParseCpuTime("01:02:03"), 3723);
  EXPECT_DOUBLE_EQ(*ParseCpuTime("02:03.5"), 123.5);
  EXPECT_DOUBLE_EQ(*ParseCpuTime("2-00:00:00"), 172800);
  EXPECT_FALSE(ParseCpuTime("").has_value());
  EXPECT_FALSE(ParseCpuTime("1:2:3:4").has_value());
  EXPECT_FALSE(ParseCpuTime("-5").has_value());
  EXPECT_EQ(*ParseMemorySize("1.5M"), 1572864);
  EXPECT_EQ(*ParseMemorySize("100"), 100);
  EXPECT_EQ(*ParseMemorySize("100", 'M'), 100 << 20);
  EXPECT_FALSE(ParseMemorySize("1e30T").has_value());
  EXPECT_EQ(*TresMemoryMib("cpu=8,mem=16000M,node=1"), 16000);
  EXPECT_EQ(*TresMemoryMib("cpu=8,mem=2G"), 2048);
  EXPECT_FALSE(TresMemoryMib("cpu=1,node=1,billing=1").has_value());
}

TEST(JobUsage, GpuIndicesPerNodeFromScontrolDetail) {
  const char* detail =
      "JobId=12 JobName=wrap\n"
      "   TRES=cpu=4,node=2,billing=4,gres/gpu=8\n"
      "     Nodes=gpu1 CPU_IDs=0-3 Mem=0 GRES=gpu:4(IDX:0-3)\n"
      "     Nodes=gpu2 CPU_IDs=0-3 Mem=0 GRES=gpu:a100:2(IDX:4,6),gpu:v100:1(IDX:0)\n"
      "   TresPerNode=gres:gpu:4\n";
  auto idx = ParseJobGpuIndices(detail);
  ASSERT_EQ(idx.size(), 2u);
  EXPECT_EQ(idx["gpu1"], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(idx["gpu2"], (std::vector<int>{4, 6, 0}));
  auto range = ParseJobGpuIndices("     Nodes=gpu[1-2] CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)\n");
  ASSERT_EQ(range.size(), 2u);
  EXPECT_EQ(range["gpu2"], (std::vector<int>{0, 1}));
  EXPECT_TRUE(ParseJobGpuIndices("     Nodes=gpu1 CPU_IDs=0 Mem=0 GRES=\n").empty());
}

TEST(JobUsage, BackendRunsSstatScontrolAndSrunInTheJob) {
  FakeCommandRunner runner;
  SlurmBackend backend(runner, {});
  runner.SetOutput({"sstat"}, kSstat);
  runner.SetOutput({"scontrol", "show", "job", "-d"},
                   "     Nodes=gpu1 CPU_IDs=0-3 Mem=0 GRES=gpu:2(IDX:2-3)\n");
  runner.SetOutput({"srun"}, "2, 50, 100\n");
  auto steps = backend.JobStepUsage("12");
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(steps->size(), 3u);
  auto idx = backend.JobGpuIndices("12");
  ASSERT_TRUE(idx.ok());
  EXPECT_EQ((*idx)["gpu1"], (std::vector<int>{2, 3}));
  auto out = backend.RunInJob("12", "gpu1", {"nvidia-smi", "-L"}, Duration::Seconds(5));
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(runner.CallsStartingWith("srun").size(), 1u);
  EXPECT_EQ(runner.CallsStartingWith("srun")[0],
            "srun --jobid=12 --overlap -N1 -n1 -w gpu1 --quiet nvidia-smi -L");
  EXPECT_EQ(backend.JobStepUsage("12; rm").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(backend.RunInJob("12", "gpu1 x", {"true"}, Duration::Seconds(1)).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(Qos, SacctmgrLimitsAndTresCounts) {
  auto q = ParseSacctmgrQos(
      "Name|GrpTRES|MaxTRESPU|MaxWall\n"
      "normal|||\n"
      "gpu3||gres/gpu=3,cpu=16|1-00:00:00\n"
      "big|gres/gpu:a100=4,gres/gpu:v100=2||\n");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_EQ(q->size(), 3u);
  EXPECT_EQ((*q)[0].name, "big");  // sorted by name
  EXPECT_EQ((*q)[1].name, "gpu3");
  EXPECT_EQ((*q)[1].limits.at("MaxTRESPU"), "gres/gpu=3,cpu=16");
  EXPECT_EQ((*q)[1].limits.at("MaxWall"), "1-00:00:00");
  EXPECT_TRUE((*q)[2].limits.empty());
  EXPECT_EQ(*TresCount("gres/gpu=3,cpu=16", "gres/gpu"), 3);
  EXPECT_EQ(*TresCount("gres/gpu=3,cpu=16", "cpu"), 16);
  EXPECT_EQ(*TresCount((*q)[0].limits.at("GrpTRES"), "gres/gpu"), 6);
  EXPECT_FALSE(TresCount("cpu=16", "gres/gpu").has_value());
  auto bad = ParseSacctmgrQos("Name|GrpTRES\nnormal|a|b\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("sacctmgr:2"), std::string::npos);
  EXPECT_FALSE(ParseSacctmgrQos("GrpTRES|Name\n").ok());
}

// As the local Slurm 22.05 prints it (scripts/slurm-local.sh WITH_DBD=1) after
// `sacctmgr modify user root set GrpTRES=gres/gpu=3` and account limits on a sub-account.
constexpr const char* kAssoc =
    "Cluster|Account|User|Partition|ParentName|GrpTRES|GrpTRESRunMins|MaxJobs\n"
    "schedmate|root||||||\n"
    "schedmate|root|root|||||\n"
    "schedmate|schedmate|||root||gres/gpu=60|5\n"
    "schedmate|schedmate|root|||gres/gpu=3||5\n"
    "schedmate|team|||schedmate|gres/gpu=8||\n"
    "schedmate|team|alice|||||\n"
    "schedmate|team|alice|gpu||gres/gpu=2||\n";

TEST(Assoc, SacctmgrAssociationsAndTheirChain) {
  auto a = ParseSacctmgrAssoc(kAssoc);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->size(), 7u);
  EXPECT_EQ((*a)[0].account, "root");  // sorted by (cluster, account, user, partition)
  EXPECT_EQ((*a)[3].user, "root");
  EXPECT_EQ((*a)[3].limits.at("GrpTRES"), "gres/gpu=3");
  EXPECT_EQ((*a)[3].limits.count("GrpTRESRunMins"), 0u);
  EXPECT_EQ((*a)[2].parent, "root");
  // root's job in schedmate: its own association, then schedmate's, then root's.
  auto chain = AssocChain(*a, "schedmate", "root", "gpu");
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0]->user, "root");
  EXPECT_EQ(chain[1]->account, "schedmate");
  EXPECT_EQ(chain[1]->user, "");
  EXPECT_EQ(chain[2]->account, "root");
  // alice: the partition's own association when there is one, then team -> schedmate -> root.
  auto alice = AssocChain(*a, "team", "alice", "gpu");
  ASSERT_EQ(alice.size(), 4u);
  EXPECT_EQ(alice[0]->partition, "gpu");
  EXPECT_EQ(alice[1]->account, "team");
  EXPECT_EQ(AssocChain(*a, "team", "alice", "cpu")[0]->partition, "");
  EXPECT_TRUE(AssocChain(*a, "team", "bob", "gpu").empty());
  EXPECT_TRUE(AssocChain(*a, "team", "", "gpu").empty());
  EXPECT_TRUE(AccountUnder(*a, "team", "schedmate"));
  EXPECT_TRUE(AccountUnder(*a, "team", "team"));
  EXPECT_FALSE(AccountUnder(*a, "schedmate", "team"));
  EXPECT_FALSE(AccountUnder(*a, "other", "root"));
  // A cycle in the parents stops.
  auto cyc =
      ParseSacctmgrAssoc("Cluster|Account|User|Partition|ParentName\nc|a|||b\nc|b|||a\nc|a|u||\n");
  ASSERT_TRUE(cyc.ok());
  EXPECT_EQ(AssocChain(*cyc, "a", "u", "").size(), 3u);
  EXPECT_FALSE(AccountUnder(*cyc, "a", "z"));

  auto bad = ParseSacctmgrAssoc("Cluster|Account|User|Partition|ParentName\nc|a|u|\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("sacctmgr:2"), std::string::npos);
  auto no_parent = ParseSacctmgrAssoc("Cluster|Account|User|Partition\n");
  ASSERT_FALSE(no_parent.ok());
  EXPECT_NE(no_parent.status().message().find("ParentName"), std::string::npos);
}

TEST(Assoc, BackendAsksSacctmgrForThisClusterOnly) {
  FakeCommandRunner runner;
  SlurmBackend backend(runner, {});
  runner.SetOutput(
      {"scontrol", "show", "config"},
      "ClusterName             = schedmate\nPriorityType            = priority/basic\n");
  runner.SetOutput({"sacctmgr"}, kAssoc);
  auto a = backend.ListAssociations();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->size(), 7u);
  auto calls = runner.CallsStartingWith("sacctmgr");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0],
            std::string("sacctmgr -P show assoc where cluster=schedmate format=") + kAssocFormat);
  EXPECT_EQ(*backend.PriorityType(), "priority/basic");
}

}  // namespace
}  // namespace schedmate::slurm
