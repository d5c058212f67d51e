// GET /v1/report (service/report.h over the API's own store connection) and the why route with
// an LLM rephraser (service/why_rephrase.h) against the scripted OpenAI-compatible server.

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "api_fixture.h"
#include "llm/llm_setup.h"
#include "service/why_rephrase.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::api {
namespace {

using nlohmann::json;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

class ReportAndWhyTest : public testing::ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    cluster_.AddNode("gpu1", 8);
  }
  // Job 4 pending on Resources behind job 3, which holds all 8 GPUs of gpu1.
  void PendingScene() {
    auto& r = cluster_.Job("3");
    r.id = "3";
    r.state = "RUNNING";
    r.node = "gpu1";
    r.gpus_per_node = 8;
    r.start = clock_.Now().seconds() - 60;
    r.time_limit_min = 30;
    auto& p = cluster_.Job("4");
    p.id = "4";
    p.reason = "Resources";
    p.gpus_per_node = 8;
    cluster_.Render();
  }
};

TEST_F(ReportAndWhyTest, ReportOverTheStore) {
  const SimTime t0 = SimTime::FromSeconds(1793491200);  // 2026-11-01T00:00:00Z
  store::StoredJob j;
  j.job.id = "77";
  j.job.user = "alice";
  j.job.vc = "gpu";
  j.job.gpus = GpuAmount::Whole(2);
  j.job.submit = t0;
  j.job.duration = Duration::Hours(3);
  j.job.state = JobState::kTimeout;
  j.finish = t0 + Duration::Hours(4);
  ASSERT_OK(history_->PutJob(j));
  cluster_.Render();
  CreateCompanion();
  StartServer();
  json r = GetJson("/v1/report?since=2026-11-01&until=2026-11-02");
  EXPECT_EQ(r["since"], t0.seconds());
  EXPECT_EQ(r["runs_in_period"], 1);
  EXPECT_DOUBLE_EQ(r["gpu_hours"]["allocated"].get<double>(), 6);
  EXPECT_EQ(r["by_user"][0]["name"], "alice");
  EXPECT_DOUBLE_EQ(r["queueing"][0]["avg_wait_s"].get<double>(), 3600);
  auto html = client_->Get("/v1/report?since=2026-11-01&until=2026-11-02&format=html");
  ASSERT_TRUE(html);
  EXPECT_EQ(html->status, 200);
  EXPECT_NE(html->body.find("<svg"), std::string::npos);
  EXPECT_NE(html->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
  auto text = client_->Get("/v1/report?since=2026-11-01&until=2026-11-02&format=text");
  ASSERT_TRUE(text);
  EXPECT_NE(text->body.find("GPU-hours by user"), std::string::npos);
  // Bad requests name the parameter.
  EXPECT_NE(GetJson("/v1/report?since=7x", 400)["error"].get<std::string>().find("since"),
            std::string::npos);
  EXPECT_NE(GetJson("/v1/report", 400)["error"].get<std::string>().find("since"),
            std::string::npos);
  EXPECT_NE(
      GetJson("/v1/report?since=7d&format=pdf", 400)["error"].get<std::string>().find("format"),
      std::string::npos);
  EXPECT_NE(
      GetJson("/v1/report?since=2026-11-02&until=2026-11-01", 400)["error"].get<std::string>().find(
          "until"),
      std::string::npos);
}

TEST_F(ReportAndWhyTest, WhyIsBuiltinWithoutAnLlm) {
  PendingScene();
  CreateCompanion();
  StartServer();
  json why = GetJson("/v1/jobs/4/why");
  EXPECT_EQ(why["explanation_source"], "builtin");
  EXPECT_FALSE(why.contains("builtin_explanation"));
}

TEST_F(ReportAndWhyTest, WhyIsRephrasedFaithfullyAndRememberedPerAnswer) {
  ScriptedChatServer chat;
  ASSERT_OK(chat.Start());
  // The reply restates the facts it was given (the job ids and GPU count of the answer).
  chat.SetChatHandler([](const json&) {
    return ScriptedReply::Text("Job 4 is waiting for 8 GPUs, which job 3 holds on gpu1.");
  });
  llm::LlmConfig c;
  c.chat.base_url = chat.base_url();
  c.chat.model = "scripted-model";
  c.max_retries = 0;
  auto setup = llm::LlmSetup::Create(c);
  ASSERT_OK(setup);
  service::WhyRephraser rephraser(std::shared_ptr<llm::LlmSetup>(std::move(setup).value()));
  PendingScene();
  CreateCompanion();
  server_ =
      std::make_unique<ApiServer>(*companion_, ApiReadStores{*read_store_, *read_history_}, "t0k");
  server_->SetWhyRephraser(&rephraser);
  ASSERT_OK(server_->Start("127.0.0.1", 0));
  client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  json why = GetJson("/v1/jobs/4/why");
  EXPECT_EQ(why["explanation_source"], "llm (scripted-model)") << why.dump(1);
  EXPECT_EQ(why["explanation"], "Job 4 is waiting for 8 GPUs, which job 3 holds on gpu1.");
  EXPECT_TRUE(why["builtin_explanation"].is_string());
  GetJson("/v1/jobs/4/why");
  EXPECT_EQ(chat.CountRequests("/v1/chat/completions"), 1u);  // the same answer: asked once
  EXPECT_EQ(rephraser.calls(), 1);
  server_->Stop();
}

TEST_F(ReportAndWhyTest, AnUnfaithfulReplyKeepsTheBuiltInText) {
  ScriptedChatServer chat;
  ASSERT_OK(chat.Start());
  chat.SetChatHandler(
      [](const json&) { return ScriptedReply::Text("Job 4 will start on gpu9 in 12 minutes."); });
  llm::LlmConfig c;
  c.chat.base_url = chat.base_url();
  c.chat.model = "scripted-model";
  c.max_retries = 0;
  auto setup = llm::LlmSetup::Create(c);
  ASSERT_OK(setup);
  service::WhyRephraser rephraser(std::shared_ptr<llm::LlmSetup>(std::move(setup).value()));
  PendingScene();
  CreateCompanion();
  server_ =
      std::make_unique<ApiServer>(*companion_, ApiReadStores{*read_store_, *read_history_}, "t0k");
  server_->SetWhyRephraser(&rephraser);
  ASSERT_OK(server_->Start("127.0.0.1", 0));
  client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  json why = GetJson("/v1/jobs/4/why");
  const std::string source = why["explanation_source"];
  EXPECT_EQ(source.rfind("builtin (llm answer rejected: ", 0), 0u) << source;
  EXPECT_NE(source.find("gpu9"), std::string::npos) << source;
  EXPECT_FALSE(why.contains("builtin_explanation"));
  GetJson("/v1/jobs/4/why");
  EXPECT_EQ(chat.CountRequests("/v1/chat/completions"), 1u);  // a rejection is remembered too
  server_->Stop();
}

}  // namespace
}  // namespace schedmate::api
