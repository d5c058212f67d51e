// `schedmate why JOBID --engine llm` as a process: the answer comes from a stand-in service
// (GET /v1/jobs/42/why on a local httplib server), the rephrasing from the scripted
// OpenAI-compatible server. A faithful reply replaces the explanation; one that invents a number
// is rejected and the built-in text stays, with explanation_source saying why.

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "testing/llm/llm_cli_env.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using nlohmann::json;
using testing::RunSchedmateWithLlm;
using testing::ScriptedChatServer;
using testing::ScriptedReply;

constexpr const char* kBuiltin =
    "Job 42 waits for resources: it asks for 4 GPUs and partition gpu has 2 free.";

// A stand-in for `schedmate serve` answering the why route for job 42.
class FakeService {
 public:
  FakeService() {
    server_.Get(R"(/v1/jobs/42/why)", [](const httplib::Request&, httplib::Response& res) {
      const json answer{{"job_id", "42"},
                        {"state", "PENDING"},
                        {"reason_code", "Resources"},
                        {"explanation", kBuiltin},
                        {"evidence", json::array()},
                        {"expected_start", nullptr},
                        {"suggestions", json::array()}};
      res.set_content(answer.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeService() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

class WhyCliLlmTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(chat_.Start()); }
  json Why(const std::string& engine, int* exit_code = nullptr) {
    auto r = RunSchedmateWithLlm(chat_.base_url(),
                                 "why 42 --json --api " + service_.url() + " --engine " + engine);
    if (exit_code != nullptr) *exit_code = r.exit_code;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }
  ScriptedChatServer chat_;
  FakeService service_;
};

TEST_F(WhyCliLlmTest, AFaithfulReplyReplacesTheExplanation) {
  const std::string reply = "Job 42 needs 4 GPUs, but only 2 are free in partition gpu right now.";
  chat_.EnqueueChat(ScriptedReply::Text(reply));
  const json a = Why("llm");
  EXPECT_EQ(a["explanation"], reply);
  EXPECT_EQ(a["builtin_explanation"], kBuiltin);
  EXPECT_EQ(a["explanation_source"], "llm (scripted-model)");
  EXPECT_EQ(chat_.CountRequests("/v1/chat/completions"), 1u);
}

TEST_F(WhyCliLlmTest, AnInventedNumberKeepsTheBuiltInText) {
  chat_.EnqueueChat(ScriptedReply::Text("Job 42 will start in 45 minutes on 8 GPUs."));
  const json a = Why("llm");
  EXPECT_EQ(a["explanation"], kBuiltin);
  EXPECT_FALSE(a.contains("builtin_explanation"));
  const std::string source = a["explanation_source"];
  EXPECT_EQ(source.rfind("builtin (llm answer rejected: ", 0), 0u) << source;
  EXPECT_NE(source.find("45"), std::string::npos) << source;
}

TEST_F(WhyCliLlmTest, BuiltinNeverAsksTheModel) {
  const json a = Why("builtin");
  EXPECT_EQ(a["explanation"], kBuiltin);
  EXPECT_EQ(a["explanation_source"], "builtin");
  EXPECT_EQ(chat_.CountRequests("/v1/chat/completions"), 0u);
}

}  // namespace
}  // namespace schedmate
