// Deterministic mutation testing: every fixture, randomly corrupted thousands of times, through
// every reader in both error modes. The readers must return a Status or a table whose counts add
// up, never crash (run this binary under ASan/UBSan to check memory safety too).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/file_util.h"
#include "core/rng.h"
#include "testing/test_util.h"
#include "trace/cluster_config.h"
#include "trace/estimates.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

std::string Mutate(std::string s, Rng& rng) {
  static const char kSpecial[] = {',', '"', '\n', '\r', '\t', ' ',    ';', '-',
                                  '.', '0', '9',  'e',  '\0', '\xff', '('};
  const int edits = 1 + static_cast<int>(rng.Below(4));
  for (int e = 0; e < edits; ++e) {
    const size_t pos = s.empty() ? 0 : rng.Below(s.size());
    switch (rng.Below(5)) {
      case 0:  // replace a byte
        if (!s.empty()) s[pos] = kSpecial[rng.Below(sizeof kSpecial)];
        break;
      case 1:  // insert a byte
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(pos),
                 kSpecial[rng.Below(sizeof kSpecial)]);
        break;
      case 2:  // delete a run
        s.erase(pos, rng.Below(8));
        break;
      case 3:  // truncate
        s.resize(pos);
        break;
      default:  // duplicate a run
        s.insert(pos, s.substr(pos, rng.Below(30)));
        break;
    }
  }
  return s;
}

TEST(RobustnessTest, MutatedFixturesNeverCrashAndCountsAddUp) {
  const std::vector<std::string> fixtures = {
      "lucid_jobs.csv", "lucid_full_log.csv", "lucid_crlf.csv",    "gpw.csv",    "sdsc95.csv",
      "chronus.csv",    "tiresias.csv",       "gavel_small.trace", "pollux.csv", "openb.csv",
      "small.swf",      "sacct_small.txt",    "sacct_small.json"};
  const TraceFormat formats[] = {TraceFormat::kAuto,    TraceFormat::kLucid, TraceFormat::kGpw,
                                 TraceFormat::kChronus, TraceFormat::kGavel, TraceFormat::kPollux,
                                 TraceFormat::kOpenb,   TraceFormat::kSwf,   TraceFormat::kSacct};
  Rng rng(20261122);
  int ok = 0, errors = 0;
  for (const auto& name : fixtures) {
    auto original = ReadFileToString(testing::TestDataPath("trace/" + name));
    ASSERT_OK(original);
    for (int i = 0; i < 300; ++i) {
      const std::string data = Mutate(*original, rng);
      const TraceFormat f = formats[rng.Below(std::size(formats))];
      TraceReadOptions o;
      o.format = f;
      o.skip_malformed = rng.Below(2) == 0;
      auto r = ParseTrace(data, name, o);
      if (r.ok()) {
        ++ok;
        ASSERT_LE(static_cast<int64_t>(r->jobs.size()) + r->rows_skipped, r->rows_read) << name;
        ASSERT_LE(r->skip_reasons.size(), 10u);
        for (const auto& j : r->jobs) {
          ASSERT_GE(j.duration, Duration::Zero());
          ASSERT_GE(j.gpus.milli(), 0);
        }
      } else {
        ++errors;
        ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
        ASSERT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
      }
      (void)ParseVcConfig(data, name);
      (void)ParseEstimates(data, name);
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(errors, 0);
}

}  // namespace
}  // namespace schedmate::trace
