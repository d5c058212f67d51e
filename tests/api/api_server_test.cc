#include "api/api_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "api_fixture.h"
#include "core/file_util.h"
#include "service/basic_engines.h"
#include "service/fake_cluster.h"
#include "testing/test_util.h"

namespace schedmate::api {
namespace {

using nlohmann::json;

class ApiServerTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    cluster_.AddNode("gpu1", 8);
    config_.max_body_bytes = 4096;
  }
  void Start(const std::string& token = "t0k") {
    CreateCompanion();
    StartServer(token);
  }
  json GetJson(const std::string& path, int want = 200) {
    auto res = client_->Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return json();
    EXPECT_EQ(res->status, want) << path << ": " << res->body;
    return json::parse(res->body, nullptr, false);
  }
};

TEST_F(ApiServerTest, JobsNodesEstimatesAndMetrics) {
  std::string log = dir_.File("r.out");
  ASSERT_OK(WriteStringToFile(log, "step 40/100 loss 0.5\n"));
  auto& r = cluster_.Job("3");
  r.id = "3";
  r.state = "RUNNING";
  r.node = "gpu1";
  r.gpus_per_node = 8;
  r.start = clock_.Now().seconds() - 60;
  r.std_out = log;
  auto& p = cluster_.Job("4");
  p.id = "4";
  p.reason = "Resources";
  p.gpus_per_node = 8;
  cluster_.Render();
  Start();
  json health = GetJson("/healthz");
  EXPECT_EQ(health["ok"], true);
  EXPECT_EQ(health["slurm_ok"], true);
  json jobs = GetJson("/v1/jobs");
  ASSERT_EQ(jobs["jobs"].size(), 2u);
  EXPECT_EQ(GetJson("/v1/jobs?state=running")["jobs"].size(), 1u);
  json running = GetJson("/v1/jobs/3");
  EXPECT_EQ(running["metrics"]["step"], 40);
  EXPECT_EQ(running["std_out"], log);
  GetJson("/v1/jobs/999", 404);
  EXPECT_EQ(GetJson("/v1/nodes")["nodes"][0]["gpus_total"], 8);
  json starts = GetJson("/v1/start-estimates");
  ASSERT_EQ(starts["pending"].size(), 1u);
  EXPECT_EQ(starts["pending"][0]["job_id"], "4");
  EXPECT_EQ(starts["pending"][0]["pending_reason"], "Resources");
  EXPECT_TRUE(starts["pending"][0]["estimated_start"].is_number());
  EXPECT_GT(starts["pending"][0]["estimated_start"].get<int64_t>(), clock_.Now().seconds());
  EXPECT_EQ(GetJson("/v1/predictions")["predictions"].size(), 2u);
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("schedmate_queue_jobs{state=\"RUNNING\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("schedmate_failures_total{class=\"infra\"} 0"), std::string::npos);
  EXPECT_NE(metrics->body.find("schedmate_failure_diagnoses_total{engine=\"llm_fallback\"} 0"),
            std::string::npos);
  auto logres = client_->Get("/v1/jobs/3/log?bytes=9");
  ASSERT_TRUE(logres);
  EXPECT_EQ(logres->body, "loss 0.5\n");
  json series = GetJson("/v1/jobs/3/metrics");
  EXPECT_EQ(series["samples"].size(), 1u);
}

TEST_F(ApiServerTest, EstimateForTheLuaHookAndJson) {
  config_.submit_policy = service::SubmitPolicy::kSet;
  cluster_.Render();
  Start();
  auto kv = client_->Post("/v1/estimate?format=kv&name=bert&uid=0&nodes=1&tres_per_node=gres:gpu:2",
                          "#!/bin/bash\npython train.py\n", "text/plain");
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->status, 200);
  EXPECT_NE(kv->body.find("estimate_s=3600\n"), std::string::npos) << kv->body;
  EXPECT_NE(kv->body.find("time_limit_min="), std::string::npos);
  EXPECT_NE(kv->body.find("message=schedmate: estimated run time"), std::string::npos);
  auto js =
      client_->Post("/v1/estimate", R"({"script":"x","name":"bert","gpus":2,"time_limit_min":30})",
                    "application/json");
  ASSERT_TRUE(js);
  json body = json::parse(js->body);
  EXPECT_EQ(body["estimate_s"], 900);             // half the given limit
  EXPECT_TRUE(body["time_limit_min"].is_null());  // the user gave one; policy "set" keeps it
  auto bad = client_->Post("/v1/estimate", "{nope", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto big = client_->Post("/v1/estimate", std::string(10000, 'x'), "text/plain");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

// Found by fuzz/api/api_request_fuzz: a time limit past Slurm's range (its NO_VAL/INFINITE, or one
// whose microseconds overflow int64) reached the advisor as a real limit; it now means "none" in
// both request forms, as job_submit.lua sends it.
TEST_F(ApiServerTest, EstimateTreatsLimitsPastSlurmsRangeAsNone) {
  cluster_.Render();
  Start();
  auto post_json = [&](const std::string& body) {
    auto res = client_->Post("/v1/estimate", body, "application/json");
    EXPECT_TRUE(res);
    EXPECT_EQ(res ? res->status : 0, 200) << (res ? res->body : "");
    return res ? json::parse(res->body, nullptr, false) : json();
  };
  const json none = post_json(R"({"script":"x","name":"bert"})");
  ASSERT_TRUE(none["estimate_s"].is_number());
  for (const char* limit : {"4294967294", "4294967295", "200000000000000000"}) {
    SCOPED_TRACE(limit);
    const json body =
        post_json(std::string(R"({"script":"x","name":"bert","time_limit_min":)") + limit + "}");
    EXPECT_EQ(body["estimate_s"], none["estimate_s"]);
    EXPECT_EQ(body["prediction"]["high_s"], none["prediction"]["high_s"]);
    auto kv = client_->Post(
        (std::string("/v1/estimate?format=kv&name=bert&time_limit_min=") + limit).c_str(), "x",
        "text/plain");
    ASSERT_TRUE(kv);
    EXPECT_EQ(kv->status, 200);
    EXPECT_NE(kv->body.find("estimate_s=" + none["estimate_s"].dump() + "\n"), std::string::npos)
        << kv->body;
  }
}

TEST_F(ApiServerTest, StateChangesNeedTheToken) {
  cluster_.SetDrained("gpu1", "schedmate: gpu_xid in job 1");
  cluster_.Render();
  Start("s3cret");
  auto none = client_->Post("/v1/nodes/gpu1/resume", "", "text/plain");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  httplib::Headers wrong = {{"Authorization", "Bearer nope"}};
  EXPECT_EQ(client_->Post("/v1/nodes/gpu1/resume", wrong, "", "text/plain")->status, 401);
  EXPECT_TRUE(fake_.CallsStartingWith("scontrol update NodeName=gpu1 State=RESUME").empty());
  httplib::Headers right = {{"Authorization", "Bearer s3cret"}};
  auto ok = client_->Post("/v1/nodes/gpu1/resume", right, "", "text/plain");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(fake_.CallsStartingWith("scontrol update NodeName=gpu1 State=RESUME").size(), 1u);
  json actions = GetJson("/v1/actions");
  ASSERT_EQ(actions["actions"].size(), 1u);
  EXPECT_EQ(actions["actions"][0]["kind"], "resume");
  EXPECT_EQ(client_->Post("/v1/nodes/gpu1;reboot/resume", right, "", "text/plain")->status, 404);
}

TEST_F(ApiServerTest, NoTokenConfiguredRefusesStateChanges) {
  cluster_.Render();
  Start("");
  httplib::Headers h = {{"Authorization", "Bearer "}};
  auto res = client_->Post("/v1/nodes/gpu1/resume", h, "", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
}

TEST_F(ApiServerTest, LogsNeverComeFromARequestPath) {
  // A job whose StdOut is a symlink to a file it does not own is not served.
  std::string target = dir_.File("secret.txt");
  ASSERT_OK(WriteStringToFile(target, "secret"));
  std::filesystem::create_symlink(target, dir_.File("evil.out"));
  auto& j = cluster_.Job("8");
  j.id = "8";
  j.state = "RUNNING";
  j.node = "gpu1";
  j.std_out = dir_.File("evil.out");
  cluster_.Render();
  Start();
  auto res = client_->Get("/v1/jobs/8/log");
  ASSERT_TRUE(res);
  EXPECT_NE(res->status, 200);
  EXPECT_EQ(res->body.find("secret\""), std::string::npos);
  EXPECT_EQ(client_->Get("/v1/jobs/..%2F..%2Fetc%2Fpasswd/log")->status, 404);
  EXPECT_EQ(client_->Get("/v1/failures/1/log")->status, 404);
}

}  // namespace
}  // namespace schedmate::api
