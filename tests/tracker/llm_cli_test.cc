// `schedmate logs metrics --engine ...` end to end: the built binary against the scripted server
// (SCHEDMATE_LLM_BASE_URL) and a dead port.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "testing/llm/llm_cli_env.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

using nlohmann::json;
using schedmate::testing::RunSchedmateWithLlm;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;
using schedmate::testing::ShellQuote;

class LogsLlmCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    std::string log;
    for (int i = 1; i <= 50; ++i) {
      log += "epoch 1 step " + std::to_string(i) + "/50 loss=" + std::to_string(3.0 - 0.02 * i) +
             " lr=0.0003\n";
    }
    log += "training finished\n";
    path_ = dir_.File("train.log");
    ASSERT_OK(WriteStringToFile(path_, log));
  }
  ScriptedChatServer server_;
  schedmate::testing::TempDir dir_;
  std::string path_;
};

TEST_F(LogsLlmCliTest, LlmReadsTheNewestProgressLinesInOneBatch) {
  server_.SetChatHandler([](const json& req) {
    const std::string user = req["messages"][1]["content"];
    json lines = json::parse(user.substr(user.find('\n') + 1));
    json records = json::array();
    for (const json& l : lines) {
      records.push_back({{"line_no", l["line_no"]},
                         {"training", true},
                         {"step", l["line_no"]},
                         {"total_steps", 50},
                         {"loss", 0.25}});
    }
    return ScriptedReply::Text(json{{"records", records}}.dump());
  });
  auto r = RunSchedmateWithLlm(server_.base_url(),
                               "logs metrics " + ShellQuote(path_) + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "llm (scripted-model)");
  EXPECT_EQ(j["line_no"], 50);
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 0.25);
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 1u);  // newest batch, early stop
}

TEST_F(LogsLlmCliTest, DeadPortAndServerErrorsFallBack) {
  for (int i = 0; i < 3; ++i) server_.EnqueueChat(ScriptedReply::Error(500, "boom"));
  auto e = RunSchedmateWithLlm(server_.base_url(),
                               "logs metrics " + ShellQuote(path_) + " --json --engine llm");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  json je = json::parse(e.out);
  EXPECT_EQ(je["engine"], "builtin (llm unavailable: HTTP 500)");
  EXPECT_EQ(je["step"], 50);
  EXPECT_NEAR(je["loss"].get<double>(), 2.0, 1e-9);

  const std::string url = server_.base_url();
  server_.Stop();
  auto r = RunSchedmateWithLlm(url, "logs metrics " + ShellQuote(path_) + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "builtin (llm unavailable: connection refused)");
  EXPECT_EQ(j["found"], true);
  EXPECT_EQ(j["step"], 50);
  auto b = RunSchedmateWithLlm(url, "logs metrics " + ShellQuote(path_) + " --json");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(json::parse(b.out)["engine"], "builtin");
}

// Answers the probe ("Reply with the single word OK.") and every metrics batch: each line is
// training with loss 0.25.
ScriptedReply AnswerEveryLine(const json& req) {
  if (req["messages"].size() < 2) return ScriptedReply::Text("OK");
  const std::string user = req["messages"][1]["content"];
  json lines = json::parse(user.substr(user.find('\n') + 1));
  json records = json::array();
  for (const json& l : lines) {
    records.push_back({{"line_no", l["line_no"]}, {"training", true}, {"loss", 0.25}});
  }
  return ScriptedReply::Text(json{{"records", records}}.dump());
}

TEST_F(LogsLlmCliTest, AutoKeepsAConfidentBuiltinAnswerWithoutContactingTheServer) {
  server_.SetChatHandler(AnswerEveryLine);
  auto r = RunSchedmateWithLlm(server_.base_url(),
                               "logs metrics " + ShellQuote(path_) + " --json --engine auto");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "builtin");
  EXPECT_GE(j["confidence"].get<double>(), 0.8);
  EXPECT_LE(j["confidence"].get<double>(), 1.0);
  EXPECT_EQ(j["step"], 50);
  EXPECT_TRUE(j["field_confidence"].is_object());
  EXPECT_EQ(j["confidence_evidence"]["counter"], "own");
  EXPECT_EQ(server_.requests().size(), 0u);  // not even the probe
}

class LogsLlmAutoUnsureTest : public LogsLlmCliTest {
 protected:
  void SetUp() override {
    LogsLlmCliTest::SetUp();
    // Loss lines without any counter: the built-in engine reads them as progress, unsure.
    unsure_ = dir_.File("unsure.log");
    ASSERT_OK(WriteStringToFile(unsure_,
                                "building model\nloss: 0.93, accuracy: 0.61\n"
                                "loss: 0.88, accuracy: 0.64\nloss: 0.85, accuracy: 0.66\n"));
  }
  std::string unsure_;
};

TEST_F(LogsLlmAutoUnsureTest, AutoAsksTheLlmWhenTheBuiltinEngineIsUnsure) {
  server_.SetChatHandler(AnswerEveryLine);
  auto r = RunSchedmateWithLlm(server_.base_url(),
                               "logs metrics " + ShellQuote(unsure_) + " --json --engine auto");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "llm (scripted-model)");
  EXPECT_LT(j["confidence"].get<double>(), 0.8);  // the built-in's, why the LLM was asked
  EXPECT_EQ(j["line_no"], 4);
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 0.25);  // the LLM's reading
  EXPECT_TRUE(j["field_confidence"].is_null());
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 2u);  // the probe and one batch
}

TEST_F(LogsLlmAutoUnsureTest, LlmBelowDecidesWhatIsUnsure) {
  server_.SetChatHandler(AnswerEveryLine);
  auto r = RunSchedmateWithLlm(server_.base_url(), "logs metrics " + ShellQuote(unsure_) +
                                                       " --json --engine auto --llm-below 0.1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "builtin");
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 0.85);
  EXPECT_EQ(server_.requests().size(), 0u);
}

TEST_F(LogsLlmAutoUnsureTest, AutoFallsBackWhenTheServerIsDown) {
  const std::string url = server_.base_url();
  server_.Stop();
  auto r =
      RunSchedmateWithLlm(url, "logs metrics " + ShellQuote(unsure_) + " --json --engine auto");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "builtin (llm unavailable: connection refused)");
  EXPECT_EQ(j["line_no"], 4);
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 0.85);
  EXPECT_EQ(j["confidence_evidence"]["counter"], "none");
}

TEST_F(LogsLlmAutoUnsureTest, LlmEngineStillReportsTheBuiltinConfidence) {
  server_.SetChatHandler(AnswerEveryLine);
  auto r = RunSchedmateWithLlm(server_.base_url(),
                               "logs metrics " + ShellQuote(path_) + " --json --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "llm (scripted-model)");
  EXPECT_GE(j["confidence"].get<double>(), 0.8);
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 1u);  // llm does not probe
}

}  // namespace
}  // namespace schedmate
