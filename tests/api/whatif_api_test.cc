// POST /v1/whatif: the same run as `schedmate whatif` (sim/whatif_run.h) on the service's site,
// fields named in 400s, one run at a time (429), and the runner's timeout.

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/api_server.h"
#include "api/whatif_runner.h"
#include "api_fixture.h"
#include "sim/whatif_run.h"
#include "testing/test_util.h"
#include "trace/trace_reader.h"

namespace schedmate::api {
namespace {

using nlohmann::json;
using schedmate::testing::TestDataPath;

class WhatIfApiTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    cluster_.AddNode("gpu1", 8);
    cluster_.AddNode("gpu2", 8);
  }
  // The whatif tests' site: 30 sacct jobs on 2 nodes of 8 GPUs (tests/data/sim/whatif).
  void UseTestSite() {
    config_.whatif_trace = TestDataPath("sim/whatif/sacct.txt");
    config_.whatif_slurm_conf = TestDataPath("sim/whatif/slurm.conf");
  }
  void Start() {
    cluster_.Render();
    CreateCompanion();
    StartServer();
  }
  httplib::Result Post(const std::string& body) {
    return client_->Post("/v1/whatif", body, "application/json");
  }
  // What the shared run answers for `scenario` on the test site (what `schedmate whatif` prints).
  static json Direct(const sim::WhatIfScenario& scenario) {
    sim::WhatIfSite site;
    EXPECT_TRUE(sim::LoadSiteFromSlurmConf(TestDataPath("sim/whatif/slurm.conf"), true, site).ok());
    site.history = trace::ReadTrace(TestDataPath("sim/whatif/sacct.txt"), {}).value();
    EXPECT_TRUE(sim::PrepareWhatIfHistory(site).ok());
    auto setup = sim::SetUpWhatIf(site, scenario, {}, nullptr);
    EXPECT_TRUE(setup.ok()) << setup.status().message();
    auto report = sim::RunWhatIf(site, *setup, scenario, {});
    EXPECT_TRUE(report.ok()) << report.status().message();
    return sim::WhatIfReportToJson(*report, site);
  }
};

TEST_F(WhatIfApiTest, AddNodesAnswersWhatTheSharedRunComputes) {
  UseTestSite();
  Start();
  auto r = Post(R"({"add_nodes": ["2x8"]})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["baseline"]["jobs"], 30);
  EXPECT_EQ(j["scenario"]["jobs"], 30);
  EXPECT_EQ(j["history_jobs"], 30);
  EXPECT_EQ(j["cluster"]["baseline_gpus"], 16);
  EXPECT_EQ(j["cluster"]["scenario_gpus"], 32);
  EXPECT_EQ(j["changes"], json({"add-nodes 2x8"}));
  EXPECT_EQ(j["policy"]["baseline"], "slurm");
  EXPECT_EQ(j["history_source"], TestDataPath("sim/whatif/sacct.txt"));
  EXPECT_LT(j["scenario"]["avg_queue_s"].get<double>(), j["baseline"]["avg_queue_s"].get<double>());
  EXPECT_TRUE(j["baseline"]["per_partition"].contains("gpu"));
  EXPECT_TRUE(j["baseline"]["per_partition"].contains("debug"));
  sim::WhatIfScenario scenario;
  scenario.add_nodes = {"2x8"};
  const json direct = Direct(scenario);
  EXPECT_EQ(j["baseline"], direct["baseline"]);
  EXPECT_EQ(j["scenario"], direct["scenario"]);
  EXPECT_EQ(j["spread"], direct["spread"]);
}

TEST_F(WhatIfApiTest, LoadRunsSeedsUpToTheConfiguredMaximum) {
  UseTestSite();
  config_.whatif_max_seeds = 2;
  Start();
  auto over = Post(R"({"load": 2, "seeds": 3})");
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 400);
  EXPECT_EQ(json::parse(over->body)["field"], "seeds");
  auto r = Post(R"({"load": 2, "seeds": 2, "seed": 5, "set": {"bf_window": 2880}})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["spread"]["seeds"], json({5, 6}));
  EXPECT_EQ(j["spread"]["runs"], 2);
  EXPECT_EQ(j["scenario"]["jobs"], 60);
  EXPECT_EQ(j["changes"], json({"set bf_window=2880", "load x2"}));
}

TEST_F(WhatIfApiTest, MaxJobsKeepsTheLatestJobs) {
  UseTestSite();
  config_.whatif_max_jobs = 20;
  Start();
  auto r = Post(R"({"load": 2, "seeds": 1})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["history_jobs"], 10);  // 20 jobs per run at twice the load
  EXPECT_EQ(j["baseline"]["jobs"], 10);
  EXPECT_EQ(j["scenario"]["jobs"], 20);
}

TEST_F(WhatIfApiTest, BadBodiesNameTheField) {
  UseTestSite();
  Start();
  const std::pair<const char*, const char*> cases[] = {
      {"not json", ""},
      {"[1]", ""},
      {R"({"add_nodes": "2x8"})", "add_nodes"},
      {R"({"add_nodes": ["4"]})", "add_nodes"},
      {R"({"add_nodes": ["2x4"]})", "add_nodes"},  // the partition's nodes have 8 GPUs
      {R"({"add_nodes": ["2x8:nope"]})", "add_nodes"},
      {R"({"remove_nodes": ["2"]})", "remove_nodes"},  // every node
      {R"({"load": "x"})", "load"},
      {R"({"load": 0})", "load"},
      {R"({"policy": "nope"})", "policy"},
      {R"({"policy": 3})", "policy"},
      {R"({"set": {"NoSuchKey": "1"}})", "set"},
      {R"({"set": [1]})", "set"},
      {R"({"seeds": -1})", "seeds"},
      {R"({"seeds": 1.5})", "seeds"},
      {R"({"bogus": 1})", "bogus"},
  };
  for (const auto& [body, field] : cases) {
    auto r = Post(body);
    ASSERT_TRUE(r) << body;
    EXPECT_EQ(r->status, 400) << body;
    auto j = json::parse(r->body);
    EXPECT_EQ(j["code"], "bad_request") << body;
    EXPECT_EQ(j["field"], field) << body << ": " << j.dump();
  }
}

TEST_F(WhatIfApiTest, BusyWhileAnotherRunGoes) {
  UseTestSite();
  Start();
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::thread holder([&] {
    auto answer = server_->whatif_runner().Run(
        [&](const std::atomic<bool>&) -> Result<json> {
          std::unique_lock l(mu);
          cv.wait(l, [&] { return release; });
          return json::object();
        },
        std::chrono::seconds(30));
    EXPECT_EQ(answer.outcome, WhatIfRunner::Outcome::kDone);
  });
  for (int i = 0; i < 5000 && !server_->whatif_runner().busy(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(server_->whatif_runner().busy());
  auto busy = Post("{}");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 429);
  EXPECT_EQ(json::parse(busy->body)["code"], "busy");
  {
    std::lock_guard l(mu);
    release = true;
  }
  cv.notify_all();
  holder.join();
  for (int i = 0; i < 5000 && server_->whatif_runner().busy(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto ok = Post("{}");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
}

TEST_F(WhatIfApiTest, HistoryFromTheStoreOnTheNodesSlurmShows) {
  cluster_.Render();
  CreateCompanion();
  for (int i = 0; i < 6; ++i) {
    store::StoredJob s;
    s.job.id = std::to_string(900 + i);
    s.job.user = "u";
    s.job.vc = i % 2 ? "gpu" : "debug";
    s.job.gpus = GpuAmount::Whole(8);
    s.job.nodes = 1;
    s.job.submit = SimTime::FromSeconds(1'700'000'000 + 60 * i);
    s.job.time_limit = Duration::Minutes(60);
    ASSERT_OK(history_->PutJob(s));
    ASSERT_OK(history_->RecordFinish(s.job.id, s.job.submit + Duration::Minutes(30),
                                     Duration::Minutes(20), JobState::kCompleted));
  }
  StartServer();
  auto r = Post("{}");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["history_source"], "the service's store");
  EXPECT_EQ(j["history_jobs"], 6);
  EXPECT_EQ(j["baseline"]["jobs"], 6);
  EXPECT_EQ(j["cluster"]["baseline_gpus"], 16);  // gpu1 and gpu2, 8 GPUs each
  // 6 jobs of 8 GPUs for 20 minutes, a minute apart, on 2 nodes: jobs 2..5 wait.
  EXPECT_GT(j["baseline"]["avg_queue_s"].get<double>(), 0);
  EXPECT_EQ(j["baseline"]["per_partition"]["gpu"]["jobs"], 3);
}

TEST_F(WhatIfApiTest, NoHistoryIsAConflictNotACrash) {
  Start();  // an empty store, no trace configured
  auto r = Post("{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(json::parse(r->body)["code"], "no_history");
}

TEST(WhatIfRunnerTest, TimesOutAndStaysBusyUntilTheRunStops) {
  WhatIfRunner runner;
  std::mutex mu;
  std::condition_variable cv;
  bool gate = false;
  std::atomic<bool> saw_cancel{false};
  auto answer = runner.Run(
      [&](const std::atomic<bool>& cancel) -> Result<json> {
        while (!cancel.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        saw_cancel = true;
        std::unique_lock l(mu);
        cv.wait(l, [&] { return gate; });
        return Status::DeadlineExceeded("stopped");
      },
      std::chrono::milliseconds(20));
  EXPECT_EQ(answer.outcome, WhatIfRunner::Outcome::kTimedOut);
  for (int i = 0; i < 5000 && !saw_cancel; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(saw_cancel.load());
  EXPECT_TRUE(runner.busy());
  bool called = false;
  auto second = runner.Run(
      [&](const std::atomic<bool>&) -> Result<json> {
        called = true;
        return json::object();
      },
      std::chrono::seconds(1));
  EXPECT_EQ(second.outcome, WhatIfRunner::Outcome::kBusy);
  EXPECT_FALSE(called);
  {
    std::lock_guard l(mu);
    gate = true;
  }
  cv.notify_all();
  for (int i = 0; i < 5000 && runner.busy(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto third = runner.Run(
      [](const std::atomic<bool>&) -> Result<json> {
        return json{{"n", 1}};
      },
      std::chrono::seconds(5));
  ASSERT_EQ(third.outcome, WhatIfRunner::Outcome::kDone);
  ASSERT_TRUE(third.result.ok());
  EXPECT_EQ((*third.result)["n"], 1);
}

}  // namespace
}  // namespace schedmate::api
