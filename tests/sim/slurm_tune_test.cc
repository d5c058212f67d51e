// `schedmate tune --via-slurm` on a REAL Slurm (scripts/slurm-local.sh start; SLURM_CONF picks
// the instance): the sweep runs as a job array of workers on the cluster, and its answer must be
// the local sweep's, field for field. SKIPS when no Slurm answers.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/file_util.h"
#include "service/local_slurm.h"
#include "testing/test_util.h"

namespace schedmate::sim {
namespace {

using ::schedmate::testing::RunSchedmate;
using ::schedmate::testing::ShellQuote;
using ::schedmate::testing::TempDir;
using ::schedmate::testing::TestDataPath;

TEST(SlurmTune, ViaSlurmRecommendsWhatTheLocalSweepDoes) {
  std::string skip;
  if (service::testing::LocalSlurmConf(skip).empty()) GTEST_SKIP() << skip;
  // The whatif fixture site's history (30 jobs) and slurm.conf, not the local cluster's: the
  // cluster only runs the workers.
  const std::string site = " --trace " + ShellQuote(TestDataPath("sim/whatif/sacct.txt")) +
                           " --slurm-conf " + ShellQuote(TestDataPath("sim/whatif/slurm.conf")) +
                           " --grid PriorityWeightAge=0,1000,10000 --grid "
                           "PriorityWeightJobSize=0,1000 --grid bf_window=1,1440 --json";
  auto local = RunSchedmate("tune" + site);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  TempDir out;
  auto via = RunSchedmate("tune" + site +
                          " --via-slurm --slurm-tasks 4 --slurm-max-parallel 2 --slurm-time 5 "
                          "--slurm-poll 1 --slurm-timeout 3 --slurm-dir " +
                          ShellQuote(out.path()));
  ASSERT_EQ(via.exit_code, 0) << via.err;
  const auto want = nlohmann::json::parse(local.out);
  const auto got = nlohmann::json::parse(via.out);
  EXPECT_FALSE(want["recommended"].empty());
  EXPECT_EQ(got["recommended"], want["recommended"]);
  EXPECT_EQ(got["slurm_conf_lines"], want["slurm_conf_lines"]);
  EXPECT_EQ(got, want);
  EXPECT_NE(via.err.find("4/4 tasks done (0 failed)"), std::string::npos) << via.err;
  // Each task wrote its chunk; Slurm kept a log per task.
  const auto job_pos = via.err.find("Slurm array job ");
  ASSERT_NE(job_pos, std::string::npos) << via.err;
  const std::string job =
      via.err.substr(job_pos + 16, via.err.find(' ', job_pos + 16) - job_pos - 16);
  for (int t = 0; t < 4; ++t) {
    const std::string stem = out.File("schedmate-tune-" + job + "-" + std::to_string(t));
    auto chunk = ReadFileToString(stem + ".json");
    ASSERT_OK(chunk);
    EXPECT_EQ(nlohmann::json::parse(*chunk)["chunks"], 4);
    EXPECT_TRUE(ReadFileToString(stem + ".log").ok()) << stem << ".log";
  }
}

}  // namespace
}  // namespace schedmate::sim
