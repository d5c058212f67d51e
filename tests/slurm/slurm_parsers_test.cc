#include "slurm/slurm_parsers.h"

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "core/strings.h"
#include "testing/test_util.h"

namespace schedmate::slurm {
namespace {

using testing::TestDataPath;

std::string Fixture(const std::string& name) {
  auto text = ReadFileToString(TestDataPath("slurm/" + name));
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

TEST(SqueueJson, ParsesCapturedQueue) {
  auto jobs = ParseSqueueJson(Fixture("squeue_mixed.json"));
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 5u);
  const SlurmJob& running = (*jobs)[0];
  EXPECT_EQ(running.id, "1");
  EXPECT_EQ(running.name, "train-resnet");
  EXPECT_EQ(running.state, "RUNNING");
  EXPECT_EQ(running.gpus_per_node, 4);
  EXPECT_EQ(running.gpus, 4);
  EXPECT_EQ(running.node_names, std::vector<std::string>{"gpu1"});
  ASSERT_TRUE(running.start.has_value());
  EXPECT_EQ(running.start->seconds(), 1795307528);
  EXPECT_FALSE(running.end.has_value());
  EXPECT_FALSE(running.time_limit_min.has_value());  // UNLIMITED is null in the JSON
  EXPECT_EQ(running.std_out, "/tmp/schedmate-slurm/jobs/%x-%j.out");  // the unexpanded pattern

  const SlurmJob& big = (*jobs)[2];
  EXPECT_EQ(big.state, "PENDING");
  EXPECT_EQ(big.reason, "Resources");
  EXPECT_EQ(big.nodes, 2);
  EXPECT_EQ(big.gpus, 16);
  EXPECT_FALSE(big.start.has_value());
  const SlurmJob& limited = (*jobs)[3];
  EXPECT_EQ(limited.reason, "Priority");
  ASSERT_TRUE(limited.time_limit_min.has_value());
  EXPECT_EQ(*limited.time_limit_min, 5);
  EXPECT_EQ((*jobs)[4].gpus, 0);
}

TEST(SqueueJson, DecodesRawWaitStatusAndRestarts) {
  auto jobs = ParseSqueueJson(Fixture("squeue_with_finished.json"));
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 5u);
  const SlurmJob& failed = (*jobs)[3];
  EXPECT_EQ(failed.state, "FAILED");
  EXPECT_EQ(failed.exit_code, 3);  // raw 768
  EXPECT_EQ(failed.exit_signal, 0);
  EXPECT_EQ(failed.restarts, 1);
  EXPECT_TRUE(failed.end.has_value());
  const SlurmJob& pending = (*jobs)[2];
  ASSERT_TRUE(pending.expected_start.has_value());
  EXPECT_EQ((*jobs)[4].state, "COMPLETED");
}

TEST(SqueueJson, RejectsGarbage) {
  EXPECT_EQ(ParseSqueueJson("not json").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseSqueueJson("{\"meta\":{}}").status().code(), StatusCode::kDataLoss);
  auto empty = ParseSqueueJson("{\"jobs\":[{\"name\":\"no id\"}, 7]}");
  ASSERT_OK(empty);
  EXPECT_TRUE(empty->empty());
}

// The SAX reader keeps only the fields it reads, with a DOM's rules: a repeated key keeps its
// last value, a nested value where a scalar is expected reads as absent, elements that are not
// objects are skipped, and "jobs" must be an array of the top-level object.
TEST(SqueueJson, ReadsOnlyTopLevelJobsWithDomRules) {
  auto jobs = ParseSqueueJson(R"({"meta":{"jobs":[{"job_id":99}]},
    "jobs":[[1,2], "x", {"job_id":5, "name":"a", "name":"b", "job_resources":{"nodes":"gpu9",
     "job_id":77}, "nodes":"gpu[1-2]", "time_limit":{"set":true,"number":60},
     "priority":7.0, "standard_output":null, "flags":["X"], "partition":"gpu"}],
    "errors":[]})");
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 1u);
  const SlurmJob& j = (*jobs)[0];
  EXPECT_EQ(j.id, "5");
  EXPECT_EQ(j.name, "b");
  EXPECT_EQ(j.node_names, (std::vector<std::string>{"gpu1", "gpu2"}));
  EXPECT_FALSE(j.time_limit_min.has_value());
  EXPECT_EQ(j.priority, 7);
  EXPECT_EQ(j.std_out, "");
  EXPECT_EQ(j.partition, "gpu");
  EXPECT_EQ(ParseSqueueJson(R"({"jobs":{"job_id":1}})").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseSqueueJson(R"({"jobs":7})").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseSqueueJson(R"([{"jobs":[]}])").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseSqueueJson(R"({"jobs":[{"job_id":1}]} trailing)").status().code(),
            StatusCode::kDataLoss);
  auto last = ParseSqueueJson(R"({"jobs":7, "jobs":[{"job_id":3}]})");
  ASSERT_OK(last);
  ASSERT_EQ(last->size(), 1u);
  EXPECT_EQ((*last)[0].id, "3");
}

TEST(SinfoJson, ParsesNodesAndDrain) {
  auto nodes = ParseSinfoJson(Fixture("sinfo_two_nodes.json"));
  ASSERT_OK(nodes);
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].name, "gpu1");
  EXPECT_EQ((*nodes)[0].gpus_total, 8);
  EXPECT_EQ((*nodes)[0].gpus_used, 8);
  EXPECT_EQ((*nodes)[1].gpus_used, 0);
  EXPECT_TRUE((*nodes)[1].available());

  auto drained = ParseSinfoJson(Fixture("sinfo_drained.json"));
  ASSERT_OK(drained);
  EXPECT_TRUE((*drained)[1].drained());
  EXPECT_FALSE((*drained)[1].available());
  EXPECT_EQ((*drained)[1].reason, "schedmate: Xid 79 in job 4");
}

TEST(Scontrol, ParsesStdOutAndValuesWithSpaces) {
  auto records = ParseScontrolRecords(Fixture("scontrol_show_job_mixed.txt"));
  ASSERT_EQ(records.size(), 5u);
  auto job = SlurmJobFromScontrol(records[0]);
  ASSERT_OK(job);
  EXPECT_EQ(job->id, "1");
  EXPECT_EQ(job->std_out, "/tmp/schedmate-slurm/jobs/train-resnet-1.out");
  EXPECT_EQ(job->user, "root");
  EXPECT_EQ(job->gpus, 4);
  EXPECT_EQ(job->restarts, 0);

  auto kv = ParseKeyValueLine("JobId=7 Comment=schedmate est 3m  StdOut=/a b/c.out Reason=None");
  ASSERT_EQ(kv.size(), 4u);
  EXPECT_EQ(kv[1].second, "schedmate est 3m");
  EXPECT_EQ(kv[2].second, "/a b/c.out");
}

TEST(Scontrol, FailedJobHasExitCodeAndEnd) {
  auto records = ParseScontrolRecords(Fixture("scontrol_show_job_failed.txt"));
  ASSERT_EQ(records.size(), 1u);
  auto job = SlurmJobFromScontrol(records[0]);
  ASSERT_OK(job);
  EXPECT_EQ(job->state, "FAILED");
  EXPECT_EQ(job->exit_code, 3);
  EXPECT_EQ(job->node_list, "gpu2");
  EXPECT_EQ(job->time_limit_min, std::optional<int64_t>(5));
  EXPECT_TRUE(job->end.has_value());
  EXPECT_EQ(job->std_out, "/tmp/schedmate-slurm/jobs/slurm-4.out");
}

TEST(SqueueJson, RequeuedJobHasEligibleTimeAndExclusions) {
  // Captured after `scontrol requeue 243; scontrol update JobId=243 ExcNodeList=gpu1
  // StartTime=now+600`.
  auto jobs = ParseSqueueJson(Fixture("squeue_requeued_delayed.json"));
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 1u);
  const SlurmJob& j = jobs->front();
  EXPECT_EQ(j.state, "PENDING");
  ASSERT_TRUE(j.eligible.has_value());
  EXPECT_EQ(j.eligible->seconds(), 1795317136);
  EXPECT_EQ(j.excluded_nodes, std::vector<std::string>{"gpu1"});
  // A job that never had them: no eligible time once it runs, no exclusions.
  auto mixed = ParseSqueueJson(Fixture("squeue_mixed.json"));
  ASSERT_OK(mixed);
  EXPECT_FALSE((*mixed)[0].eligible.has_value());
  EXPECT_TRUE((*mixed)[0].excluded_nodes.empty());
}

TEST(Scontrol, RequeuedDelayedAndHeldJobs) {
  auto delayed = ParseScontrolRecords(Fixture("scontrol_show_job_requeued_delayed.txt"));
  ASSERT_EQ(delayed.size(), 1u);
  auto job = SlurmJobFromScontrol(delayed[0]);
  ASSERT_OK(job);
  EXPECT_EQ(job->state, "PENDING");
  EXPECT_EQ(job->restarts, 1);
  EXPECT_EQ(job->excluded_nodes, std::vector<std::string>{"gpu1"});
  EXPECT_TRUE(job->required_nodes.empty());  // ReqNodeList=(null)
  ASSERT_TRUE(job->eligible.has_value());
  EXPECT_EQ(job->eligible, ParseSlurmTimestamp("2026-11-22T03:05:52"));
  EXPECT_EQ(job->comment, "schedmate: requeued 1/1 (gpu_xid); resume from ckpt/step_1200.pt");
  auto held = ParseScontrolRecords(Fixture("scontrol_show_job_requeue_held.txt"));
  ASSERT_EQ(held.size(), 1u);
  auto h = SlurmJobFromScontrol(held[0]);
  ASSERT_OK(h);
  EXPECT_EQ(h->reason, "job_requeued_in_held_state");
  EXPECT_EQ(h->priority, 0);
  EXPECT_TRUE(h->excluded_nodes.empty());  // ExcNodeList=(null)
}

TEST(Jobcomp, SkipsRequeuePendingLine) {
  std::string text = Fixture("jobcomp_requeue.txt");
  std::vector<FinishedJob> finished;
  int pending = 0;
  for (auto line : Split(text, '\n')) {
    if (Trim(line).empty()) continue;
    auto parsed = ParseJobcompLine(line);
    ASSERT_OK(parsed);
    if (parsed->has_value()) {
      finished.push_back(**parsed);
    } else {
      ++pending;
    }
  }
  EXPECT_EQ(pending, 1);
  ASSERT_EQ(finished.size(), 3u);
  EXPECT_EQ(finished[0].id, "4");
  EXPECT_EQ(finished[0].state, "FAILED");
  EXPECT_EQ(finished[0].exit_code, 3);
  EXPECT_EQ(finished[0].node_names, std::vector<std::string>{"gpu2"});
  EXPECT_EQ(finished[1].state, "COMPLETED");
  EXPECT_NE(finished[0].RunKey(), finished[2].RunKey());  // two runs of job 4
  EXPECT_EQ(ParseJobcompLine("garbage").status().code(), StatusCode::kDataLoss);
}

TEST(Sacct, ParsesParsableOutput) {
  auto jobs = ParseSacctParsable(
      "12|train|alice|gpu|COMPLETED|0:0|gpu[1-2]|2026-11-22T00:00:00|2026-11-22T00:01:00|"
      "2026-11-22T00:11:00|01:00:00|/home/alice\n"
      "13|x|bob|gpu|RUNNING|0:0|gpu1|2026-11-22T00:00:00|2026-11-22T00:01:00|Unknown|UNLIMITED|/\n"
      "14|y|bob|gpu|CANCELLED by 0|0:15|gpu1|2026-11-22T00:00:00|2026-11-22T00:01:00|"
      "2026-11-22T00:02:00|5|/\n");
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].node_names, (std::vector<std::string>{"gpu1", "gpu2"}));
  EXPECT_EQ(((*jobs)[0].end - (*jobs)[0].start).seconds(), 600);
  EXPECT_EQ((*jobs)[0].time_limit_min, std::optional<int64_t>(60));
  EXPECT_EQ((*jobs)[1].state, "CANCELLED");
  EXPECT_EQ((*jobs)[1].exit_signal, 15);
  EXPECT_FALSE(ParseSacctParsable("a|b\n").ok());
}

struct Case {
  const char* name;
  const char* input;
  int32_t gpus;
};

TEST(GpuCount, Table) {
  const Case cases[] = {
      {"gres colon", "gres:gpu:4", 4},
      {"gres slash eq", "gres/gpu=2", 2},
      {"typed", "gres:gpu:a100:2", 2},
      {"bare", "gres:gpu", 1},
      {"none", "cpu=1,mem=1G", 0},
      {"empty", "", 0},
      {"sum", "gres/gpu=2,gres/gpu:a100=2", 4},
      {"gpumem not gpu", "gres:gpumem:4", 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ParseGpuCount(c.input), c.gpus);
  }
}

TEST(NodeList, Expands) {
  EXPECT_EQ(ExpandNodeList("gpu[1-3,7],cpu01"),
            (std::vector<std::string>{"gpu1", "gpu2", "gpu3", "gpu7", "cpu01"}));
  EXPECT_EQ(ExpandNodeList("n[08-10]"), (std::vector<std::string>{"n08", "n09", "n10"}));
  EXPECT_TRUE(ExpandNodeList("(null)").empty());
  EXPECT_TRUE(ExpandNodeList("").empty());
}

TEST(TimeAndCodes, Parse) {
  EXPECT_EQ(ParseTimeLimitMinutes("00:05:00"), std::optional<int64_t>(5));
  EXPECT_EQ(ParseTimeLimitMinutes("1-02:00:00"), std::optional<int64_t>(26 * 60));
  EXPECT_EQ(ParseTimeLimitMinutes("45:30"), std::optional<int64_t>(46));
  EXPECT_EQ(ParseTimeLimitMinutes("5"), std::optional<int64_t>(5));
  EXPECT_FALSE(ParseTimeLimitMinutes("UNLIMITED").has_value());
  EXPECT_FALSE(ParseSlurmTimestamp("Unknown").has_value());
  EXPECT_TRUE(ParseSlurmTimestamp("2026-11-22T00:32:34").has_value());
  EXPECT_EQ(DecodeWaitStatus(768), (std::pair<int32_t, int32_t>{3, 0}));
  EXPECT_EQ(DecodeWaitStatus(9), (std::pair<int32_t, int32_t>{0, 9}));
  EXPECT_EQ(ParseExitCodePair("0:9"), (std::pair<int32_t, int32_t>{0, 9}));
  EXPECT_EQ(NormalizeState("CANCELLED by 0"), "CANCELLED");
  EXPECT_TRUE(IsFinishedState("NODE_FAIL"));
  EXPECT_FALSE(IsFinishedState("PENDING"));
}

// Regression cases found by fuzz/slurm/slurm_parsers_fuzz: values past what a real cluster prints
// must stay within the documented bounds instead of overflowing (undefined behaviour) or
// exhausting memory.

TEST(GpuCount, SaturatesInsteadOfOverflowing) {
  // 3000 items of 1 Mi GPUs each: the int32 sum used to overflow.
  std::string tres;
  for (int i = 0; i < 3000; ++i) tres += "gres/gpu=1048576,";
  EXPECT_EQ(ParseGpuCount(tres), kMaxGpuCount);
  EXPECT_EQ(TotalGpus(0, kMaxGpuCount, 4096), kMaxGpuCount);
  EXPECT_EQ(TotalGpus(0, 4, -3), 4);
  EXPECT_EQ(TotalGpus(6, 4, 2), 6);
}

TEST(SqueueJson, HugeCountsAndTimesStayInRange) {
  auto jobs = ParseSqueueJson(R"({"jobs":[
      {"job_id": 1, "job_state": "RUNNING", "node_count": 1048576,
       "tres_per_node": "gres:gpu:1048576", "start_time": 9000000000000000000,
       "submit_time": 1e300, "time_limit": 1e300},
      {"job_id": 2, "job_state": "PENDING", "time_limit": -5, "eligible_time": 253402300800}]})");
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 2u);
  const SlurmJob& big = (*jobs)[0];
  EXPECT_EQ(big.gpus, kMaxGpuCount);
  EXPECT_FALSE(big.start.has_value());
  EXPECT_EQ(big.submit, SimTime::Zero());
  EXPECT_FALSE(big.time_limit_min.has_value());
  EXPECT_FALSE((*jobs)[1].time_limit_min.has_value());
  EXPECT_FALSE((*jobs)[1].eligible.has_value());
}

TEST(Scontrol, HugeGpuTotalSaturates) {
  auto records = ParseScontrolRecords(
      "JobId=7 JobState=PENDING NumNodes=100000 TresPerNode=gres:gpu:1048576\n");
  ASSERT_EQ(records.size(), 1u);
  auto job = SlurmJobFromScontrol(records[0]);
  ASSERT_OK(job);
  EXPECT_EQ(job->gpus, kMaxGpuCount);
}

TEST(TimeLimit, OutOfRangeIsNone) {
  const char* cases[] = {"99999999999999999:00:00", "1-99999999:00:00", "4294967294",
                         "99999999999999-00:00:00", "3000000000000:00"};
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    EXPECT_FALSE(ParseTimeLimitMinutes(c).has_value());
  }
  EXPECT_EQ(ParseTimeLimitMinutes("4294967293"), std::optional<int64_t>(kMaxTimeLimitMinutes));
  EXPECT_EQ(ParseTimeLimitMinutes("2982616-04:13:00"),
            std::optional<int64_t>(kMaxTimeLimitMinutes));
  EXPECT_FALSE(ParseTimeLimitMinutes("2982616-04:14:00").has_value());
}

// Found by fuzz/slurm (peak RSS near its 2 GB limit): a few kilobytes of sacct output, each line
// naming a 100,000-node range, expanded to tens of millions of names.
TEST(Sacct, NodeListsOfOneOutputShareABudget) {
  std::string text;
  for (int i = 1; i <= 20; ++i) {
    text += std::to_string(i) +
            "|a|u|gpu|COMPLETED|0:0|n[0-99999]|2026-11-22T00:00:00|2026-11-22T00:01:00|"
            "2026-11-22T00:02:00|5|/\n";
  }
  auto jobs = ParseSacctParsable(text);
  ASSERT_OK(jobs);
  ASSERT_EQ(jobs->size(), 20u);
  size_t names = 0;
  for (const auto& j : *jobs) {
    names += j.node_names.size();
    EXPECT_EQ(j.node_list, "n[0-99999]");  // the text is kept whatever the budget
  }
  EXPECT_LE(names, kMaxExpandedNodesPerOutput);
  EXPECT_EQ(jobs->front().node_names.size(), 100000u);
}

TEST(Sacct, EmptyJobIdIsDataLoss) {
  auto jobs = ParseSacctParsable(
      "12|a|u|gpu|COMPLETED|0:0|g1|2026-11-22T00:00:00|2026-11-22T00:01:00|"
      "2026-11-22T00:02:00|5|/\n"
      " |b|u|gpu|COMPLETED|0:0|g1|2026-11-22T00:00:00|2026-11-22T00:01:00|"
      "2026-11-22T00:02:00|5|/\n");
  EXPECT_EQ(jobs.status().code(), StatusCode::kDataLoss);
}

TEST(NodeList, ExpansionIsBounded) {
  // Twenty ranges of 100,000 names each used to expand to two million names.
  std::string list = "n[";
  for (int i = 0; i < 20; ++i) list += "0-99999,";
  list += "7]";
  auto names = ExpandNodeList(list);
  EXPECT_LE(names.size(), kMaxExpandedNodes);
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "n0");
  // A range past the limit is kept as written.
  EXPECT_EQ(ExpandNodeList("a[1-3],b[0-99999]"),
            (std::vector<std::string>{"a1", "a2", "a3", "b0-99999"}));
}

}  // namespace
}  // namespace schedmate::slurm
