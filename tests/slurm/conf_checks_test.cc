#include "slurm/conf_checks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedmate::slurm {
namespace {

std::vector<std::string> Checks(const std::vector<ConfFinding>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(x.check + ":" + x.subject);
  return out;
}

// The shape of scripts/slurm-local.sh's configuration: nothing to report.
TEST(ConfChecks, AHealthyConfigurationHasNoFindings) {
  const std::string conf =
      "SchedulerType=sched/backfill\nGresTypes=gpu\n"
      "NodeName=gpu[1-2] CPUs=8 Gres=gpu:8 State=UNKNOWN\n"
      "PartitionName=gpu Nodes=ALL Default=YES DefaultTime=1:00:00 MaxTime=INFINITE State=UP\n";
  const std::string gres = "AutoDetect=off\nNodeName=gpu1 Name=gpu File=/dev/nvidia[0-7]\n";
  EXPECT_TRUE(CheckSlurmConf(conf, "slurm.conf", gres).empty());
}

TEST(ConfChecks, EachMisconfigurationIsFoundWithItsFileAndLine) {
  const std::string conf =
      "# site\nSchedulerType=sched/builtin\n"
      "NodeName=DEFAULT CPUs=64\n"
      "NodeName=a[1-2] Gres=gpu:4\n"
      "NodeName=b1\n"
      "PartitionName=main Nodes=a[1-2],b1 MaxTime=UNLIMITED\n"
      "PartitionName=ghost Nodes=c[1-4] MaxTime=2:00:00\n";
  const std::string gres =
      "NodeName=a[1-2] Name=gpu File=/dev/nvidia[0-3]\n"
      "NodeName=b1 Name=gpu File=/dev/nvidia[0-7]\n";
  auto f = CheckSlurmConf(conf, "slurm.conf", gres, "gres.conf");
  EXPECT_EQ(Checks(f), (std::vector<std::string>{"backfill_disabled:", "gres_not_on_node:b1",
                                                 "gres_types_missing:", "partition_no_nodes:ghost",
                                                 "unlimited_default_time:main"}));
  EXPECT_EQ(f[0].line, 2);
  EXPECT_EQ(f[0].severity, "warning");
  EXPECT_EQ(f[1].file, "gres.conf");
  EXPECT_EQ(f[1].line, 2);
  EXPECT_EQ(f[1].severity, "error");
  EXPECT_EQ(f[3].line, 7);
  EXPECT_EQ(f[4].line, 6);
  for (const auto& x : f) EXPECT_FALSE(x.suggestion.empty()) << x.check;
}

TEST(ConfChecks, DefaultsCarryToLaterLinesAndJunkIsIgnored) {
  const std::string conf =
      "GresTypes=gpu\nNodeName=DEFAULT Gres=gpu:8\nNodeName=n[1-3]\n"
      "PartitionName=DEFAULT DefaultTime=30\nPartitionName=p Nodes=n[1-3]\n"
      "this line has no pairs\n=\n\n";
  EXPECT_TRUE(CheckSlurmConf(conf, "slurm.conf", "NodeName=n2 Name=gpu Count=8\n").empty());
  EXPECT_TRUE(CheckSlurmConf("", "slurm.conf").empty());
}

}  // namespace
}  // namespace schedmate::slurm
