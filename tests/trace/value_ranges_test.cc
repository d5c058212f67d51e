// Out-of-range trace values: every numeric field each reader parses must be finite and within the
// bounds of trace_reader.h, else the row is an error naming file:line and the field (or, with
// skip_malformed, is skipped and counted). Before these checks gpu_num 1e308 became
// gpus_milli = INT64_MIN, and `trace stats` printed negative GPU-hours.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/test_util.h"
#include "trace/estimates.h"
#include "trace/gavel_throughputs.h"
#include "trace/trace_generator.h"
#include "trace/trace_reader.h"
#include "trace/trace_stats.h"
#include "trace/trace_writer.h"

namespace schedmate::trace {
namespace {

struct BadRow {
  const char* name;    // the case
  TraceFormat format;  // the reader
  std::string text;    // a whole file: header (if any), one good row, then the bad row
  int64_t bad_line;    // the line of the bad row
  const char* field;   // the field the error must name
};

const char* kLucidHeader =
    "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,amp,speed,"
    "gpu_util,gmem_util,gmem\n";
const char* kLucidGood = "1,a,vc1,1,4,COMPLETED,0,10,d,m,32,1,0,0,0,0\n";
std::string Lucid(const std::string& bad) { return std::string(kLucidHeader) + kLucidGood + bad; }

const char* kFullHeader =
    "job_id,user,vc,jobname,gpu_num,cpu_num,state,submit_time,duration,dataset,model,batchsize,"
    "amp,speed,gpu_util,gmem_util,gmem\n"
    "1,a,vcA,,1,1,COMPLETED,2020-04-01 00:00:00,1,d,m,64,0,0,0,0,0\n";

const char* kGpwHeader =
    "u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status\n"
    "0,1,1,1,1,0,84,0,Pass\n";
const char* kSdscHeader = "Job_Number,Interval,Run_Time,Number_of_Allocated_Processors\n1,0,10,8\n";
const char* kChronusHeader =
    "job_id,user,num_gpu,submit_time,iterations,model_name,duration\n0,vc1,1,10,100,vgg16,50\n";
const char* kPolluxHeader =
    "name,time,application,num_replicas,batch_size\ncifar10-0,107,cifar10,6,2048\n";
const char* kOpenbHeader =
    "name,cpu_milli,num_gpu,gpu_milli,pod_phase,creation_time,deletion_time,scheduled_time\n"
    "pod-0,12000,1,1000,Running,0,100,0\n";
const char* kGavelGood = "ResNet-50 (batch size 64)\tpython3 main.py\t--num_steps\t1\t1000\t0\t1\n";
const char* kSwfGood = "1 0 -1 100 4 -1 -1 4 200 -1 1 7 -1 -1 0 -1 -1 -1\n";

std::vector<BadRow> BadRows() {
  return {
      // Lucid/Helios (venus columns).
      {"lucid gpu_num huge", TraceFormat::kLucid,
       Lucid("2,a,vc1,1e308,4,COMPLETED,5,10,d,m,32,1,0,0,0,0\n"), 3, "gpu_num"},
      {"lucid gpu_num above the job bound", TraceFormat::kLucid,
       Lucid("2,a,vc1,2000000,4,COMPLETED,5,10,d,m,32,1,0,0,0,0\n"), 3, "gpu_num"},
      {"lucid gpu_num negative", TraceFormat::kLucid,
       Lucid("2,a,vc1,-1,4,COMPLETED,5,10,d,m,32,1,0,0,0,0\n"), 3, "gpu_num"},
      {"lucid cpu_num beyond int32", TraceFormat::kLucid,
       Lucid("2,a,vc1,1,3000000000,COMPLETED,5,10,d,m,32,1,0,0,0,0\n"), 3, "cpu_num"},
      {"lucid cpu_num beyond int64", TraceFormat::kLucid,
       Lucid("2,a,vc1,1,1e20,COMPLETED,5,10,d,m,32,1,0,0,0,0\n"), 3, "cpu_num"},
      {"lucid submit_s huge", TraceFormat::kLucid,
       Lucid("2,a,vc1,1,4,COMPLETED,1e300,10,d,m,32,1,0,0,0,0\n"), 3, "submit_s"},
      {"lucid submit_s above the time bound", TraceFormat::kLucid,
       Lucid("2,a,vc1,1,4,COMPLETED,2e10,10,d,m,32,1,0,0,0,0\n"), 3, "submit_s"},
      {"lucid duration huge", TraceFormat::kLucid,
       Lucid("2,a,vc1,1,4,COMPLETED,5,1e300,d,m,32,1,0,0,0,0\n"), 3, "duration"},
      {"lucid duration negative", TraceFormat::kLucid,
       Lucid("2,a,vc1,1,4,COMPLETED,5,-3,d,m,32,1,0,0,0,0\n"), 3, "duration"},
      {"lucid batchsize beyond int32", TraceFormat::kLucid,
       Lucid("2,a,vc1,1,4,COMPLETED,5,10,d,m,3000000000,1,0,0,0,0\n"), 3, "batchsize"},
      // Lucid's cluster_full_log.csv: absolute submit times.
      {"lucid submit_time far future", TraceFormat::kLucid,
       std::string(kFullHeader) + "2,a,vcA,,1,1,COMPLETED,9999-01-01 00:00:00,1,d,m,64,0,0,0,0,0\n",
       3, "submit_time"},
      {"lucid submit_time before 1970", TraceFormat::kLucid,
       std::string(kFullHeader) + "2,a,vcA,,1,1,COMPLETED,1960-01-01 00:00:00,1,d,m,64,0,0,0,0,0\n",
       3, "submit_time"},
      // GPW.
      {"gpw gpu_num huge", TraceFormat::kGpw,
       std::string(kGpwHeader) + "1,1,1e308,1,1,5,84,0,Pass\n", 3, "gpu_num"},
      {"gpw interval huge", TraceFormat::kGpw,
       std::string(kGpwHeader) + "1,1,1,1,1,1e300,84,0,Pass\n", 3, "interval"},
      {"gpw intervals add up beyond the bound", TraceFormat::kGpw,
       std::string(kGpwHeader) + "1,1,1,1,1,6e9,84,0,Pass\n2,1,1,1,1,6e9,84,0,Pass\n", 4,
       "interval"},
      {"gpw run_time huge", TraceFormat::kGpw,
       std::string(kGpwHeader) + "1,1,1,1,1,5,1e300,0,Pass\n", 3, "run_time"},
      {"gpw wall_time huge", TraceFormat::kGpw,
       std::string(kGpwHeader) + "1,1,1,1,1,5,84,1e300,Pass\n", 3, "wall_time"},
      {"gpw node_num beyond int32", TraceFormat::kGpw,
       std::string(kGpwHeader) + "1,1,1,1,5000000000,5,84,0,Pass\n", 3, "node_num"},
      {"sdsc processors above the GPU bound", TraceFormat::kGpw,
       std::string(kSdscHeader) + "2,5,10,2000000\n", 3, "Number_of_Allocated_Processors"},
      // Chronus / Tiresias.
      {"chronus num_gpu huge", TraceFormat::kChronus,
       std::string(kChronusHeader) + "1,vc1,1e308,10,100,vgg16,50\n", 3, "num_gpu"},
      {"chronus submit_time huge", TraceFormat::kChronus,
       std::string(kChronusHeader) + "1,vc1,1,1e300,100,vgg16,50\n", 3, "submit_time"},
      {"chronus duration huge", TraceFormat::kChronus,
       std::string(kChronusHeader) + "1,vc1,1,10,100,vgg16,1e300\n", 3, "duration"},
      {"chronus iterations negative", TraceFormat::kChronus,
       std::string(kChronusHeader) + "1,vc1,1,10,-100,vgg16,50\n", 3, "iterations"},
      // Pollux / Sia.
      {"pollux time huge", TraceFormat::kPollux,
       std::string(kPolluxHeader) + "c-1,1e300,c,6,2048\n", 3, "time"},
      {"pollux num_replicas huge", TraceFormat::kPollux,
       std::string(kPolluxHeader) + "c-1,107,c,1e308,2048\n", 3, "num_replicas"},
      // Alibaba openb.
      {"openb num_gpu times gpu_milli overflows", TraceFormat::kOpenb,
       std::string(kOpenbHeader) + "pod-1,1000,100000000000000000,1000,Running,0,100,0\n", 3,
       "num_gpu"},
      {"openb cpu_milli huge", TraceFormat::kOpenb,
       std::string(kOpenbHeader) + "pod-1,9000000000000000000,1,1000,Running,0,100,0\n", 3,
       "cpu_milli"},
      {"openb creation_time huge", TraceFormat::kOpenb,
       std::string(kOpenbHeader) + "pod-1,1000,1,1000,Running,1e300,1e300,1e300\n", 3,
       "creation_time"},
      {"openb deletion_time huge", TraceFormat::kOpenb,
       std::string(kOpenbHeader) + "pod-1,1000,1,1000,Running,0,1e300,0\n", 3, "deletion_time"},
      // Gavel.
      {"gavel arrival_time huge", TraceFormat::kGavel,
       std::string(kGavelGood) + "ResNet-50 (batch size 64)\tpython3\t--n\t1\t1000\t1e300\t1\n", 2,
       "arrival_time"},
      {"gavel scale_factor above the GPU bound", TraceFormat::kGavel,
       std::string(kGavelGood) + "ResNet-50 (batch size 64)\tpython3\t--n\t1\t1000\t5\t2000000\n",
       2, "scale_factor"},
      // SWF.
      {"swf submit huge", TraceFormat::kSwf,
       std::string(kSwfGood) + "2 1e300 -1 100 4 -1 -1 4 200 -1 1 7 -1 -1 0 -1 -1 -1\n", 2,
       "field 2"},
      {"swf run time huge", TraceFormat::kSwf,
       std::string(kSwfGood) + "2 5 -1 1e300 4 -1 -1 4 200 -1 1 7 -1 -1 0 -1 -1 -1\n", 2,
       "field 4"},
      {"swf processors above the GPU bound", TraceFormat::kSwf,
       std::string(kSwfGood) + "2 5 -1 100 1e10 -1 -1 4 200 -1 1 7 -1 -1 0 -1 -1 -1\n", 2,
       "field 5"},
      {"swf requested processors above the GPU bound", TraceFormat::kSwf,
       std::string(kSwfGood) + "2 5 -1 100 -1 -1 -1 1e10 200 -1 1 7 -1 -1 0 -1 -1 -1\n", 2,
       "field 8"},
      {"swf requested time huge", TraceFormat::kSwf,
       std::string(kSwfGood) + "2 5 -1 100 4 -1 -1 4 1e300 -1 1 7 -1 -1 0 -1 -1 -1\n", 2,
       "field 9"},
  };
}

TEST(ValueRangesTest, OutOfRangeIsAnErrorNamingFileLineAndField) {
  for (const BadRow& c : BadRows()) {
    SCOPED_TRACE(c.name);
    TraceReadOptions o;
    o.format = c.format;
    auto r = ParseTrace(c.text, "t.trace", o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("t.trace:" + std::to_string(c.bad_line) + ":"), std::string::npos) << m;
    EXPECT_NE(m.find(c.field), std::string::npos) << m;
  }
}

TEST(ValueRangesTest, SkipModeSkipsAndCountsOutOfRangeRows) {
  for (const BadRow& c : BadRows()) {
    SCOPED_TRACE(c.name);
    TraceReadOptions o;
    o.format = c.format;
    o.skip_malformed = true;
    auto r = ParseTrace(c.text, "t.trace", o);
    ASSERT_OK(r);
    EXPECT_GE(r->rows_skipped, 1);
    ASSERT_FALSE(r->skip_reasons.empty());
    EXPECT_NE(r->skip_reasons.back().find("t.trace:" + std::to_string(c.bad_line) + ":"),
              std::string::npos)
        << r->skip_reasons.back();
    // What is kept is sane: no negative GPUs or durations reach the table.
    for (const JobRecord& j : r->jobs) {
      EXPECT_GE(j.gpus.milli(), 0);
      EXPECT_GE(j.duration, Duration::Zero());
      EXPECT_GE(j.submit, SimTime::Zero());
    }
  }
}

TEST(ValueRangesTest, ValuesAtTheBoundsAreAccepted) {
  TraceReadOptions o;
  o.format = TraceFormat::kLucid;
  auto r = ParseTrace(Lucid("2,a,vc1,1000000,2147483647,COMPLETED,1e10,1e10,d,m,32,1,0,0,0,0\n"),
                      "t.csv", o);
  ASSERT_OK(r);
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[1].gpus, GpuAmount::Whole(kMaxTraceJobGpus));
  EXPECT_EQ(r->jobs[1].duration, Duration::Seconds(10'000'000'000));
  EXPECT_EQ(r->jobs[1].cpus, 2147483647);
}

// The issue's case end to end: stats of a trace with gpu_num 1e308 never show negative GPU-hours;
// the read stops at the row instead.
TEST(ValueRangesTest, HugeGpuCountNeverBecomesNegativeGpuHours) {
  TraceReadOptions o;
  o.skip_malformed = true;
  auto r = ParseTrace(Lucid("2,a,vc1,1e308,4,COMPLETED,5,10,d,m,32,1,0,0,0,0\n"), "t.csv", o);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->rows_skipped, 1);
  EXPECT_GE(ComputeTraceStats(*r).gpu_hours, 0);
}

TEST(ValueRangesTest, EstimatesOutOfRangeNameFileAndLine) {
  auto r = ParseEstimates("job_id,priority\n1,10\n2,1e300\n", "e.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("e.csv:3:"), std::string::npos) << r.status().message();
  // Negative estimates stay valid (Lucid's rule replaces them).
  EXPECT_OK(ParseEstimates("job_id,priority\n1,-5\n", "e.csv"));
}

TEST(ValueRangesTest, GavelDurationsBeyondTheBoundAreCountedNotWrapped) {
  TraceReadOptions o;
  o.format = TraceFormat::kGavel;
  auto table = ParseTrace(
      "ResNet-50 (batch size 64)\tpython3\t--n\t1\t9000000000000000000\t0\t1\n"
      "ResNet-50 (batch size 64)\tpython3\t--n\t1\t1000\t1\t1\n",
      "g.trace", o);
  ASSERT_OK(table);
  auto tput = ParseGavelThroughputs(R"j({"v100": {"ResNet-50 (batch size 64)": {"null": 0.5}}})j",
                                    "t.json");
  ASSERT_OK(tput);
  const GavelDurationStats s = ApplyGavelThroughputs(*table, *tput);
  EXPECT_EQ(s.out_of_range, 1);
  EXPECT_EQ(s.derived, 1);
  EXPECT_EQ(table->jobs[0].duration, Duration::Zero());
  EXPECT_EQ(table->jobs[1].duration, Duration::Seconds(2000));
}

TEST(ValueRangesTest, GeneratorRefusesSubmitTimesBeyondTheBound) {
  JobTable source;
  for (int i = 0; i < 3; ++i) {
    JobRecord j;
    j.id = std::to_string(i);
    j.gpus = GpuAmount::Whole(1);
    j.duration = Duration::Seconds(100);
    j.submit = SimTime::FromSeconds(i * 1'000'000'000LL);
    source.jobs.push_back(j);
  }
  GenerateOptions o;
  o.jobs = 1000;
  o.load_factor = 1e-6;
  auto r = GenerateTrace(source, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

// The writer prints any fixed-point value exactly, INT64_MIN included (it used to print
// "--9223372036854775.-808").
TEST(ValueRangesTest, WriterPrintsExtremeFixedPointValues) {
  JobTable t;
  JobRecord j;
  j.id = "x";
  j.gpus = GpuAmount::Milli(INT64_MIN);
  t.jobs.push_back(j);
  const std::string csv = FormatLucidCsv(t);
  EXPECT_NE(csv.find(",-9223372036854775.808,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace schedmate::trace
