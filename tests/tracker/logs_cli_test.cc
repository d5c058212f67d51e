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
