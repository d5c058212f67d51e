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

// Issue 17, defect 5: gpu_num 1e308 became gpus_milli = INT64_MIN, so `trace stats` printed
// negative GPU-hours and `convert` wrote "--9223372036854775.-808". Now the row is a file:line
// error naming the field, or skipped and counted.
TEST(TraceCliTest, OutOfRangeValuesAreFileLineErrors) {
  TempDir dir;
  const std::string path = dir.File("huge.csv");
  ASSERT_OK(WriteStringToFile(path,
                              "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s\n"
                              "1,u,v,1,1,COMPLETED,0,10\n"
                              "2,u,v,1e308,1,COMPLETED,0,10\n"));
  for (const char* cmd : {"trace stats", "trace convert"}) {
    SCOPED_TRACE(cmd);
    auto r = RunSchedmate(std::string(cmd) + " " + ShellQuote(path));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(path + ":3: gpu_num"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("-9223372036854775"), std::string::npos) << r.out;
  }
  auto stats = RunSchedmate("trace stats --skip-malformed --json " + ShellQuote(path));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  auto j = nlohmann::json::parse(stats.out);
  EXPECT_EQ(j["rows_skipped"], 1);
  EXPECT_GE(j["gpu_hours"].get<double>(), 0);
  auto conv = RunSchedmate("trace convert --skip-malformed " + ShellQuote(path));
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  EXPECT_EQ(conv.out.find("--"), std::string::npos) << conv.out;
}

// Numeric options of the trace commands: validated at parse time, exit 2 naming the option
// (before: --cluster-gpus -5 exited 1 after reading the trace; NaN and inf were accepted).
TEST(TraceCliTest, NumericOptionsAreUsageErrors) {
  const std::string gen =
      "trace generate --from " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")) + " --jobs 5 ";
  const std::string conv =
      "trace convert " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")) + " ";
  struct Case {
    std::string args;
    const char* option;
  };
  const Case cases[] = {
      {gen + "--cluster-gpus -5", "--cluster-gpus"},
      {gen + "--cluster-gpus 0", "--cluster-gpus"},
      {gen + "--cluster-gpus 2000000000", "--cluster-gpus"},
      {gen + "--cluster-gpus 64 --target-load nan", "--target-load"},
      {gen + "--cluster-gpus 64 --target-load inf", "--target-load"},
      {gen + "--cluster-gpus 64 --target-load 0", "--target-load"},
      {gen + "--target-load 0.5", "--target-load"},  // needs --cluster-gpus
      {gen + "--load-factor nan", "--load-factor"},
      {gen + "--load-factor inf", "--load-factor"},
      {gen + "--load-factor -2", "--load-factor"},
      {gen + "--load-factor 0", "--load-factor"},
      {gen + "--span-days nan", "--span-days"},
      {gen + "--span-days 0", "--span-days"},
      {gen + "--span-days 1e300", "--span-days"},
      {gen + "--gpus-per-node 0", "--gpus-per-node"},
      {gen + "--seed -1", "--seed"},
      {"trace generate --from " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")) +
           " --jobs 100000000000",
       "--jobs"},
      {"trace generate --from " + ShellQuote(TestDataPath("trace/lucid_jobs.csv")) + " --jobs -1",
       "--jobs"},
      {conv + "--cluster-gpus -5", "--cluster-gpus"},
      {conv + "--gpus-per-node 5000", "--gpus-per-node"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    auto r = RunSchedmate(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.option), std::string::npos) << r.err;
  }
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
