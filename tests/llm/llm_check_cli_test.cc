// `schedmate llm check` end to end: the built binary against the scripted loopback server.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using schedmate::testing::RunShell;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;
using schedmate::testing::ShellQuote;

// Runs the binary with the LLM environment cleared, so only `args` configure it.
schedmate::testing::CommandResult RunClean(const std::string& args) {
  return RunShell(
      "env -u SCHEDMATE_LLM_BASE_URL -u SCHEDMATE_LLM_MODEL -u SCHEDMATE_LLM_API_KEY "
      "-u SCHEDMATE_LLM_API_KEY_FILE -u SCHEDMATE_EMBED_BASE_URL -u SCHEDMATE_EMBED_MODEL "
      "-u SCHEDMATE_EMBED_API_KEY -u SCHEDMATE_LLM_CONFIG SCHEDMATE_NO_PROGRESS=1 " +
      ShellQuote(schedmate::testing::SchedmateBinary()) + " " + args);
}

class LlmCheckCliTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(server_.Start()); }
  std::string WriteConfig(const std::string& base_url, bool embeddings) {
    std::string yaml = "chat:\n  base_url: " + base_url +
                       "\n  model: scripted-model\n  api_key: sk-test\n  timeout_s: 5\n";
    if (embeddings) yaml += "embeddings:\n  model: scripted-embed\n";
    const std::string path = dir_.File("llm.yaml");
    EXPECT_OK(WriteStringToFile(path, yaml));
    return path;
  }
  // The four chat probes in the order llm check sends them.
  void ScriptHealthyServer() {
    server_.EnqueueChat(ScriptedReply::Text("pong", 21, 2));
    server_.EnqueueChat(ScriptedReply::Stream({"po", "ng"}));
    server_.EnqueueChat(
        ScriptedReply::ToolCalls({{"call_1", "get_cluster_time", R"({"timezone":"UTC"})"}}));
    server_.EnqueueChat(ScriptedReply::Text(R"({"status":"ok","gpus":8})"));
  }
  ScriptedChatServer server_;
  schedmate::testing::TempDir dir_;
};

TEST_F(LlmCheckCliTest, HealthyEndpointPrintsATable) {
  ScriptHealthyServer();
  server_.SetEmbeddingDimension(12);
  server_.RequireApiKey("sk-test");
  auto r = RunClean("llm check --llm-config " + ShellQuote(WriteConfig(server_.base_url(), true)));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("chat         ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"pong\""), std::string::npos);
  EXPECT_NE(r.out.find("stream       ok"), std::string::npos);
  EXPECT_NE(r.out.find("2 deltas"), std::string::npos);
  EXPECT_NE(r.out.find("tool_calls   ok"), std::string::npos);
  EXPECT_NE(r.out.find("get_cluster_time({\"timezone\":\"UTC\"})"), std::string::npos);
  EXPECT_NE(r.out.find("json_schema  ok"), std::string::npos);
  EXPECT_NE(r.out.find("embeddings   ok"), std::string::npos);
  EXPECT_NE(r.out.find("2 vectors of dimension 12"), std::string::npos);
  EXPECT_NE(r.out.find(" ms "), std::string::npos);  // latency column
  // What the server saw: 4 chat requests, 1 embeddings request, all authenticated.
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 4u);
  EXPECT_EQ(server_.CountRequests("/v1/embeddings"), 1u);
  auto reqs = server_.requests();
  EXPECT_EQ(reqs[1].json["stream"], true);
  EXPECT_EQ(reqs[2].json["tools"][0]["function"]["name"], "get_cluster_time");
  EXPECT_EQ(reqs[3].json["response_format"]["type"], "json_schema");
  for (const auto& req : reqs) EXPECT_EQ(req.headers.at("authorization"), "Bearer sk-test");
}

TEST_F(LlmCheckCliTest, JsonReport) {
  ScriptHealthyServer();
  auto r = RunClean("llm check --json --llm-config " +
                    ShellQuote(WriteConfig(server_.base_url(), false)));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["reachable"], true);
  EXPECT_EQ(j["all_ok"], true);
  EXPECT_EQ(j["chat"]["model"], "scripted-model");
  ASSERT_EQ(j["checks"].size(), 5u);
  EXPECT_EQ(j["checks"][0]["check"], "chat");
  EXPECT_EQ(j["checks"][0]["outcome"], "ok");
  EXPECT_EQ(j["checks"][4]["check"], "embeddings");
  EXPECT_EQ(j["checks"][4]["outcome"], "skip");
  EXPECT_TRUE(j["checks"][0]["latency_ms"].is_number());
}

TEST_F(LlmCheckCliTest, MissingCapabilitiesAreReportedAndStrictFails) {
  server_.SetChatHandler([](const nlohmann::json&) {
    return ScriptedReply::Text("I cannot call functions, here is some prose instead.");
  });
  const std::string config = WriteConfig(server_.base_url(), false);
  auto r = RunClean("llm check --llm-config " + ShellQuote(config));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tool_calls   fail"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no tool call"), std::string::npos);
  EXPECT_NE(r.out.find("json_schema  fail"), std::string::npos);
  EXPECT_NE(r.out.find("malformed JSON from model"), std::string::npos);
  EXPECT_NE(r.out.find("stream       fail"), std::string::npos);  // handler answers without SSE
  EXPECT_NE(r.out.find("no server-sent events"), std::string::npos);
  auto strict = RunClean("llm check --strict --llm-config " + ShellQuote(config));
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("some LLM checks failed"), std::string::npos);
}

TEST_F(LlmCheckCliTest, DeadPortExitsNonZeroWithAClearMessage) {
  const int port = server_.port();
  server_.Stop();
  auto r = RunClean("llm check --llm-config " +
                    ShellQuote(WriteConfig("http://127.0.0.1:" + std::to_string(port), false)));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("schedmate: error: LLM endpoint unreachable: connection refused; POST "
                       "http://127.0.0.1:" +
                       std::to_string(port) + "/v1/chat/completions"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("chat         fail"), std::string::npos);
  EXPECT_NE(r.out.find("stream       skip"), std::string::npos);
}

TEST_F(LlmCheckCliTest, WrongKeyIsNotUsable) {
  server_.RequireApiKey("other");
  auto r = RunClean("llm check --llm-config " + ShellQuote(WriteConfig(server_.base_url(), false)));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("LLM endpoint not usable: HTTP 401"), std::string::npos) << r.err;
}

TEST_F(LlmCheckCliTest, EnvironmentConfigurationAndErrors) {
  ScriptHealthyServer();
  auto r = RunShell("SCHEDMATE_LLM_BASE_URL=" + server_.base_url() +
                    " SCHEDMATE_LLM_MODEL=m SCHEDMATE_LLM_API_KEY= SCHEDMATE_EMBED_MODEL= "
                    "SCHEDMATE_LLM_CONFIG= " +
                    ShellQuote(schedmate::testing::SchedmateBinary()) + " llm check --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"config_source\": \"environment\""), std::string::npos) << r.out;
  auto none = RunClean("llm check");
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no LLM configured"), std::string::npos) << none.err;
  ASSERT_OK(
      WriteStringToFile(dir_.File("bad.yaml"), "chat:\n  base_url: http://h:1\n  timeout: 3\n"));
  auto bad = RunClean("llm check --llm-config " + ShellQuote(dir_.File("bad.yaml")));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("bad.yaml:3: chat.timeout: unknown key"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace schedmate
