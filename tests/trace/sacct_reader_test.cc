// The Slurm accounting reader (sacct -P and sacct --json) on small hand-written reconstructions,
// its errors and ranges, and the real exports under ../shared (skipped when absent).

#include <gtest/gtest.h>

#include <string>

#include "testing/test_util.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

using ::schedmate::testing::TestDataPath;

constexpr const char* kHeader =
    "JobID|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|AllocTRES|"
    "NNodes|State\n";
constexpr const char* kGoodRow =
    "7|u|a|gpu|normal|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:05|"
    "2026-01-01T00:01:05|00:01:00|00:10:00|cpu=1,gres/gpu=2,node=1|1|COMPLETED\n";

Result<JobTable> Parse(const std::string& text, TraceReadOptions o = {}) {
  o.format = TraceFormat::kSacct;
  return ParseTrace(text, "x.txt", o);
}

TEST(SacctReaderTest, PipeExportKeepsAllocationsSkipsStepsAndCountsUnusable) {
  auto r = ReadTrace(TestDataPath("trace/sacct_small.txt"));
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kSacct);
  ASSERT_EQ(r->jobs.size(), 3u);  // 100, 101_3, 102 (steps, pending array, never-started out)
  EXPECT_EQ(r->rows_read, 5);     // steps are not rows of jobs
  EXPECT_EQ(r->rows_skipped, 2);
  const JobRecord& a = r->jobs[0];
  EXPECT_EQ(a.id, "100");
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.account, "vision");
  EXPECT_EQ(a.vc, "gpu");
  EXPECT_EQ(a.qos, "normal");
  EXPECT_EQ(a.submit, SimTime::Zero());
  EXPECT_EQ(a.duration, Duration::Hours(1));
  ASSERT_TRUE(a.time_limit.has_value());
  EXPECT_EQ(*a.time_limit, Duration::Hours(2));
  EXPECT_EQ(a.gpus, GpuAmount::Whole(4));
  EXPECT_EQ(a.cpus, 4);
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.state, JobState::kCompleted);
  const JobRecord& b = r->jobs[1];
  EXPECT_EQ(b.id, "101_3");
  EXPECT_EQ(b.submit, SimTime::FromSeconds(35 * 60));  // Eligible, 30 min after Submit
  ASSERT_TRUE(b.observed_wait.has_value());
  EXPECT_EQ(*b.observed_wait, Duration::Minutes(5));  // Start - Eligible
  EXPECT_EQ(b.gpus, GpuAmount::Whole(2));             // typed gres/gpu:a100
  EXPECT_EQ(*b.time_limit, Duration::Hours(24));
  EXPECT_EQ(b.state, JobState::kTimeout);
  const JobRecord& c = r->jobs[2];
  EXPECT_EQ(c.state, JobState::kCancelled);
  EXPECT_FALSE(c.time_limit.has_value());  // UNLIMITED
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.gpus, GpuAmount::Whole(16));
}

TEST(SacctReaderTest, JsonExportMapsBothNumberShapes) {
  auto r = ReadTrace(TestDataPath("trace/sacct_small.json"));
  ASSERT_OK(r);
  EXPECT_EQ(r->format, TraceFormat::kSacct);
  ASSERT_EQ(r->jobs.size(), 3u);
  EXPECT_EQ(r->rows_skipped, 1);  // 54 never started
  EXPECT_EQ(r->jobs[0].id, "51");
  EXPECT_EQ(r->jobs[0].duration, Duration::Seconds(28));
  EXPECT_EQ(*r->jobs[0].time_limit, Duration::Minutes(1));
  EXPECT_EQ(r->jobs[0].gpus, GpuAmount::Whole(2));
  EXPECT_EQ(r->jobs[0].cpus, 2);
  EXPECT_EQ(r->jobs[1].id, "52_1");  // array task
  EXPECT_EQ(r->jobs[1].submit, SimTime::FromSeconds(3));
  EXPECT_EQ(r->jobs[1].state, JobState::kFailed);
  EXPECT_EQ(r->jobs[2].id, "55");
  EXPECT_EQ(*r->jobs[2].time_limit, Duration::Minutes(2));
  EXPECT_EQ(r->jobs[2].duration, Duration::Seconds(30));
  EXPECT_EQ(r->jobs[2].state, JobState::kCompleted);
}

TEST(SacctReaderTest, DetectsBothShapes) {
  EXPECT_EQ(*DetectTraceFormat(std::string(kHeader) + kGoodRow, "h.txt"), TraceFormat::kSacct);
  EXPECT_EQ(*DetectTraceFormat("{\n  \"meta\": {},\n  \"jobs\": []\n}\n", "s.json"),
            TraceFormat::kSacct);
}

TEST(SacctReaderTest, MissingHeaderFieldsAreAFileError) {
  auto r = Parse("JobID|User|Submit\n1|u|2026-01-01T00:00:00\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("x.txt:1"), std::string::npos);
  EXPECT_NE(r.status().message().find("Start"), std::string::npos);
  EXPECT_NE(r.status().message().find("AllocTRES"), std::string::npos);
}

TEST(SacctReaderTest, MalformedRowsNameFileAndLineOrAreSkipped) {
  struct Case {
    const char* name;
    std::string row;
    const char* field;
  };
  const std::string base =
      "8|u|a|gpu|normal|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:05|"
      "2026-01-01T00:01:05|";
  const Case cases[] = {
      {"bad elapsed", base + "1:x:00|00:10:00|gres/gpu=2|1|COMPLETED\n", "elapsed"},
      {"bad limit", base + "00:01:00|soon|gres/gpu=2|1|COMPLETED\n", "timelimit"},
      {"gpus out of range", base + "00:01:00|00:10:00|gres/gpu=2000000|1|COMPLETED\n", "gres/gpu"},
      {"gpu count not a number", base + "00:01:00|00:10:00|gres/gpu=two|1|COMPLETED\n", "gres/gpu"},
      {"huge elapsed", base + "99999999-00:00:00|00:10:00|gres/gpu=2|1|COMPLETED\n", "elapsed"},
      {"nodes out of range", base + "00:01:00|00:10:00|gres/gpu=2|9999999999|COMPLETED\n",
       "nnodes"},
      {"short row", "8|u|a\n", "fields"},
      {"bad id",
       "x8|u|a|gpu|normal|2026-01-01T00:00:00|2026-01-01T00:00:00|"
       "2026-01-01T00:00:05|2026-01-01T00:01:05|00:01:00|00:10:00|gres/gpu=2|1|"
       "COMPLETED\n",
       "JobID"},
      {"bad date",
       "8|u|a|gpu|normal|yesterday|2026-01-01T00:00:00|2026-01-01T00:00:05|"
       "2026-01-01T00:01:05|00:01:00|00:10:00|gres/gpu=2|1|COMPLETED\n",
       "submit"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string text = std::string(kHeader) + kGoodRow + c.row;
    auto r = Parse(text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("x.txt:3"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
    TraceReadOptions skip;
    skip.skip_malformed = true;
    auto s = Parse(text, skip);
    ASSERT_OK(s);
    EXPECT_EQ(s->jobs.size(), 1u);
    EXPECT_EQ(s->rows_skipped, 1);
  }
}

TEST(SacctReaderTest, SlurmTimeFormats) {
  struct Case {
    const char* limit;
    Duration want;
  };
  const Case cases[] = {{"90", Duration::Minutes(90)},
                        {"05:30", Duration::Seconds(330)},
                        {"01:00:00", Duration::Hours(1)},
                        {"2-00", Duration::Hours(48)},
                        {"1-02:30", Duration::Minutes(26 * 60 + 30)},
                        {"1-00:00:01", Duration::Seconds(86401)}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.limit);
    std::string row = kGoodRow;
    row.replace(row.find("00:10:00"), 8, c.limit);
    auto r = Parse(std::string(kHeader) + row);
    ASSERT_OK(r);
    ASSERT_TRUE(r->jobs[0].time_limit.has_value());
    EXPECT_EQ(*r->jobs[0].time_limit, c.want);
  }
}

// Without Elapsed and AllocTRES columns: the run time is End - Start and the resources come from
// ReqTRES; a byte order mark, CRLF line ends and blank lines before the header keep line numbers.
TEST(SacctReaderTest, PipeRowsFromStartEndAndReqTresWithCrlf) {
  const std::string head =
      "\xEF\xBB\xBF\r\n\r\nJobID|User|Submit|Start|End|ReqTRES|State\r\n"
      "1|u|2026-01-01T00:00:00|2026-01-01T00:00:10|2026-01-01T00:02:10|"
      "cpu=3,gres/gpu:v100=2,gres/gpu:a100=1,node=1|COMPLETED\r\n"
      "2|u|2026-01-01T00:01:00|Unknown|Unknown|gres/gpu=1|RUNNING\r\n";
  auto r = Parse(head);
  ASSERT_OK(r);
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->rows_read, 2);
  EXPECT_EQ(r->rows_skipped, 1);  // the running job: unusable, not malformed
  const JobRecord& j = r->jobs[0];
  EXPECT_EQ(j.id, "1");
  EXPECT_EQ(j.duration, Duration::Seconds(120));
  EXPECT_EQ(j.gpus, GpuAmount::Whole(3));  // the typed entries summed
  EXPECT_EQ(j.cpus, 3);
  EXPECT_EQ(j.nodes, 1);
  EXPECT_FALSE(j.time_limit.has_value());

  // The first problem of a row is the one reported: the submit date, not the later ReqTRES.
  auto bad = Parse(head +
                   "3|u|yesterday|2026-01-01T00:00:10|2026-01-01T00:02:10|gres/gpu=x|"
                   "COMPLETED\r\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.txt:6"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("submit"), std::string::npos);
  EXPECT_EQ(bad.status().message().find("reqtres"), std::string::npos);

  std::string second = kGoodRow;
  second[0] = '9';
  auto first_only = Parse(std::string(kHeader) + kGoodRow + second, {.max_jobs = 1});
  ASSERT_OK(first_only);
  ASSERT_EQ(first_only->jobs.size(), 1u);
  EXPECT_EQ(first_only->jobs[0].id, "7");
}

TEST(SacctReaderTest, JsonErrorsNameTheJobLine) {
  const std::string text =
      "{\n  \"jobs\": [\n    {\n      \"job_id\": 9,\n      \"time\": {\"submission\": -5, "
      "\"start\": 10, \"elapsed\": 3}\n    }\n  ]\n}\n";
  auto r = ParseTrace(text, "s.json", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("s.json:4"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("time.submission"), std::string::npos);
  auto bad = ParseTrace("{\"jobs\": [", "t.json", {.format = TraceFormat::kSacct});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(SacctReaderTest, SharedExportsAgree) {
  SM_SKIP_WITHOUT_SHARED(pipe, "traces/slurm_local_sacct/sacct-P.txt");
  SM_SKIP_WITHOUT_SHARED(json, "traces/slurm_local_sacct/sacct.json");
  auto p = ReadTrace(pipe);
  auto j = ReadTrace(json);
  ASSERT_OK(p);
  ASSERT_OK(j);
  EXPECT_EQ(p->format, TraceFormat::kSacct);
  EXPECT_EQ(j->format, TraceFormat::kSacct);
  EXPECT_EQ(p->rows_skipped, 0);
  EXPECT_EQ(j->rows_skipped, 0);
  ASSERT_EQ(p->jobs.size(), 40u);
  ASSERT_EQ(j->jobs.size(), p->jobs.size());
  for (size_t i = 0; i < p->jobs.size(); ++i) {
    SCOPED_TRACE(p->jobs[i].id);
    EXPECT_EQ(p->jobs[i].id, j->jobs[i].id);
    EXPECT_EQ(p->jobs[i].gpus, j->jobs[i].gpus);
    EXPECT_EQ(p->jobs[i].duration, j->jobs[i].duration);
    EXPECT_EQ(p->jobs[i].submit, j->jobs[i].submit);
    EXPECT_EQ(p->jobs[i].time_limit, j->jobs[i].time_limit);
    // sacct --json of Slurm 22.05 gives "user": null for users unknown to slurmdbd (smu1...).
    if (!j->jobs[i].user.empty()) {
      EXPECT_EQ(p->jobs[i].user, j->jobs[i].user);
    }
  }
}

}  // namespace
}  // namespace schedmate::trace
