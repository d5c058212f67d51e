// Data-driven: every tests/data/failure/<name>.log has <name>.log.expect with the expected
// root-cause line, label, category and optionally nodes and checkpoint.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "core/file_util.h"
#include "core/strings.h"
#include "failure/failure_handler.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

std::map<std::string, std::string> ReadExpect(const std::string& path) {
  auto text = ReadFileToString(path);
  SM_CHECK(text.ok()) << text.status().ToString();
  std::map<std::string, std::string> out;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    out[std::string(Trim(line.substr(0, colon)))] = std::string(Trim(line.substr(colon + 1)));
  }
  return out;
}

TEST(FailureFixturesTest, EveryFixtureMatchesItsExpectation) {
  auto sigs = SignatureSet::Builtin();
  ASSERT_OK(sigs);
  FailureHandler handler(*sigs, nullptr);
  std::vector<std::string> logs;
  for (const auto& e : std::filesystem::directory_iterator(testing::TestDataPath("failure"))) {
    if (e.path().extension() == ".log") logs.push_back(e.path().string());
  }
  std::sort(logs.begin(), logs.end());
  ASSERT_GE(logs.size(), 25u);
  for (const auto& path : logs) {
    SCOPED_TRACE(path);
    auto want = ReadExpect(path + ".expect");
    ASSERT_TRUE(want.count("root_line") && want.count("label")) << "incomplete .expect";
    auto log = LogView::OpenFile(path);
    ASSERT_OK(log);
    auto d = handler.Diagnose(*log);
    ASSERT_OK(d);
    int64_t root = d->root_cause ? d->root_cause->line_no : 0;
    EXPECT_EQ(std::to_string(root), want["root_line"]);
    EXPECT_EQ(FailureLabelName(d->label), want["label"]);
    if (want.count("category")) {
      EXPECT_EQ(d->category, want["category"]);
    }
    if (d->label != FailureLabel::kUnknown) {
      EXPECT_GE(d->confidence, 0.45);
    }
    if (want.count("nodes")) {
      std::string nodes;
      for (const auto& n : d->nodes) nodes += (nodes.empty() ? "" : ",") + n;
      EXPECT_EQ(nodes, want["nodes"]);
    }
    if (want.count("checkpoint")) {
      EXPECT_EQ(d->checkpoint.value_or(""), want["checkpoint"]);
    }
    EXPECT_LE(d->classifier_calls, 4);  // small logs: one probe, one scoring, one classification
  }
}

}  // namespace
}  // namespace schedmate::failure
