#include "slurm/slurm_backend.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/file_util.h"
#include "core/strings.h"
#include "slurm/fake_command_runner.h"
#include "testing/test_util.h"

namespace schedmate::slurm {
namespace {

using testing::TempDir;
using testing::TestDataPath;

std::string Fixture(const std::string& name) {
  return ReadFileToString(TestDataPath("slurm/" + name)).value_or("");
}

TEST(SlurmBackend, ListsJobsAndNodesFromCapturedOutput) {
  FakeCommandRunner fake;
  fake.SetOutput({"squeue", "--json"}, Fixture("squeue_mixed.json"));
  fake.SetOutput({"sinfo", "--json"}, Fixture("sinfo_two_nodes.json"));
  SlurmBackend backend(fake, {});
  auto jobs = backend.ListJobs();
  ASSERT_OK(jobs);
  EXPECT_EQ(jobs->size(), 5u);
  auto nodes = backend.ListNodes();
  ASSERT_OK(nodes);
  EXPECT_EQ(nodes->size(), 2u);
}

TEST(SlurmBackend, ShowJobAndScript) {
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol", "show", "job", "-d", "-o", "4"},
                 Fixture("scontrol_show_job_failed.txt"));
  fake.SetOutput({"scontrol", "write", "batch_script", "1", "-"}, Fixture("batch_script_1.sh"));
  fake.SetOutput({"scontrol", "show", "job", "-d", "-o", "99"}, "", 1,
                 "slurm_load_jobs error: Invalid job id specified\n");
  SlurmBackend backend(fake, {});
  auto job = backend.ShowJob("4");
  ASSERT_OK(job);
  EXPECT_EQ(job->std_out, "/tmp/schedmate-slurm/jobs/slurm-4.out");
  auto script = backend.BatchScript("1");
  ASSERT_OK(script);
  EXPECT_NE(script->find("#SBATCH --gres=gpu:4"), std::string::npos);
  EXPECT_EQ(backend.ShowJob("99").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(backend.ShowJob("1; rm -rf /").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(backend.BatchScript("2").status().code(), StatusCode::kNotFound);
}

TEST(SlurmBackend, ActionsIssueExactCommands) {
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol"}, "");
  SlurmBackend backend(fake, {});
  EXPECT_OK(backend.SetTimeLimit("12", 30));
  EXPECT_OK(backend.SetComment("12", "schedmate: est 10m"));
  EXPECT_OK(backend.DrainNode("gpu2", "schedmate: Xid 79 in job 12"));
  EXPECT_OK(backend.ResumeNode("gpu2"));
  EXPECT_OK(backend.Requeue("12"));
  EXPECT_OK(backend.Hold("12"));
  EXPECT_OK(backend.Release("12"));
  EXPECT_EQ(fake.Calls(),
            (std::vector<std::string>{
                "scontrol update JobId=12 TimeLimit=30",
                "scontrol update JobId=12 Comment=schedmate: est 10m",
                "scontrol update NodeName=gpu2 State=DRAIN Reason=schedmate: Xid 79 in job 12",
                "scontrol update NodeName=gpu2 State=RESUME",
                "scontrol requeue 12",
                "scontrol update JobId=12 StartTime=now",
                "scontrol hold 12",
                "scontrol release 12",
            }));
  EXPECT_FALSE(backend.DrainNode("gpu2 State=RESUME", "x").ok());
  EXPECT_FALSE(backend.SetTimeLimit("12", 0).ok());
}

TEST(SlurmBackend, ActionErrorsCarryStderr) {
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol", "requeue"}, "", 1, "Invalid job id specified for job 99999\n");
  fake.SetOutput({"scontrol", "hold"}, "", 1,
                 "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n");
  SlurmBackend backend(fake, {});
  Status s = backend.Requeue("99999").status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("99999"), std::string::npos);
  EXPECT_EQ(backend.Hold("1").code(), StatusCode::kUnavailable);
  EXPECT_TRUE(
      fake.CallsStartingWith("scontrol update").empty());  // no StartTime after a failed requeue
}

TEST(SlurmBackend, RequeueWithDelayExclusionsAndComment) {
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol", "requeue"}, "");
  fake.SetOutput({"scontrol", "update"}, "");
  // After the requeue: pending, the user's own --exclude and --comment are kept.
  fake.SetOutput({"scontrol", "show", "job", "-d", "-o", "12"},
                 "JobId=12 JobName=t JobState=PENDING Reason=BeginTime Restarts=1 "
                 "ExcNodeList=gpu[7-8] Comment=user note | schedmate: est 10m StdOut=/x\n");
  SlurmBackend backend(fake, {});
  RequeueOptions options;
  options.delay = Duration::Millis(120'500);  // rounded up to whole seconds
  options.exclude_nodes = {"gpu2", "gpu7"};
  options.comment = "schedmate: requeued after gpu_xid (attempt 1/3)";
  auto report = backend.Requeue("12", options);
  ASSERT_OK(report);
  EXPECT_FALSE(report->already_pending);
  EXPECT_TRUE(report->warnings.empty());
  EXPECT_EQ(report->excluded, (std::vector<std::string>{"gpu2", "gpu7", "gpu8"}));
  EXPECT_EQ(fake.Calls(),
            (std::vector<std::string>{
                "scontrol requeue 12", "scontrol show job -d -o 12",
                "scontrol update JobId=12 ExcNodeList=gpu2,gpu7,gpu8",
                "scontrol update JobId=12 Comment=user note | schedmate: requeued after gpu_xid "
                "(attempt 1/3)",
                "scontrol update JobId=12 StartTime=now+121",  // last: exclusions first
            }));
  EXPECT_FALSE(backend.Requeue("12", {.exclude_nodes = {"gpu1 State=DOWN"}}).ok());
}

TEST(SlurmBackend, RequeueOfAJobSlurmRequeuedItselfOnlyUpdatesIt) {
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol", "requeue"}, "", 1, "Job is pending execution for job 5\n");
  fake.SetOutput({"scontrol", "update", "JobId=5", "ExcNodeList=gpu1"}, "", 1,
                 "Invalid node name specified\n");
  fake.SetOutput({"scontrol", "update"}, "");
  fake.SetOutput({"scontrol", "show", "job"}, "JobId=5 JobState=PENDING ExcNodeList=(null)\n");
  SlurmBackend backend(fake, {});
  auto report = backend.Requeue("5", {.delay = Duration::Zero(), .exclude_nodes = {"gpu1"}});
  ASSERT_OK(report);
  EXPECT_TRUE(report->already_pending);
  ASSERT_EQ(report->warnings.size(), 1u);  // the exclusion failed; the release still happened
  EXPECT_NE(report->warnings[0].find("excluding nodes"), std::string::npos);
  EXPECT_TRUE(report->excluded.empty());
  EXPECT_EQ(fake.CallsStartingWith("scontrol update JobId=5 StartTime=now").size(), 1u);
  // Any other requeue error is the action's error.
  FakeCommandRunner down;
  down.SetOutput({"scontrol", "requeue"}, "", 1, "Job has already finished for job 6\n");
  SlurmBackend b2(down, {});
  EXPECT_EQ(b2.Requeue("6").status().code(), StatusCode::kFailedPrecondition);
}

TEST(SlurmBackend, NeverExcludesANodeTheJobRequires) {
  // Seen on the real cluster: `sbatch -w gpu2` + ExcNodeList=gpu2 leaves the job pending forever
  // with Reason=BadConstraints.
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol", "requeue"}, "");
  fake.SetOutput({"scontrol", "update"}, "");
  fake.SetOutput({"scontrol", "show", "job"},
                 "JobId=3 JobState=PENDING ReqNodeList=gpu[2-3] ExcNodeList=(null)\n");
  SlurmBackend backend(fake, {});
  auto report = backend.Requeue("3", {.delay = Duration::Seconds(5), .exclude_nodes = {"gpu2"}});
  ASSERT_OK(report);
  EXPECT_TRUE(report->excluded.empty());
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_EQ(report->warnings[0], "not excluding gpu2: the job requires it (ReqNodeList)");
  EXPECT_TRUE(fake.CallsStartingWith("scontrol update JobId=3 ExcNodeList").empty());
  EXPECT_EQ(fake.CallsStartingWith("scontrol update JobId=3 StartTime=now+5").size(), 1u);
  auto some = backend.Requeue("3", {.exclude_nodes = {"gpu2", "gpu1"}});
  ASSERT_OK(some);
  EXPECT_EQ(some->excluded, std::vector<std::string>{"gpu1"});
}

TEST(SlurmBackend, HoldForReviewRequeuesFinishedJobsHeldAndHoldsPendingOnes) {
  FakeCommandRunner fake;
  fake.SetOutput({"scontrol", "requeuehold"}, "");
  fake.SetOutput({"scontrol", "update"}, "");
  fake.SetOutput({"scontrol", "show", "job"},
                 "JobId=8 JobState=PENDING Priority=0 Comment=(null)\n");
  SlurmBackend backend(fake, {});
  auto held = backend.HoldForReview("8", "schedmate: held: retry budget used");
  ASSERT_OK(held);
  EXPECT_FALSE(held->already_pending);
  EXPECT_EQ(fake.Calls(), (std::vector<std::string>{
                              "scontrol requeuehold 8",
                              "scontrol show job -d -o 8",
                              "scontrol update JobId=8 Comment=schedmate: held: retry budget used",
                          }));
  // Pending (Slurm requeued it itself): plain hold, unless it is held already.
  FakeCommandRunner pending;
  pending.SetOutput({"scontrol", "requeuehold"}, "", 1, "Job is pending execution for job 9\n");
  pending.SetOutput({"scontrol", "hold"}, "");
  pending.SetOutput({"scontrol", "show", "job"}, "JobId=9 JobState=PENDING Priority=1000\n");
  SlurmBackend b2(pending, {});
  auto r2 = b2.HoldForReview("9", "");
  ASSERT_OK(r2);
  EXPECT_TRUE(r2->already_pending);
  EXPECT_EQ(pending.CallsStartingWith("scontrol hold 9").size(), 1u);
  FakeCommandRunner already;
  already.SetOutput({"scontrol", "requeuehold"}, "", 1, "Job is pending execution for job 9\n");
  already.SetOutput({"scontrol", "show", "job"}, "JobId=9 JobState=PENDING Priority=0\n");
  SlurmBackend b3(already, {});
  ASSERT_OK(b3.HoldForReview("9", ""));
  EXPECT_TRUE(already.CallsStartingWith("scontrol hold").empty());
}

TEST(SlurmBackend, CommentMergeAndRelativeStartTime) {
  EXPECT_EQ(MergeSchedmateComment("", "schedmate: held: x"), "schedmate: held: x");
  EXPECT_EQ(MergeSchedmateComment("mine | schedmate: est 3m", "schedmate: held: x"),
            "mine | schedmate: held: x");
  EXPECT_EQ(MergeSchedmateComment("schedmate: est 3m | mine", ""), "mine");
  EXPECT_EQ(MergeSchedmateComment("a", "schedmate: \"q\"\nz"), "a | schedmate:  q  z");
  EXPECT_EQ(MergeSchedmateComment("", std::string(600, 'x')).size(), 500u);
  EXPECT_EQ(RelativeStartTime(Duration::Zero()), "now");
  EXPECT_EQ(RelativeStartTime(Duration::Seconds(-5)), "now");
  EXPECT_EQ(RelativeStartTime(Duration::Seconds(90)), "now+90");
  EXPECT_EQ(RelativeStartTime(Duration::Millis(1)), "now+1");
}

TEST(SlurmBackend, ReadsJobcompIncrementally) {
  TempDir dir;
  std::string path = dir.File("jobcomp.txt");
  std::string all = Fixture("jobcomp_requeue.txt");
  auto lines = Split(all, '\n');
  ASSERT_GE(lines.size(), 4u);
  FakeCommandRunner fake;
  SlurmBackend backend(fake, {.jobcomp_path = path});
  FinishedCursor cursor;
  auto none = backend.ReadFinished(cursor);  // file does not exist yet
  ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
  {
    std::ofstream out(path);
    out << lines[0] << "\n" << lines[1] << "\nJobId=9 JobState=COMP";  // partial last line
  }
  auto first = backend.ReadFinished(cursor);
  ASSERT_OK(first);
  ASSERT_EQ(first->size(), 2u);
  {
    std::ofstream out(path, std::ios::app);
    out << "LETED EndTime=2026-11-22T00:40:00\n"
        << lines[2] << "\nnot a record\n"
        << lines[3] << "\n";
  }
  auto second = backend.ReadFinished(cursor);
  ASSERT_OK(second);
  ASSERT_EQ(second->size(), 2u);  // job 9, then the second FAILED run of 4 (PENDING skipped)
  EXPECT_EQ((*second)[0].id, "9");
  EXPECT_EQ((*second)[1].id, "4");
  EXPECT_EQ(cursor.skipped_lines, 1);
  auto again = backend.ReadFinished(cursor);
  ASSERT_OK(again);
  EXPECT_TRUE(again->empty());
  ASSERT_OK(WriteStringToFile(path, std::string(lines[1]) + "\n"));  // rotated: shorter file
  auto rotated = backend.ReadFinished(cursor);
  ASSERT_OK(rotated);
  EXPECT_EQ(rotated->size(), 1u);
}

TEST(SlurmBackend, ReadsSacct) {
  FakeCommandRunner fake;
  fake.SetOutput({"sacct"},
                 "12|train|alice|gpu|COMPLETED|0:0|gpu1|2026-11-22T00:00:00|2026-11-22T00:01:00|"
                 "2026-11-22T00:11:00|01:00:00|/home/alice\n");
  SlurmBackend backend(fake, {.use_sacct = true});
  FinishedCursor cursor;
  auto jobs = backend.ReadFinished(cursor);
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(cursor.offset, (*jobs)[0].end.seconds());
  ASSERT_OK(backend.ReadFinished(cursor));
  auto calls = fake.CallsStartingWith("sacct");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_NE(calls[1].find("-S 2026-11-22T00:10:00"), std::string::npos) << calls[1];
}

}  // namespace
}  // namespace schedmate::slurm
