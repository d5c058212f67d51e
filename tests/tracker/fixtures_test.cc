// Data-driven tests: every tests/data/tracker/<name>.log has <name>.expect.json holding the
// expected latest training record (keys as in `schedmate logs metrics --json`; "signals.x" for
// derived signals; "format_contains" for the format name).

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/test_util.h"
#include "tracker/log_scan.h"

namespace schedmate::tracker {
namespace {

nlohmann::json Actual(const ScanResult& r) {
  nlohmann::json j;
  j["found"] = r.latest.has_value();
  if (!r.latest) return j;
  const auto& v = r.latest->v;
  auto opt = [](const auto& o) { return o ? nlohmann::json(*o) : nlohmann::json(nullptr); };
  j["line_no"] = r.latest->line_no;
  j["step"] = opt(v.step);
  j["total_steps"] = opt(v.total_steps);
  j["epoch"] = opt(v.epoch);
  j["total_epochs"] = opt(v.total_epochs);
  j["loss"] = v.loss && std::isfinite(*v.loss) ? nlohmann::json(*v.loss) : nlohmann::json(nullptr);
  j["losses"] = v.losses;
  j["lr"] = opt(v.lr);
  j["step_time_s"] = opt(v.step_time_s);
  j["eta_s"] = opt(v.eta_s);
  j["run"] = r.latest->run;
  j["format"] = r.latest->format;
  if (v.throughput)
    j["throughput"] = {{"value", v.throughput->value}, {"unit", v.throughput->unit}};
  j["signals.loss_nan"] = r.signals.loss_nan;
  j["signals.slowdown"] = r.signals.slowdown;
  j["signals.stalled"] = r.signals.stalled;
  j["signals.restarts"] = r.signals.restarts;
  return j;
}

void ExpectMatch(const nlohmann::json& want, const nlohmann::json& got, const std::string& key) {
  SCOPED_TRACE(key);
  if (want.is_number()) {
    ASSERT_TRUE(got.is_number()) << got;
    const double w = want.get<double>(), g = got.get<double>();
    EXPECT_NEAR(g, w, 1e-6 * std::max(1.0, std::fabs(w)));
  } else if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << got;
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key())) << it.key();
      ExpectMatch(it.value(), got[it.key()], key + "." + it.key());
    }
  } else {
    EXPECT_EQ(got, want);
  }
}

TEST(FixtureLogsTest, LatestRecordMatchesExpectations) {
  const std::string dir = schedmate::testing::TestDataPath("tracker");
  int checked = 0;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().string().ends_with(".expect.json")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& exp : files) {
    const std::string log = exp.substr(0, exp.size() - std::string(".expect.json").size()) + ".log";
    SCOPED_TRACE(log);
    nlohmann::json want = nlohmann::json::parse(std::ifstream(exp));
    ScanOptions options;
    auto r = ScanLog(log, options);
    ASSERT_OK(r);
    nlohmann::json got = Actual(*r);
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (it.key() == "format_contains") {
        EXPECT_NE(got["format"].get<std::string>().find(it.value().get<std::string>()),
                  std::string::npos);
        continue;
      }
      ASSERT_TRUE(got.contains(it.key())) << it.key() << " missing in " << got.dump();
      ExpectMatch(it.value(), got[it.key()], it.key());
    }
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

TEST(FixtureLogsTest, ReverseScanAgreesWithFullScan) {
  // A log larger than the reverse threshold: the tail window must give the same latest record.
  schedmate::testing::TempDir tmp;
  const std::string path = tmp.File("big.log");
  {
    std::ofstream out(path);
    for (int i = 1; i <= 20000; ++i) {
      out << "2024-01-01 10:00:00 INFO epoch " << (i / 1000) << " step " << i << "/20000 loss "
          << 5.0 / i << " lr 0.001 time 0.25\n";
      if (i % 97 == 0) out << "WARNING: something harmless happened at iteration " << i << "\n";
    }
  }
  ScanOptions full;
  full.allow_reverse = false;
  ScanOptions rev;
  rev.reverse_min_bytes = 64 * 1024;
  rev.reverse_initial_window = 16 * 1024;
  auto a = ScanLog(path, full);
  auto b = ScanLog(path, rev);
  ASSERT_OK(a);
  ASSERT_OK(b);
  ASSERT_TRUE(a->latest && b->latest);
  EXPECT_TRUE(b->reverse);
  EXPECT_LT(b->scanned_bytes, a->scanned_bytes);
  EXPECT_EQ(a->latest->line_no, b->latest->line_no);
  EXPECT_EQ(a->latest->v.step, b->latest->v.step);
  EXPECT_EQ(a->latest->line, b->latest->line);
}

TEST(LineIndexTest, CheckpointsAreReusedAndInvalidated) {
  schedmate::testing::TempDir tmp;
  const std::string path = tmp.File("lines.log");
  const std::string index = tmp.File("index");
  std::string text;
  for (int i = 0; i < 3'000'000; ++i) text += "line " + std::to_string(i) + "\n";  // ~38 MB
  { std::ofstream(path) << text; }
  auto f = LogFile::Open(path);
  ASSERT_OK(f);
  const std::string_view data = text;
  const size_t end = data.size() - 100;
  const uint64_t want = CountNewlines(data.substr(0, end));
  auto counted = [](const LogFile& file, uint64_t upto, const std::string& dir) {
    auto r = CountLinesIndexed(file, upto, dir);
    EXPECT_OK(r);
    return r.ok() ? *r : ~uint64_t{0};
  };
  EXPECT_EQ(counted(**f, end, index), want);  // builds the index
  EXPECT_FALSE(std::filesystem::is_empty(index));
  EXPECT_EQ(counted(**f, end, index), want);  // reads it
  // Same inode, different content: the checkpoints must not be trusted.
  std::string other = "x\nx\n" + text.substr(4);
  { std::ofstream(path, std::ios::trunc) << other; }
  auto g = LogFile::Open(path);
  ASSERT_OK(g);
  EXPECT_EQ(counted(**g, end, index), CountNewlines(std::string_view(other).substr(0, end)));
  EXPECT_EQ(counted(**g, 10, ""), CountNewlines(std::string_view(other).substr(0, 10)));
}

}  // namespace
}  // namespace schedmate::tracker
