// The dashboard in a real browser: serves the API over the fake scene and runs
// web/tests/dashboard.test.mjs (playwright-core driving Debian's /usr/bin/chromium) against it.
// Skips when chromium, node or web/node_modules/playwright-core is missing
// (apt-get install chromium; npm ci --ignore-scripts --prefix web).
// SCHEDMATE_DASHBOARD_SCREENSHOT=<png> keeps the screenshot; otherwise it goes to a temp dir.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "dashboard_fixture.h"

namespace schedmate::api {
namespace {

using schedmate::testing::RunShell;
using schedmate::testing::ShellQuote;

class DashboardBrowserTest : public testing::DashboardFixture {};

// Also the other pages: anomalies (a stalled job), job 103's why-answer (pending on Resources)
// and a what-if run (two nodes of 8 GPUs added), each compared field by field with the API.
TEST_F(DashboardBrowserTest, ShowsTheQueueFailuresNodesAndChartsAsText) {
  namespace fs = std::filesystem;
  const std::string web = std::string(SCHEDMATE_SOURCE_DIR) + "/web";
  const char* chromium_env = std::getenv("CHROMIUM");
  const std::string chromium = chromium_env != nullptr ? chromium_env : "/usr/bin/chromium";
  if (!fs::exists(chromium)) GTEST_SKIP() << chromium << " missing: apt-get install -y chromium";
  if (!fs::exists(web + "/node_modules/playwright-core/package.json"))
    GTEST_SKIP()
        << "web/node_modules/playwright-core missing: npm ci --ignore-scripts --prefix web";
  if (RunShell("command -v node").exit_code != 0) GTEST_SKIP() << "node not on PATH";

  // The what-if page replays the whatif tests' site (30 sacct jobs, 2 nodes of 8 GPUs).
  config_.whatif_trace = schedmate::testing::TestDataPath("sim/whatif/sacct.txt");
  config_.whatif_slurm_conf = schedmate::testing::TestDataPath("sim/whatif/slurm.conf");
  StartWithScene();
  // Three more minutes without a step line from gpt-eval: the tracker's stall has lasted past
  // the anomaly's minimum, so it is flagged.
  clock_.Advance(Duration::Minutes(3));
  ASSERT_OK(companion_->Tick());
  auto anomalies = client_->Get("/v1/anomalies");
  ASSERT_TRUE(anomalies && anomalies->status == 200);
  auto list = nlohmann::json::parse(anomalies->body);
  if (list.is_object()) list = list["anomalies"];
  bool stalled = false;
  for (const auto& a : list) stalled |= a["kind"] == "stalled" && a.value("job_id", "") == "105";
  ASSERT_TRUE(stalled) << list.dump();
  auto why = client_->Get("/v1/jobs/103/why");
  ASSERT_TRUE(why && why->status == 200);
  EXPECT_EQ(nlohmann::json::parse(why->body)["reason_code"], "Resources");
  const char* keep = std::getenv("SCHEDMATE_DASHBOARD_SCREENSHOT");
  std::string shot = keep != nullptr && *keep != '\0' ? keep : dir_.File("dashboard.png");
  std::string cmd = fmt::format(
      "CHROMIUM={} node {} --url http://127.0.0.1:{}/ --screenshot {} --expect-jobs 6 "
      "--expect-stalled 1 "
      "--expect-failures 2 --expect-nodes 4 --xss-job 102 --expect-anomalies {} --why-job 103 "
      "--expect-reason Resources --whatif {} --expect-whatif-gpus 16,32 2>&1",
      ShellQuote(chromium), ShellQuote(web + "/tests/dashboard.test.mjs"), server_->port(),
      ShellQuote(shot), list.size(), ShellQuote(R"({"add_nodes":["2x8"],"seeds":2})"));
  auto run = RunShell(cmd);
  EXPECT_EQ(run.exit_code, 0) << cmd << "\n" << run.out << run.err;
  EXPECT_NE(run.out.find("checks passed"), std::string::npos) << run.out;
  ASSERT_TRUE(fs::exists(shot)) << shot;
  EXPECT_GT(fs::file_size(shot), 10000u) << "screenshot suspiciously small";
}

}  // namespace
}  // namespace schedmate::api
