#include "slurm/array_job.h"

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "slurm/fake_command_runner.h"
#include "testing/test_util.h"

namespace schedmate::slurm {
namespace {

using testing::TempDir;

const std::vector<std::string> kSqueue = {"squeue", "-h",   "-r", "--states=all",
                                          "-j",     "4242", "-o", "%i|%T|%r"};

ArrayJobSpec Spec(const std::string& dir) {
  ArrayJobSpec s;
  s.name = "sweep";
  s.tasks = 4;
  s.max_parallel = 2;
  s.partition = "gpu";
  s.time_limit = "1:00:00";
  s.dir = dir;
  s.command = {"/opt/schedmate", "tune", "--chunk", "{task}/4"};
  return s;
}

// Sleeping advances the fake clock, so the wait loop's deadline is reached without real time.
ArrayWaitOptions FakeWait(FakeClock& clock, std::vector<ArrayProgress>* progress) {
  ArrayWaitOptions o;
  o.poll = Duration::Seconds(10);
  o.timeout = Duration::Seconds(35);
  o.sleep = [&clock](Duration d) { clock.Advance(d); };
  if (progress != nullptr)
    o.on_progress = [progress](const ArrayProgress& p) { progress->push_back(p); };
  return o;
}

TEST(ArrayJob, ScriptDeclaresTheArrayAndRunsTheCommandQuoted) {
  TempDir dir;
  ArrayJobSpec spec = Spec(dir.path());
  const std::string script = ArrayBatchScript(spec);
  for (const std::string& line : std::vector<std::string>{
           "#SBATCH --job-name=sweep\n", "#SBATCH --array=0-3%2\n", "#SBATCH --partition=gpu\n",
           "#SBATCH --time=1:00:00\n", "#SBATCH --cpus-per-task=1\n",
           "#SBATCH --output=" + dir.path() + "/sweep-%A-%a.log\n"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line;
  }
  EXPECT_EQ(ArrayTaskLogPath(spec, "77", 3), dir.path() + "/sweep-77-3.log");
  // No partition, time or limit: no such lines (Slurm's defaults apply).
  spec.partition = spec.time_limit = "";
  spec.max_parallel = 0;
  const std::string plain = ArrayBatchScript(spec);
  EXPECT_NE(plain.find("#SBATCH --array=0-3\n"), std::string::npos);
  EXPECT_EQ(plain.find("--partition"), std::string::npos);
  EXPECT_EQ(plain.find("--time"), std::string::npos);
}

TEST(ArrayJob, ArgumentsReachTheTaskIntactWithItsIndices) {
  TempDir dir;
  ArrayJobSpec spec = Spec(dir.path());
  // printf prints each argument on its own line: what bash passed, exactly.
  spec.command = {"printf", "%s\\n", "it's {task}", "a  b", "$HOME `id`", "x-{job}-{task}.json"};
  const std::string path = dir.File("run.sh");
  ASSERT_OK(WriteStringToFile(path, ArrayBatchScript(spec)));
  SubprocessCommandRunner runner;
  auto r = runner.Run({"env", "SLURM_ARRAY_TASK_ID=3", "SLURM_ARRAY_JOB_ID=77", "bash", path},
                      Duration::Seconds(10));
  ASSERT_OK(r);
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(r->out, "it's 3\na  b\n$HOME `id`\nx-77-3.json\n");
}

TEST(ArrayJob, SpecChecksNameTheField) {
  struct Case {
    const char* name;
    void (*change)(ArrayJobSpec&);
    const char* field;
  };
  const Case cases[] = {
      {"relative dir", [](ArrayJobSpec& s) { s.dir = "out"; }, "directory"},
      {"dir with a space", [](ArrayJobSpec& s) { s.dir = "/tmp/a b"; }, "directory"},
      {"no tasks", [](ArrayJobSpec& s) { s.tasks = 0; }, "tasks"},
      {"negative limit", [](ArrayJobSpec& s) { s.max_parallel = -1; }, "max parallel"},
      {"partition with a space", [](ArrayJobSpec& s) { s.partition = "gpu x"; }, "partition"},
      {"time with a newline", [](ArrayJobSpec& s) { s.time_limit = "1\n#SBATCH"; }, "time"},
      {"no command", [](ArrayJobSpec& s) { s.command.clear(); }, "command"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ArrayJobSpec s = Spec("/tmp");
    c.change(s);
    Status st = CheckArrayJobSpec(s);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
  }
  EXPECT_OK(CheckArrayJobSpec(Spec("/tmp")));
}

TEST(ArrayJob, SubmitWritesTheScriptAndReadsTheJobId) {
  TempDir dir;
  FakeCommandRunner fake;
  FakeClock clock;
  const std::string script = dir.File("sweep.sbatch");
  fake.SetOutput({"sbatch", "--parsable", script}, "4242;schedmate\n");
  ArrayJobRunner array(fake, clock);
  auto id = array.Submit(Spec(dir.path()), Duration::Seconds(5));
  ASSERT_OK(id);
  EXPECT_EQ(*id, "4242");
  EXPECT_EQ(ReadFileToString(script).value_or(""), ArrayBatchScript(Spec(dir.path())));

  fake.SetOutput({"sbatch", "--parsable", script}, "", 1,
                 "sbatch: error: invalid partition specified: gpu");
  auto refused = array.Submit(Spec(dir.path()), Duration::Seconds(5));
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("invalid partition"), std::string::npos);
  fake.SetOutput({"sbatch", "--parsable", script}, "Submitted batch job\n");
  EXPECT_EQ(array.Submit(Spec(dir.path()), Duration::Seconds(5)).status().code(),
            StatusCode::kUnavailable);
}

TEST(ArrayJob, WaitReportsProgressAndFailedTasksByIndex) {
  FakeCommandRunner fake;
  FakeClock clock;
  // As squeue -r prints an array (Slurm 22.05, %2 limit): two running, the rest held back.
  fake.QueueOutput(kSqueue,
                   "4242_2|PENDING|JobArrayTaskLimit\n4242_3|PENDING|JobArrayTaskLimit\n"
                   "4242_1|RUNNING|None\n4242_0|RUNNING|None\n");
  fake.QueueOutput(kSqueue,
                   "4242_3|RUNNING|None\n4242_2|RUNNING|None\n4242_1|COMPLETED|None\n"
                   "4242_0|COMPLETED|None\n");
  fake.QueueOutput(kSqueue,
                   "4242_3|FAILED|NonZeroExitCode\n4242_2|COMPLETED|None\n"
                   "4242_1|COMPLETED|None\n4242_0|COMPLETED|None\n");
  ArrayJobRunner array(fake, clock);
  std::vector<ArrayProgress> progress;
  auto out = array.Wait("4242", 4, FakeWait(clock, &progress));
  ASSERT_OK(out);
  EXPECT_FALSE(out->timed_out);
  EXPECT_EQ(out->FailedTasks(), std::vector<int32_t>{3});
  EXPECT_TRUE(out->UnfinishedTasks().empty());
  EXPECT_EQ(out->tasks[3].state, "FAILED");
  EXPECT_EQ(out->tasks[3].reason, "NonZeroExitCode");
  EXPECT_TRUE(out->tasks[2].succeeded());
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_EQ(progress[0], (ArrayProgress{4, 2, 2, 0, 0}));
  EXPECT_EQ(progress[1], (ArrayProgress{4, 0, 2, 2, 0}));
  EXPECT_EQ(progress[2], (ArrayProgress{4, 0, 0, 3, 1}));
  EXPECT_EQ(fake.CallsStartingWith("squeue").size(), 3u);
  EXPECT_TRUE(fake.CallsStartingWith("scancel").empty());
}

TEST(ArrayJob, TimeoutCancelsTheArrayAndNamesOpenTasks) {
  FakeCommandRunner fake;
  FakeClock clock;
  fake.SetOutput(kSqueue, "4242_1|PENDING|Resources\n4242_0|COMPLETED|None\n");
  fake.SetOutput({"scancel", "4242"}, "");
  ArrayJobRunner array(fake, clock);
  auto out = array.Wait("4242", 2, FakeWait(clock, nullptr));
  ASSERT_OK(out);
  EXPECT_TRUE(out->timed_out);
  EXPECT_TRUE(out->cancelled);
  EXPECT_EQ(out->UnfinishedTasks(), std::vector<int32_t>{1});
  EXPECT_TRUE(out->FailedTasks().empty());
  // Polls at 0, 10, 20, 30 and 40 s: the deadline (35 s) is seen at the fifth.
  EXPECT_EQ(fake.CallsStartingWith("squeue").size(), 5u);
  EXPECT_EQ(fake.CallsStartingWith("scancel 4242").size(), 1u);
}

TEST(ArrayJob, TasksSlurmForgotComeFromSacctOrAreUnknown) {
  FakeCommandRunner fake;
  FakeClock clock;
  fake.QueueOutput(kSqueue, "4242_2|RUNNING|None\n4242_1|RUNNING|None\n4242_0|RUNNING|None\n");
  fake.QueueOutput(kSqueue, "", 1, "slurm_load_jobs error: Invalid job id specified\n");
  fake.SetOutput({"sacct"}, "4242_0|COMPLETED\n4242_1|CANCELLED by 0\n");
  ArrayJobRunner array(fake, clock);
  auto out = array.Wait("4242", 3, FakeWait(clock, nullptr));
  ASSERT_OK(out);
  EXPECT_FALSE(out->timed_out);
  EXPECT_TRUE(out->tasks[0].succeeded());
  EXPECT_EQ(out->tasks[1].state, "CANCELLED");
  EXPECT_EQ(out->FailedTasks(), std::vector<int32_t>{1});
  EXPECT_FALSE(out->tasks[2].known);
  EXPECT_EQ(out->UnfinishedTasks(), std::vector<int32_t>{2});
}

TEST(ArrayJob, SqueueFailureIsUnavailable) {
  FakeCommandRunner fake;
  FakeClock clock;
  fake.SetOutput({"squeue"}, "", 1, "slurm_load_jobs error: Unable to contact slurm controller");
  ArrayJobRunner array(fake, clock);
  auto out = array.Wait("4242", 2, FakeWait(clock, nullptr));
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(out.status().message().find("Unable to contact"), std::string::npos);
}

}  // namespace
}  // namespace schedmate::slurm
