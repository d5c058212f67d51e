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

}  // namespace
}  // namespace schedmate::slurm
