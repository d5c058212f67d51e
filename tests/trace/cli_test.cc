// `schedmate trace stats|generate|convert` end to end.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/file_util.h"
#include "testing/test_util.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

using ::schedmate::testing::RunSchedmate;
using ::schedmate::testing::ShellQuote;
using ::schedmate::testing::TempDir;
using ::schedmate::testing::TestDataPath;

TEST(TraceCliTest, StatsTable) {
  auto r = RunSchedmate("trace stats " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("jobs          5 (rows read 5, skipped 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p50 2m00s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("COMPLETED"), std::string::npos);
}

TEST(TraceCliTest, StatsJson) {
  auto r = RunSchedmate("trace stats --json " + ShellQuote(TestDataPath("trace/openb.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "openb");
  EXPECT_EQ(j["jobs"], 4);
  EXPECT_EQ(j["rows_skipped"], 1);
  EXPECT_EQ(j["skip_reasons"].size(), 1u);
  EXPECT_EQ(j["gpu_histogram"][1]["gpus"], "<1");
  EXPECT_EQ(j["gpu_histogram"][1]["jobs"], 1);
  EXPECT_DOUBLE_EQ(j["duration_s"]["max"].get<double>(), 12537496.0);
}

TEST(TraceCliTest, MalformedRowFailsWithFileLineOrIsSkipped) {
  TempDir dir;
  const std::string path = dir.File("bad.csv");
  ASSERT_OK(WriteStringToFile(path,
                              "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s\n"
                              "1,u,v,1,1,COMPLETED,0,10\n"
                              "2,u,v,x,1,COMPLETED,0,10\n"));
  auto strict = RunSchedmate("trace stats " + ShellQuote(path));
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("schedmate: error: " + path + ":3: gpu_num: 'x'"), std::string::npos)
      << strict.err;
  auto lenient = RunSchedmate("trace stats --skip-malformed --json " + ShellQuote(path));
  ASSERT_EQ(lenient.exit_code, 0) << lenient.err;
  auto j = nlohmann::json::parse(lenient.out);
  EXPECT_EQ(j["jobs"], 1);
  EXPECT_EQ(j["rows_skipped"], 1);
}

TEST(TraceCliTest, UnknownFormatIsUsageError) {
  auto r =
      RunSchedmate("trace stats --format nope " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown trace format 'nope'"), std::string::npos) << r.err;
}

TEST(TraceCliTest, GenerateIsDeterministicAndReadable) {
  TempDir dir;
  const std::string src = ShellQuote(TestDataPath("trace/lucid_jobs.csv"));
  auto a = RunSchedmate("trace generate --from " + src + " --jobs 300 --seed 5 --out " +
                        ShellQuote(dir.File("a.csv")));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto b = RunSchedmate("trace generate --from " + src + " --jobs 300 --seed 5");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  auto file = ReadFileToString(dir.File("a.csv"));
  ASSERT_OK(file);
  EXPECT_EQ(*file, b.out);  // same seed: same bytes, file or stdout
  auto c = RunSchedmate("trace generate --from " + src + " --jobs 300 --seed 6");
  EXPECT_NE(c.out, b.out);
  auto t = ReadTrace(dir.File("a.csv"));
  ASSERT_OK(t);
  EXPECT_EQ(t->jobs.size(), 300u);
}

TEST(TraceCliTest, GenerateForClusterWritesVcConfig) {
  TempDir dir;
  auto r =
      RunSchedmate("trace generate --from " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")) +
                   " --jobs 50 --cluster-gpus 64 --target-load 0.5 --vc-config-out " +
                   ShellQuote(dir.File("vc.csv")) + " --out " + ShellQuote(dir.File("g.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("offered load 32.0 busy GPUs"), std::string::npos) << r.err;
  auto vc = ReadFileToString(dir.File("vc.csv"));
  ASSERT_OK(vc);
  EXPECT_EQ(vc->rfind(",num\nvcA,", 0), 0u) << *vc;
  auto conflict =
      RunSchedmate("trace generate --from " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")) +
                   " --jobs 5 --load-factor 2 --span-days 3");
  EXPECT_EQ(conflict.exit_code, 2);
}

TEST(TraceCliTest, ConvertRoundTrips) {
  TempDir dir;
  auto r = RunSchedmate("trace convert " + ShellQuote(TestDataPath("trace/chronus.csv")) +
                        " --out " + ShellQuote(dir.File("c.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto orig = ReadTrace(TestDataPath("trace/chronus.csv"));
  auto conv = ReadTrace(dir.File("c.csv"));
  ASSERT_OK(orig);
  ASSERT_OK(conv);
  ASSERT_EQ(conv->format, TraceFormat::kLucid);
  ASSERT_EQ(conv->jobs.size(), orig->jobs.size());
  EXPECT_EQ(conv->jobs[1].submit, orig->jobs[1].submit);
  EXPECT_EQ(conv->jobs[1].vc, "vc_ed69ec");
}

TEST(TraceCliTest, HelpListsFormats) {
  auto r = RunSchedmate("trace stats --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* f : {"lucid", "gpw", "chronus", "gavel", "pollux", "openb", "swf"}) {
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
  }
}

}  // namespace
}  // namespace schedmate::trace

namespace schedmate::trace {
namespace {

TEST(TraceCliTest, GavelThroughputsGiveDurations) {
  auto r = RunSchedmate("trace stats --json --gavel-throughputs " +
                        ShellQuote(TestDataPath("trace/gavel_throughputs.json")) + " " +
                        ShellQuote(TestDataPath("trace/gavel_small.trace")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["durations_known"], true);
  EXPECT_DOUBLE_EQ(j["duration_s"]["max"].get<double>(), 79561.0 / 250.0);
  EXPECT_NE(r.err.find("2 derived"), std::string::npos) << r.err;
  auto wrong = RunSchedmate("trace stats --gavel-throughputs " +
                            ShellQuote(TestDataPath("trace/gavel_throughputs.json")) + " " +
                            ShellQuote(TestDataPath("trace/gpw.csv")));
  EXPECT_EQ(wrong.exit_code, 2);
}

}  // namespace
}  // namespace schedmate::trace

namespace schedmate::trace {
namespace {

// --out into an existing non-regular file (a FIFO here, /dev/null in practice) must write into
// it, not replace it with a regular file via the atomic rename.
TEST(TraceCliTest, OutputIntoFifoKeepsTheFifo) {
  TempDir dir;
  const std::string fifo = dir.File("pipe");
  const std::string got = dir.File("got.csv");
  auto r =
      testing::RunShell("mkfifo " + ShellQuote(fifo) + " && (cat " + ShellQuote(fifo) + " > " +
                        ShellQuote(got) + " &) && " + ShellQuote(testing::SchedmateBinary()) +
                        " trace convert " + ShellQuote(TestDataPath("trace/gpw.csv")) + " --out " +
                        ShellQuote(fifo) + " && sleep 0.2 && test -p " + ShellQuote(fifo));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto contents = ReadFileToString(got);
  ASSERT_OK(contents);
  EXPECT_EQ(contents->rfind("job_id,user,vc,gpu_num", 0), 0u) << *contents;
}

}  // namespace
}  // namespace schedmate::trace
