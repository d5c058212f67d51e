// `schedmate report` as a process: a seeded store file gives the numbers in --json, aligned text
// tables and an HTML page with inline plots; bad periods are usage errors (exit 2) naming the flag;
// a missing store is exit 1 naming the path.

#include <gtest/gtest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "service/service_store.h"
#include "store/history_store.h"
#include "store/sqlite_db.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using testing::RunSchedmate;
using testing::ShellQuote;
using testing::TempDir;

const SimTime kT0 = SimTime::FromSeconds(1793491200);  // 2026-11-01T00:00:00Z

store::StoredJob Ended(const std::string& id, const std::string& user, const std::string& vc,
                       int gpus, int64_t submit_s, int64_t start_s, int64_t run_s, JobState st) {
  store::StoredJob j;
  j.job.id = id;
  j.job.user = user;
  j.job.vc = vc;
  j.job.gpus = GpuAmount::Whole(gpus);
  j.job.submit = kT0 + Duration::Seconds(submit_s);
  j.job.duration = Duration::Seconds(run_s);
  j.job.state = st;
  j.finish = kT0 + Duration::Seconds(start_s + run_s);
  return j;
}

class ReportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = std::move(store::SqliteDb::Open(store_)).value();
    auto history = std::move(store::SqliteHistoryStore::Attach(*db)).value();
    auto service = std::move(service::ServiceStore::Attach(*db)).value();
    // 4 GPUs x 2 h completed (waited 30 min), 2 GPUs x 1 h timed out (no wait).
    ASSERT_OK(
        history->PutJob(Ended("11", "alice", "a100", 4, 0, 1800, 7200, JobState::kCompleted)));
    ASSERT_OK(history->PutJob(Ended("12", "bob", "v100", 2, 3600, 3600, 3600, JobState::kTimeout)));
    ASSERT_OK(history->PutPrediction({"11", kT0, "advisor", Duration::Hours(3), Duration::Hours(1),
                                      Duration::Hours(4), 0.6, "", ""}));
  }
  std::string Args(const std::string& extra) const {
    return "report --store " + ShellQuote(store_) +
           " --since 2026-11-01 --until 2026-11-02T00:00 " + extra;
  }
  TempDir dir_;
  std::string store_ = dir_.File("schedmate.db");
};

TEST_F(ReportCliTest, JsonHasTheSeededNumbers) {
  auto r = RunSchedmate(Args("--json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["since"], kT0.seconds());
  EXPECT_EQ(j["until"], kT0.seconds() + 86400);
  EXPECT_EQ(j["runs_in_period"], 2);
  EXPECT_DOUBLE_EQ(j["gpu_hours"]["allocated"].get<double>(), 10);
  EXPECT_TRUE(j["gpu_hours"]["used"].is_null());
  EXPECT_EQ(j["by_partition"][0]["name"], "a100");
  EXPECT_DOUBLE_EQ(j["by_partition"][0]["allocated_gpu_hours"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(j["queueing"].back()["avg_wait_s"].get<double>(), 900);
  EXPECT_EQ(j["prediction_accuracy"]["jobs"], 1);
  EXPECT_DOUBLE_EQ(j["prediction_accuracy"]["within_2x"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(j["prediction_accuracy"]["p10_p90_coverage"].get<double>(), 1);
}

TEST_F(ReportCliTest, TextTablesAreAligned) {
  auto r = RunSchedmate(Args(""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The partition table: header and rows have their right-aligned columns ending together.
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> table;
  bool in = false;
  while (std::getline(lines, line)) {
    if (line == "GPU-hours by partition") {
      in = true;
      continue;
    }
    if (in && line.empty()) break;
    if (in) table.push_back(line);
  }
  ASSERT_EQ(table.size(), 3u) << r.out;
  EXPECT_EQ(table[0].size(), table[1].size());
  EXPECT_EQ(table[1].size(), table[2].size());
  EXPECT_NE(table[1].find("a100"), std::string::npos);
  EXPECT_NE(table[1].find("8.0"), std::string::npos);
  EXPECT_NE(table[1].find("unknown"), std::string::npos);  // used GPU-hours not tracked
}

TEST_F(ReportCliTest, HtmlPageWithInlinePlots) {
  const std::string html = dir_.File("r.html");
  auto r = RunSchedmate(Args("--json --html " + ShellQuote(html)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(html);
  std::stringstream body;
  body << in.rdbuf();
  EXPECT_EQ(body.str().rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(body.str().find("<svg"), std::string::npos);
  EXPECT_NE(body.str().find("<td>a100</td>"), std::string::npos);
}

TEST_F(ReportCliTest, BadPeriodIsAUsageErrorNamingTheFlag) {
  struct Case {
    const char* args;
    const char* flag;
  } cases[] = {{"--since 7x", "--since"},
               {"--since 2026-11-31", "--since"},
               {"--since 7d --until tomorrow", "--until"},
               {"--since 2026-11-02 --until 2026-11-01", "--until"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    auto r = RunSchedmate("report --store " + ShellQuote(store_) + " " + c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.flag), std::string::npos) << r.err;
  }
}

TEST_F(ReportCliTest, MissingStoreIsAnErrorNamingThePath) {
  const std::string missing = dir_.File("none.db");
  auto r = RunSchedmate("report --store " + ShellQuote(missing) + " --since 7d");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  EXPECT_FALSE(std::ifstream(missing).good());  // not created
}

TEST(ReportCliApiTest, AsksTheServiceWithThePeriodAsGiven) {
  httplib::Server server;
  std::string since, until, format;
  server.Get("/v1/report", [&](const httplib::Request& req, httplib::Response& res) {
    since = req.get_param_value("since");
    until = req.get_param_value("until");
    format = req.get_param_value("format");
    res.set_content(R"({"runs_in_period": 3})", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread thread([&] { server.listen_after_bind(); });
  auto r = RunSchedmate("report --api http://127.0.0.1:" + std::to_string(port) +
                        " --since 2026-11-01T00:00Z --until 2026-11-02T06:00 --json");
  server.stop();
  thread.join();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["runs_in_period"], 3);
  EXPECT_EQ(since, "2026-11-01T00:00Z");
  EXPECT_EQ(until, "2026-11-02T06:00");
  EXPECT_EQ(format, "json");
}

TEST(ReportCliApiTest, NoServiceIsAnError) {
  auto r = RunSchedmate("report --api http://127.0.0.1:1 --since 7d");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace schedmate
