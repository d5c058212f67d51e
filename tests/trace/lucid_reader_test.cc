// Lucid/Helios reader: fixtures with expected values, malformed input, skip-and-count.

#include <gtest/gtest.h>

#include <string>

#include "testing/test_util.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

using ::schedmate::testing::TestDataPath;

TEST(LucidReaderTest, ReadsVenusSchemaFaithfullyInFileOrder) {
  auto r = ReadTrace(TestDataPath("trace/lucid_jobs.csv"));
  ASSERT_OK(r);
  const JobTable& t = *r;
  EXPECT_EQ(t.format, TraceFormat::kLucid);
  EXPECT_EQ(t.rows_read, 5);
  EXPECT_EQ(t.rows_skipped, 0);
  ASSERT_EQ(t.jobs.size(), 5u);
  const JobRecord& a = t.jobs[0];
  EXPECT_EQ(a.id, "101");
  EXPECT_EQ(a.user, "alice");
  EXPECT_EQ(a.vc, "vcA");
  EXPECT_EQ(a.gpus, GpuAmount::Whole(1));
  EXPECT_EQ(a.cpus, 4);
  EXPECT_EQ(a.state, JobState::kCompleted);
  EXPECT_EQ(a.submit, SimTime::FromSeconds(0));
  EXPECT_EQ(a.duration, Duration::Seconds(120));
  EXPECT_EQ(a.dataset, "CIFAR-10");
  EXPECT_EQ(a.model, "ResNet18");
  EXPECT_EQ(a.batch_size, 64);
  EXPECT_EQ(a.amp, 1);
  EXPECT_DOUBLE_EQ(a.speed, 4038.5);
  EXPECT_DOUBLE_EQ(a.gpu_util, 62.0);
  EXPECT_DOUBLE_EQ(a.gmem_util, 34.0);
  EXPECT_DOUBLE_EQ(a.gmem_mib, 3642.0);
  EXPECT_FALSE(a.estimate.has_value());
  // Ties on submit time (102 and 103 at 30 s) keep file order.
  EXPECT_EQ(t.jobs[1].id, "102");
  EXPECT_EQ(t.jobs[2].id, "103");
  EXPECT_EQ(t.jobs[1].state, JobState::kFailed);
  EXPECT_EQ(t.jobs[2].user, "carol, jr");  // quoted field with a comma
  EXPECT_EQ(t.jobs[2].state, JobState::kCancelled);
  EXPECT_EQ(t.jobs[3].submit, SimTime::FromMicros(95'500'000));  // decimal seconds
  EXPECT_EQ(t.jobs[3].state, JobState::kTimeout);
  EXPECT_EQ(t.jobs[3].gpus, GpuAmount::Whole(16));
  // Fractional GPUs and empty optional columns.
  const JobRecord& e = t.jobs[4];
  EXPECT_EQ(e.gpus, GpuAmount::Milli(500));
  EXPECT_EQ(e.state, JobState::kNodeFail);
  EXPECT_EQ(e.model, "");
  EXPECT_EQ(e.batch_size, 0);
  EXPECT_EQ(e.amp, -1);
  EXPECT_EQ(e.speed, 0);
}

TEST(LucidReaderTest, ClusterFullLogTimesAreRelativeToEarliestSubmitAndKeepAnchor) {
  auto r = ReadTrace(TestDataPath("trace/lucid_full_log.csv"));
  ASSERT_OK(r);
  ASSERT_EQ(r->jobs.size(), 4u);
  EXPECT_EQ(r->jobs[0].id, "0");  // the anchor row is kept as an ordinary job
  EXPECT_EQ(r->jobs[0].user, "anchor_user_not_in_trace");
  EXPECT_EQ(r->jobs[0].submit, SimTime::Zero());
  // 2020-04-01 -> 2020-09-01 is 153 days = 13,219,200 s; +3 s.
  EXPECT_EQ(r->jobs[1].submit, SimTime::FromSeconds(13'219'203));
  EXPECT_EQ(r->jobs[2].submit, SimTime::FromSeconds(13'219'200 + 100));
  EXPECT_EQ(r->jobs[3].submit, SimTime::FromSeconds(13'219'200 + 104));
  EXPECT_EQ(r->jobs[3].duration, Duration::Seconds(7643));
  EXPECT_EQ(r->jobs[3].gpus, GpuAmount::Whole(8));
  EXPECT_EQ(r->jobs[3].name, "");
}

TEST(LucidReaderTest, CrlfLineEndings) {
  auto r = ReadTrace(TestDataPath("trace/lucid_crlf.csv"));
  ASSERT_OK(r);
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[1].duration, Duration::Seconds(3600));
  EXPECT_EQ(r->jobs[1].state, JobState::kFailed);
}

TEST(LucidReaderTest, RowLimitStopsEarly) {
  TraceReadOptions o;
  o.max_jobs = 2;
  auto r = ReadTrace(TestDataPath("trace/lucid_jobs.csv"), o);
  ASSERT_OK(r);
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(r->jobs[1].id, "102");
}

TEST(LucidReaderTest, MissingFileIsNotFound) {
  auto r = ReadTrace("/nonexistent/trace.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

constexpr char kHeader[] = "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s\n";

struct MalformedCase {
  const char* name;
  std::string row;            // one data row (line 3; line 2 is valid)
  const char* reason_substr;  // expected in the error
};

class LucidMalformedTest : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(LucidMalformedTest, FailsNamingFileAndLineOrSkipsAndCounts) {
  const MalformedCase& c = GetParam();
  std::string data = std::string(kHeader) + "1,u,vc,1,1,COMPLETED,0,10\n" + c.row + "\n" +
                     "3,u,vc,2,1,COMPLETED,9,20\n";
  TraceReadOptions strict;
  strict.format = TraceFormat::kLucid;
  auto r = ParseTrace(data, "t.csv", strict);
  ASSERT_FALSE(r.ok()) << c.name;
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("t.csv:3: "), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(c.reason_substr), std::string::npos) << r.status().message();

  TraceReadOptions lenient = strict;
  lenient.skip_malformed = true;
  auto s = ParseTrace(data, "t.csv", lenient);
  ASSERT_OK(s);
  EXPECT_EQ(s->rows_read, 3);
  EXPECT_EQ(s->rows_skipped, 1);
  ASSERT_EQ(s->jobs.size(), 2u);
  EXPECT_EQ(s->jobs[0].id, "1");
  EXPECT_EQ(s->jobs[1].id, "3");
  ASSERT_EQ(s->skip_reasons.size(), 1u);
  EXPECT_EQ(s->skip_reasons[0].rfind("t.csv:3: ", 0), 0u) << s->skip_reasons[0];
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LucidMalformedTest,
    ::testing::Values(
        MalformedCase{"missing_columns", "2,u,vc,1,1,COMPLETED,5", "expected 8 fields, got 7"},
        MalformedCase{"extra_columns", "2,u,vc,1,1,COMPLETED,5,10,x", "expected 8 fields, got 9"},
        MalformedCase{"non_numeric_gpus", "2,u,vc,four,1,COMPLETED,5,10", "gpu_num: 'four'"},
        MalformedCase{"non_numeric_duration", "2,u,vc,1,1,COMPLETED,5,1h", "duration_s: '1h'"},
        MalformedCase{"negative_duration", "2,u,vc,1,1,COMPLETED,5,-3", "duration_s: value -3"},
        MalformedCase{"negative_gpus", "2,u,vc,-1,1,COMPLETED,5,10", "gpu_num: value -1"},
        MalformedCase{"negative_submit", "2,u,vc,1,1,COMPLETED,-5,10", "submit_s: value -5"},
        MalformedCase{"empty_duration", "2,u,vc,1,1,COMPLETED,5,", "duration_s is missing"},
        MalformedCase{"nan_submit", "2,u,vc,1,1,COMPLETED,nan,10", "not a finite number"},
        MalformedCase{"empty_id", ",u,vc,1,1,COMPLETED,5,10", "job_id is missing"},
        MalformedCase{"text_after_quote", "2,\"u\"x,vc,1,1,COMPLETED,5,10",
                      "after a closing quote"},
        MalformedCase{"binary_junk_row", std::string("2,u,vc,\x01\xff\xfe,1,C,5,10"),
                      "gpu_num: '?\x3f?'"}),
    [](const ::testing::TestParamInfo<MalformedCase>& i) { return std::string(i.param.name); });

TEST(LucidReaderTest, UnterminatedQuoteAtEndSwallowsRestButIsReported) {
  std::string data = std::string(kHeader) + "1,u,vc,1,1,COMPLETED,0,10\n2,\"u,vc,1,1,C,5,10\n";
  TraceReadOptions o;
  o.skip_malformed = true;
  auto r = ParseTrace(data, "q.csv", o);
  ASSERT_OK(r);
  EXPECT_EQ(r->jobs.size(), 1u);
  EXPECT_EQ(r->rows_skipped, 1);
}

TEST(LucidReaderTest, DatetimeErrorsNameTheLine) {
  std::string data =
      "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n"
      "1,u,vc,1,1,COMPLETED,2020-09-01 00:00:03,10\n"
      "2,u,vc,1,1,COMPLETED,2020-02-30 00:00:00,10\n";
  auto r = ParseTrace(data, "d.csv", {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("d.csv:3: submit_time"), std::string::npos)
      << r.status().message();
}

TEST(LucidReaderTest, EmptyFileAndHeaderOnly) {
  TraceReadOptions o;
  o.format = TraceFormat::kLucid;
  auto empty = ParseTrace("", "e.csv", o);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("e.csv:1: empty file"), std::string::npos);
  auto blank = ParseTrace("\n\n  \n", "b.csv", o);
  ASSERT_FALSE(blank.ok());
  auto header_only = ParseTrace(kHeader, "h.csv", o);
  ASSERT_OK(header_only);
  EXPECT_TRUE(header_only->jobs.empty());
  EXPECT_EQ(header_only->rows_read, 0);
}

TEST(LucidReaderTest, HeaderWithoutRequiredColumnsIsRejected) {
  TraceReadOptions o;
  o.format = TraceFormat::kLucid;
  auto r = ParseTrace("job_id,user,gpu_num\n1,u,1\n", "x.csv", o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("x.csv:1: header lacks required column(s): "
                                      "submit_s|submit_time, duration_s|duration"),
            std::string::npos)
      << r.status().message();
}

TEST(LucidReaderTest, BinaryJunkFileIsRejectedNotCrashed) {
  std::string junk;
  for (int i = 0; i < 5000; ++i) junk.push_back(static_cast<char>((i * 131 + 7) % 256));
  auto autodetect = ParseTrace(junk, "junk.bin", {});
  ASSERT_FALSE(autodetect.ok());
  EXPECT_NE(autodetect.status().message().find("binary"), std::string::npos);
  TraceReadOptions o;
  o.format = TraceFormat::kLucid;
  o.skip_malformed = true;
  auto forced = ParseTrace(junk, "junk.bin", o);
  EXPECT_FALSE(forced.ok());
  // Junk without NUL bytes through every reader: an error or skipped rows, never a crash.
  std::string printable_junk;
  for (int i = 0; i < 5000; ++i) printable_junk.push_back(static_cast<char>(1 + (i * 37) % 254));
  for (auto f :
       {TraceFormat::kLucid, TraceFormat::kGpw, TraceFormat::kChronus, TraceFormat::kGavel,
        TraceFormat::kPollux, TraceFormat::kOpenb, TraceFormat::kSwf, TraceFormat::kSacct}) {
    TraceReadOptions fo;
    fo.format = f;
    fo.skip_malformed = true;
    auto r = ParseTrace(printable_junk, "junk.txt", fo);
    if (r.ok()) {
      EXPECT_EQ(r->jobs.size(), 0u) << TraceFormatName(f);
    }
  }
}

TEST(LucidReaderTest, SkipReasonsAreCapped) {
  std::string data = kHeader;
  for (int i = 0; i < 25; ++i) data += "x,u,vc,bad,1,C,0,1\n";
  data += "ok,u,vc,1,1,C,0,1\n";
  TraceReadOptions o;
  o.skip_malformed = true;
  auto r = ParseTrace(data, "many.csv", o);
  ASSERT_OK(r);
  EXPECT_EQ(r->rows_skipped, 25);
  EXPECT_EQ(r->skip_reasons.size(), 10u);
  EXPECT_EQ(r->skip_reasons[0].rfind("many.csv:2: ", 0), 0u);
  ASSERT_EQ(r->jobs.size(), 1u);
}

}  // namespace
}  // namespace schedmate::trace
