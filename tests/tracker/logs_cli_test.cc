// CLI-level tests of `schedmate logs metrics` through the built binary.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "corpus_score.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using testing::RunSchedmate;
using testing::RunShell;
using testing::ShellQuote;
using testing::TempDir;
using testing::TestDataPath;

nlohmann::json Json(const std::string& s) { return nlohmann::json::parse(s); }

TEST(LogsMetricsCliTest, JsonShapeOfTheLatestRecord) {
  auto r =
      RunSchedmate("logs metrics " + ShellQuote(TestDataPath("tracker/keras.log")) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = Json(r.out);
  for (const char* k :
       {"found", "line_no", "line", "step", "total_steps", "epoch", "total_epochs", "loss",
        "losses", "lr", "step_time_s", "throughput", "eta_s", "format", "signals", "progress"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_TRUE(j["found"].get<bool>());
  EXPECT_EQ(j["line_no"], 7);
  EXPECT_EQ(j["step"], 120);
  EXPECT_EQ(j["epoch"], 3.0);
  EXPECT_EQ(j["total_epochs"], 3);
  EXPECT_TRUE(j["lr"].is_null());
  EXPECT_NEAR(j["step_time_s"].get<double>(), 0.065, 1e-9);
  EXPECT_TRUE(j["signals"].contains("stalled"));
}

TEST(LogsMetricsCliTest, NoProgressGivesFoundFalse) {
  auto r = RunSchedmate("logs metrics " + ShellQuote(TestDataPath("tracker/negative_predict.log")) +
                        " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = Json(r.out);
  EXPECT_FALSE(j["found"].get<bool>());
  EXPECT_TRUE(j["step"].is_null());
  EXPECT_TRUE(j["line_no"].is_null());
}

TEST(LogsMetricsCliTest, MissingFileFailsWithThePath) {
  auto r = RunSchedmate("logs metrics /no/such/dir/job-123.log --json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/no/such/dir/job-123.log"), std::string::npos) << r.err;
}

TEST(LogsMetricsCliTest, HumanReadableOutput) {
  auto r = RunSchedmate("logs metrics " + ShellQuote(TestDataPath("tracker/megatron.log")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("step 200/500000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("loss 6.54321"), std::string::npos) << r.out;
}

TEST(LogsMetricsCliTest, AllGivesTheSeriesAndPlotWritesSvg) {
  TempDir dir;
  const std::string svg = dir.File("m.svg");
  auto r = RunSchedmate("logs metrics " + ShellQuote(TestDataPath("tracker/restart.log")) +
                        " --json --all --plot " + ShellQuote(svg));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = Json(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 9u);
  EXPECT_EQ(j[0]["step"], 100);
  EXPECT_EQ(j[8]["run"], 1);
  std::ifstream in(svg);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("<svg"), std::string::npos);
  EXPECT_NE(ss.str().find("training loss"), std::string::npos);
}

TEST(LogsMetricsCliTest, FollowStreamsAppendedRecords) {
  TempDir dir;
  const std::string log = dir.File("live.log");
  { std::ofstream(log) << "step 1/10 loss 0.9\n"; }
  const std::string cmd = "( sleep 0.6; printf 'step 2/10 loss 0.8\\n' >> " + ShellQuote(log) +
                          "; sleep 0.4; mv " + ShellQuote(log) + " " + ShellQuote(log + ".1") +
                          "; printf 'step 1/10 loss 1.5\\n' > " + ShellQuote(log) + " ) & " +
                          ShellQuote(testing::SchedmateBinary()) + " logs metrics " +
                          ShellQuote(log) + " --follow --json --poll-ms 50 --idle-exit 1.5; wait";
  auto r = RunShell(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) lines.push_back(Json(l));
  }
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["step"], 1);
  EXPECT_EQ(lines[1]["step"], 2);
  EXPECT_EQ(lines[2]["step"], 1);  // the rotated file starts again
  EXPECT_EQ(lines[2]["line_no"], 1);
}

// copytruncate between two polls, the new content longer than what was read: the size never
// shrinks at a poll, so only the changed first bytes show that the file was rewritten. The old
// follower went on at the old offset, in the middle of the new first line.
TEST(LogsMetricsCliTest, FollowNoticesTruncateAndRewriteBetweenPolls) {
  TempDir dir;
  const std::string log = dir.File("live.log");
  { std::ofstream(log) << "step 1/10 loss 0.9\n"; }
  const std::string fresh = dir.File("fresh");
  {
    std::ofstream(fresh)
        << "== a new run starts here, restarted by the scheduler ==\nstep 1/10 loss 1.5\n";
  }
  const std::string cmd = "( sleep 0.6; cat " + ShellQuote(fresh) + " > " + ShellQuote(log) +
                          " ) & " + ShellQuote(testing::SchedmateBinary()) + " logs metrics " +
                          ShellQuote(log) + " --follow --json --poll-ms 50 --idle-exit 1.2; wait";
  auto r = RunShell(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) lines.push_back(Json(l));
  }
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[1]["step"], 1);
  EXPECT_EQ(lines[1]["loss"], 1.5);
  EXPECT_EQ(lines[1]["line_no"], 2);  // numbered from the new file's start
}

// Defect 7: every numeric option is checked when the command line is parsed (exit 2); --poll-ms 0
// made --follow spin.
TEST(LogsMetricsCliTest, NumericOptionsAreValidatedAtParseTime) {
  const std::string log = ShellQuote(TestDataPath("tracker/keras.log"));
  struct Case {
    const char* name;
    const char* args;
  };
  for (const Case& c : {Case{"zero poll interval", "--follow --poll-ms 0 --idle-exit 0.2"},
                        Case{"negative poll interval", "--poll-ms -5"},
                        Case{"negative idle exit", "--idle-exit -1"},
                        Case{"nan stall factor", "--stall-factor nan"},
                        Case{"zero stall factor", "--stall-factor 0"},
                        Case{"negative slowdown share", "--slowdown-share -0.2"},
                        Case{"infinite slowdown share", "--slowdown-share inf"}}) {
    SCOPED_TRACE(c.name);
    auto r = RunShell("timeout -k 5 20 " + ShellQuote(testing::SchedmateBinary()) +
                      " logs metrics " + log + " --json " + c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_EQ(RunSchedmate("logs metrics " + log + " --json --stall-factor 3 --slowdown-share 0.5")
                .exit_code,
            0);
}

// Devices and FIFOs: /dev/zero used to look like an empty log, and a FIFO blocked the open
// forever. Both are refused at once, naming the path.
TEST(LogsMetricsCliTest, DevicesAndFifosAreRefusedQuickly) {
  TempDir dir;
  const std::string fifo = dir.File("fifo.log");
  ASSERT_EQ(RunShell("mkfifo " + ShellQuote(fifo)).exit_code, 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo}) {
    for (const char* mode : {"", " --full-scan", " --all", " --follow --idle-exit 1"}) {
      SCOPED_TRACE(path + mode);
      auto r = RunShell("timeout -k 5 20 " + ShellQuote(testing::SchedmateBinary()) +
                        " logs metrics " + ShellQuote(path) + " --json" + mode);
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    }
  }
}

// Defect 7: `--exemplars /bin/ls` printed the binary's bytes in its error. A binary file is
// refused by name; a text file with a bad line is refused by file:line; neither echoes raw bytes.
TEST(LogsMetricsCliTest, BinaryOrNonUtf8ExemplarFilesAreRefusedByName) {
  TempDir dir;
  const std::string bad = dir.File("exemplars.txt");
  {
    std::ofstream(bad, std::ios::binary)
        << "progress step 1/10 loss 0.5\nother hello\nother caf\xe9 \x01\n";
  }
  const std::string log = ShellQuote(TestDataPath("tracker/keras.log"));
  auto clean = [](const std::string& s) {
    for (unsigned char c : s) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return false;
    }
    return true;
  };
  auto bin =
      RunSchedmate("logs metrics " + log +
                   " --json --filter embeddings --filter-embedder hashing --exemplars /bin/ls");
  EXPECT_EQ(bin.exit_code, 1);
  EXPECT_NE(bin.err.find("/bin/ls"), std::string::npos) << bin.err;
  EXPECT_TRUE(clean(bin.err));
  EXPECT_LT(bin.err.size(), 400u);
  auto text = RunSchedmate("logs metrics " + log +
                           " --json --filter embeddings --filter-embedder hashing --exemplars " +
                           ShellQuote(bad));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.err.find(bad + ":3"), std::string::npos) << text.err;
  EXPECT_TRUE(clean(text.err));
}

TEST(LogsMetricsCliTest, SharedCorpusScoresAtLeast97Percent) {
  // Both development folders (training-logs/ and training-logs-2/, 60 logs).
  SM_SKIP_WITHOUT_SHARED(corpus, "corpus/training-logs");
  SM_SKIP_WITHOUT_SHARED(scorer, "tools/score_tracker.py");
  const auto score = testing::ScoreBothTrackerCorpora(scorer, corpus);
  ASSERT_GT(score.total, 0);
  EXPECT_GE(score.good * 100, score.total * 97) << score.output;
}

}  // namespace
}  // namespace schedmate
