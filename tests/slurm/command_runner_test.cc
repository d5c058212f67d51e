#include "slurm/command_runner.h"

#include <gtest/gtest.h>

#include "slurm/fake_command_runner.h"
#include "testing/test_util.h"

namespace schedmate::slurm {
namespace {

TEST(SubprocessCommandRunner, CapturesOutputAndExitCode) {
  SubprocessCommandRunner runner;
  auto r = runner.Run({"sh", "-c", "echo out; echo err >&2; exit 3"}, Duration::Seconds(5));
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
}

TEST(SubprocessCommandRunner, ArgumentsAreNotShellInterpreted) {
  SubprocessCommandRunner runner;
  auto r = runner.Run({"echo", "$(touch /tmp/should-not-exist) ; rm -rf x"}, Duration::Seconds(5));
  ASSERT_OK(r);
  EXPECT_EQ(r->out, "$(touch /tmp/should-not-exist) ; rm -rf x\n");
}

TEST(SubprocessCommandRunner, TimesOutAndMissingProgram) {
  SubprocessCommandRunner runner;
  auto slow = runner.Run({"sleep", "5"}, Duration::Millis(200));
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
  auto missing = runner.Run({"no-such-program-schedmate"}, Duration::Seconds(5));
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(runner.Run({}, Duration::Seconds(1)).status().code(), StatusCode::kInvalidArgument);
}

TEST(SubprocessCommandRunner, CapsOutput) {
  SubprocessCommandRunner runner(/*max_output_bytes=*/10);
  auto r = runner.Run({"sh", "-c", "yes | head -c 100000"}, Duration::Seconds(5));
  ASSERT_OK(r);
  EXPECT_EQ(r->out.size(), 10u);
}

TEST(FakeCommandRunner, LongestPrefixQueuesAndRecords) {
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol"}, "generic");
  fake.SetOutput({"scontrol", "show"}, "show");
  fake.QueueOutput({"scontrol", "show"}, "first", 0);
  EXPECT_EQ(fake.Run({"scontrol", "show", "job"}, Duration::Seconds(1))->out, "first");
  EXPECT_EQ(fake.Run({"scontrol", "show", "job"}, Duration::Seconds(1))->out, "show");
  EXPECT_EQ(fake.Run({"scontrol", "update"}, Duration::Seconds(1))->out, "generic");
  EXPECT_EQ(fake.Run({"squeue"}, Duration::Seconds(1))->exit_code, 1);
  fake.SetError({"sinfo"}, Status::Unavailable("down"));
  EXPECT_EQ(fake.Run({"sinfo", "--json"}, Duration::Seconds(1)).status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(fake.CallsStartingWith("scontrol show").size(), 2u);
  EXPECT_EQ(fake.Calls().size(), 5u);
}

// One cluster of several: SLURM_CONF in the command's environment (a real env(1) run shows it),
// or --clusters=NAME for the clients that take Slurm's -M.
TEST(ClusterCommandRunner, SetsSlurmConfOrPassesTheClusterName) {
  SubprocessCommandRunner real;
  ClusterCommandRunner by_conf(real, "/etc/slurm-b/slurm.conf", "");
  auto r = by_conf.Run({"sh", "-c", "echo \"$SLURM_CONF\""}, Duration::Seconds(5));
  ASSERT_OK(r);
  EXPECT_EQ(r->out, "/etc/slurm-b/slurm.conf\n");
  EXPECT_EQ(
      by_conf.Rewrite({"squeue", "--json"}),
      (std::vector<std::string>{"env", "SLURM_CONF=/etc/slurm-b/slurm.conf", "squeue", "--json"}));
  EXPECT_EQ(by_conf.Run({"no-such-program-schedmate"}, Duration::Seconds(5)).status().code(),
            StatusCode::kUnavailable);

  FakeCommandRunner fake;
  fake.SetOutput({"squeue"}, "[]");
  ClusterCommandRunner by_name(fake, "", "gpu-b");
  ASSERT_OK(by_name.Run({"squeue", "--json"}, Duration::Seconds(1)));
  ASSERT_OK(by_name.Run({"scontrol", "show", "job", "5"}, Duration::Seconds(1)));
  ASSERT_OK(by_name.Run({"srun", "--jobid=5", "--overlap", "nvidia-smi"}, Duration::Seconds(1)));
  EXPECT_EQ(fake.Calls(),
            (std::vector<std::string>{
                "squeue --clusters=gpu-b --json", "scontrol --clusters=gpu-b show job 5",
                "srun --jobid=5 --overlap nvidia-smi",  // srun takes no -M
            }));
  EXPECT_EQ(by_name.Run({}, Duration::Seconds(1)).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace schedmate::slurm
