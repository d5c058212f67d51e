#pragma once
// Runs ../shared/tools/score_tracker.py over the shared training-log corpus with the built binary
// (`schedmate logs metrics --json` plus `extra_args`) and returns "good/total" from its summary.

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "testing/test_util.h"

namespace schedmate::testing {

struct TrackerScore {
  int good = 0;
  int total = 0;
  std::string output;  // the scorer's stdout, for failure messages
};

// Fails the calling test (and returns total 0) when the scorer does not run or print its summary.
inline TrackerScore ScoreTrackerCorpus(const std::string& scorer, const std::string& corpus,
                                       const std::string& extra_args = "") {
  TrackerScore s;
  auto r = RunShell("python3 " + ShellQuote(scorer) + " " + ShellQuote(corpus) + " -- " +
                    ShellQuote(SchedmateBinary()) + " logs metrics --json " + extra_args);
  s.output = r.out;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex(R"(tracker: (\d+)/(\d+) logs correct)"))) {
    ADD_FAILURE() << "no scorer summary in: " << r.out;
    return s;
  }
  s.good = std::stoi(m[1]);
  s.total = std::stoi(m[2]);
  return s;
}

// Both development folders of the shared log corpus (training-logs/ and training-logs-2/), summed;
// a folder that is absent is skipped (total counts only what was scored).
inline TrackerScore ScoreBothTrackerCorpora(const std::string& scorer, const std::string& first,
                                            const std::string& extra_args = "") {
  TrackerScore all = ScoreTrackerCorpus(scorer, first, extra_args);
  const std::string second = first + "-2";
  if (std::filesystem::exists(second + "/labels.jsonl")) {
    TrackerScore more = ScoreTrackerCorpus(scorer, second, extra_args);
    all.good += more.good;
    all.total += more.total;
    all.output += more.output;
  }
  return all;
}

}  // namespace schedmate::testing
