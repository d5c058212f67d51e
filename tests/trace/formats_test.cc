// The non-Lucid readers on hand-written fixtures, and format auto-detection.

#include <gtest/gtest.h>

#include <string>

#include "testing/test_util.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

using ::schedmate::testing::TestDataPath;

Result<JobTable> Read(const std::string& name, TraceReadOptions o = {}) {
  return ReadTrace(TestDataPath("trace/" + name), o);
}

TEST(GpwReaderTest, SubmitIsCumulativeIntervalAndFieldsMap) {
  auto r = Read("gpw.csv");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kGpw);
  ASSERT_EQ(r->jobs.size(), 3u);
  EXPECT_EQ(r->jobs[0].submit, SimTime::Zero());
  EXPECT_EQ(r->jobs[1].submit, SimTime::FromSeconds(94));
  EXPECT_EQ(r->jobs[2].submit, SimTime::FromSeconds(245));
  EXPECT_EQ(r->jobs[1].duration, Duration::Millis(87'500));
  EXPECT_EQ(r->jobs[1].gpus, GpuAmount::Whole(8));
  EXPECT_EQ(r->jobs[1].cpus, 16);
  EXPECT_EQ(r->jobs[1].user, "2");
  ASSERT_TRUE(r->jobs[1].time_limit.has_value());
  EXPECT_EQ(*r->jobs[1].time_limit, Duration::Hours(1));
  EXPECT_FALSE(r->jobs[0].time_limit.has_value());    // wall_time 0 = none
  EXPECT_EQ(r->jobs[0].state, JobState::kCompleted);  // Pass
  EXPECT_EQ(r->jobs[1].state, JobState::kFailed);
  EXPECT_EQ(r->jobs[2].state, JobState::kCancelled);  // Killed
  EXPECT_EQ(r->jobs[2].gpus, GpuAmount::Whole(0));    // CPU job stays at 0 GPUs
  EXPECT_EQ(r->jobs[2].nodes, 2);
}

TEST(GpwReaderTest, Sdsc95SkipsUnknownRunTimeButKeepsItsInterval) {
  auto r = Read("sdsc95.csv");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kGpw);
  EXPECT_EQ(r->rows_read, 3);
  EXPECT_EQ(r->rows_skipped, 1);
  ASSERT_EQ(r->skip_reasons.size(), 1u);
  EXPECT_NE(r->skip_reasons[0].find("sdsc95.csv:3: run time unknown"), std::string::npos);
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[1].id, "3");
  EXPECT_EQ(r->jobs[1].submit, SimTime::FromSeconds(4751 + 87018));
  EXPECT_EQ(r->jobs[1].cpus, 8);
  EXPECT_EQ(r->jobs[1].gpus, GpuAmount::Whole(8));  // processors_as_gpus default
  TraceReadOptions o;
  o.processors_as_gpus = false;
  auto c = Read("sdsc95.csv", o);
  ASSERT_OK(c);
  EXPECT_EQ(c->jobs[1].gpus, GpuAmount::Whole(0));
}

TEST(GpwReaderTest, NegativeIntervalIsMalformed) {
  auto r = ParseTrace(
      "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\n"
      "0,1,1,1,1,-4,84,0,Pass\n",
      "g.csv", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("g.csv:2: interval: value -"), std::string::npos);
}

TEST(ChronusReaderTest, UserIsTheVc) {
  auto r = Read("chronus.csv");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kChronus);
  ASSERT_EQ(r->jobs.size(), 3u);
  EXPECT_EQ(r->jobs[0].vc, "vc_6214e9");
  EXPECT_EQ(r->jobs[0].user, "vc_6214e9");
  EXPECT_EQ(r->jobs[0].submit, SimTime::FromSeconds(8555));
  EXPECT_EQ(r->jobs[0].duration, Duration::Seconds(747));
  EXPECT_EQ(r->jobs[0].iterations, 5049);
  EXPECT_EQ(r->jobs[0].model, "vgg16");
  EXPECT_EQ(r->jobs[1].gpus, GpuAmount::Whole(4));
  // File order kept even though submit times are not sorted.
  EXPECT_EQ(r->jobs[2].id, "2");
}

TEST(ChronusReaderTest, TiresiasSampleHasNoUserColumn) {
  auto r = Read("tiresias.csv");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kChronus);
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[1].gpus, GpuAmount::Whole(8));
  EXPECT_EQ(r->jobs[1].submit, SimTime::FromSeconds(30));
  EXPECT_EQ(r->jobs[1].duration, Duration::Seconds(147));
  EXPECT_EQ(r->jobs[1].vc, "");
}

TEST(GavelReaderTest, SevenTabFieldsNoDuration) {
  auto r = Read("gavel_small.trace");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kGavel);
  EXPECT_FALSE(FormatHasDurations(r->format));
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[0].id, "0");
  EXPECT_EQ(r->jobs[0].model, "ResNet-50");
  EXPECT_EQ(r->jobs[0].batch_size, 64);
  EXPECT_EQ(r->jobs[0].iterations, 1000);
  EXPECT_EQ(r->jobs[0].name, "cd %s/image_classification && python3 main.py");
  EXPECT_EQ(r->jobs[1].submit, SimTime::FromMicros(12'500'000));
  EXPECT_EQ(r->jobs[1].gpus, GpuAmount::Whole(4));
  EXPECT_EQ(r->jobs[1].model, "Transformer");
  EXPECT_EQ(r->jobs[1].duration, Duration::Zero());
}

TEST(GavelReaderTest, WrongFieldCountIsMalformed) {
  TraceReadOptions o;
  o.format = TraceFormat::kGavel;
  auto r = ParseTrace("a\tb\tc\n", "x.trace", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x.trace:1: expected 7 tab-separated fields, got 3"),
            std::string::npos);
}

TEST(PolluxReaderTest, NoDurationsReplicasAreGpus) {
  auto r = Read("pollux.csv");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kPollux);
  EXPECT_FALSE(FormatHasDurations(r->format));
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[1].id, "bert-2");
  EXPECT_EQ(r->jobs[1].submit, SimTime::FromMicros(811'500'000));
  EXPECT_EQ(r->jobs[1].gpus, GpuAmount::Whole(12));
  EXPECT_EQ(r->jobs[1].model, "bert");
  EXPECT_EQ(r->jobs[1].batch_size, 384);
  EXPECT_EQ(r->jobs[1].duration, Duration::Zero());
}

TEST(OpenbReaderTest, FractionalGpusAndDurationRules) {
  auto r = Read("openb.csv");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kOpenb);
  EXPECT_EQ(r->rows_read, 5);
  EXPECT_EQ(r->rows_skipped, 1);  // pod-0003 has no creation_time
  ASSERT_EQ(r->skip_reasons.size(), 1u);
  EXPECT_NE(r->skip_reasons[0].find("openb.csv:5: creation_time missing"), std::string::npos);
  ASSERT_EQ(r->jobs.size(), 4u);
  EXPECT_EQ(r->jobs[0].gpus, GpuAmount::Whole(1));
  EXPECT_EQ(r->jobs[0].duration, Duration::Seconds(12537496));
  EXPECT_EQ(r->jobs[0].cpus, 12);
  const JobRecord& shared = r->jobs[1];
  EXPECT_EQ(shared.gpus, GpuAmount::Milli(460));
  EXPECT_EQ(shared.submit, SimTime::FromSeconds(427061));
  EXPECT_EQ(shared.duration, Duration::Seconds(12902960 - 427070));  // deletion - scheduled
  EXPECT_EQ(shared.state, JobState::kCompleted);
  const JobRecord& pending = r->jobs[2];
  EXPECT_EQ(pending.duration, Duration::Seconds(10001403 - 10001278));  // deletion - creation
  EXPECT_EQ(pending.cpus, 12);                                          // ceil(11908 / 1000)
  EXPECT_EQ(r->jobs[3].gpus, GpuAmount::Whole(8));
  EXPECT_EQ(r->jobs[3].duration, Duration::Seconds(900));
}

TEST(OpenbReaderTest, DeletionBeforeStartIsMalformed) {
  auto r = ParseTrace(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n"
      "p,1000,1,1,1000,,LS,Running,100,50,100\n",
      "o.csv", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("o.csv:2: deletion_time 50 before"), std::string::npos)
      << r.status().message();
}

TEST(SwfReaderTest, FieldsCommentsAndUnknowns) {
  auto r = Read("small.swf");
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kSwf);
  EXPECT_EQ(r->rows_read, 4);
  EXPECT_EQ(r->rows_skipped, 1);  // job 3: run time -1
  ASSERT_EQ(r->jobs.size(), 3u);
  const JobRecord& j1 = r->jobs[0];
  EXPECT_EQ(j1.id, "1");
  EXPECT_EQ(j1.submit, SimTime::FromSeconds(5094));
  EXPECT_EQ(j1.duration, Duration::Seconds(12072));
  EXPECT_EQ(j1.cpus, 16);
  EXPECT_EQ(j1.gpus, GpuAmount::Whole(16));
  ASSERT_TRUE(j1.time_limit.has_value());
  EXPECT_EQ(*j1.time_limit, Duration::Seconds(20000));
  EXPECT_EQ(j1.state, JobState::kCompleted);
  EXPECT_EQ(j1.user, "7");
  EXPECT_EQ(r->jobs[1].cpus, 4);  // field 5 is -1: requested processors (field 8)
  EXPECT_EQ(r->jobs[1].state, JobState::kFailed);
  EXPECT_EQ(r->jobs[2].id, "4");  // leading blanks
  EXPECT_EQ(r->jobs[2].state, JobState::kCancelled);
}

TEST(SwfReaderTest, ShortLineIsMalformed) {
  TraceReadOptions o;
  o.format = TraceFormat::kSwf;
  auto r = ParseTrace("; c\n1 2 3\n", "s.swf", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("s.swf:2: expected 18 SWF fields, got 3"), std::string::npos);
}

struct DetectCase {
  const char* name;
  const char* path;
  std::string contents;
  TraceFormat want;
};

class DetectTest : public ::testing::TestWithParam<DetectCase> {};

TEST_P(DetectTest, DetectsByHeaderOrExtension) {
  auto r = DetectTraceFormat(GetParam().contents, GetParam().path);
  ASSERT_OK(r);
  EXPECT_EQ(*r, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DetectTest,
    ::testing::Values(
        DetectCase{"venus", "a.csv", "job_id,user,vc,gpu_num,submit_s,duration_s\n",
                   TraceFormat::kLucid},
        DetectCase{"full_log", "a.csv", "job_id,gpu_num,submit_time,duration\n",
                   TraceFormat::kLucid},
        DetectCase{"gpw", "a.csv", "u_id,user,gpu_num,cpu_num,node_num,interval,run_time\r\n",
                   TraceFormat::kGpw},
        DetectCase{"sdsc", "a.csv", "Job_Number,Interval,Run_Time,Number_of_Allocated_Processors\n",
                   TraceFormat::kGpw},
        DetectCase{"chronus", "a.csv", "job_id,user,num_gpu,submit_time,iterations,duration\n",
                   TraceFormat::kChronus},
        DetectCase{"pollux", "a.csv", "name,time,application,num_replicas,batch_size\n",
                   TraceFormat::kPollux},
        DetectCase{"openb", "a.csv",
                   "name,cpu_milli,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\n",
                   TraceFormat::kOpenb},
        DetectCase{"swf_ext", "a.SWF", "1 2 3\n", TraceFormat::kSwf},
        DetectCase{"swf_comment", "a.txt", "; Version: 2\n", TraceFormat::kSwf},
        DetectCase{"swf_fields", "a.txt", "1 0 -1 5 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n",
                   TraceFormat::kSwf},
        DetectCase{"gavel_ext", "x/seed=0/abc.trace", "anything", TraceFormat::kGavel},
        DetectCase{"gavel_tabs", "a.txt", "A\tB\tC\t1\t10\t0.0\t1\n", TraceFormat::kGavel}),
    [](const ::testing::TestParamInfo<DetectCase>& i) { return std::string(i.param.name); });

TEST(DetectTest, UnknownHeaderListsFormats) {
  auto r = DetectTraceFormat("foo,bar,baz\n1,2,3\n", "mystery.csv");
  ASSERT_FALSE(r.ok());
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("mystery.csv:1: cannot tell the trace format"), std::string::npos) << m;
  for (const char* f : {"lucid", "gpw", "chronus", "gavel", "pollux", "openb", "swf"}) {
    EXPECT_NE(m.find(f), std::string::npos) << f;
  }
}

}  // namespace
}  // namespace schedmate::trace
