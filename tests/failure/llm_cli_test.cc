// `schedmate diagnose --engine ...` end to end: the built binary against the scripted server
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

class DiagnoseLlmCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    std::string log;
    for (int i = 1; i <= 100; ++i) log += "step " + std::to_string(i) + " loss 1.23\n";
    log +=
        "Traceback (most recent call last):\n"
        "  File \"train.py\", line 10, in <module>\n"
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        "ERROR: torchrun: worker failed with exit code 1\n";
    path_ = dir_.File("job.log");
    ASSERT_OK(WriteStringToFile(path_, log));
  }
  ScriptedChatServer server_;
  schedmate::testing::TempDir dir_;
  std::string path_;
};

TEST_F(DiagnoseLlmCliTest, LlmClassifiesTheLocatedWindow) {
  server_.EnqueueChat(ScriptedReply::Text(json{
      {"label", "application"},
      {"category", "scripted_category"},
      {"confidence", 0.9},
      {"root_cause_line", 103},
      {"evidence", {{{"line_no", 103}}}}}.dump()));
  auto r = RunSchedmateWithLlm(
      server_.base_url(), "diagnose " + ShellQuote(path_) + " --json --no-examples --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "llm (scripted-model)");
  EXPECT_EQ(j["label"], "application");
  EXPECT_EQ(j["category"], "scripted_category");
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 1u);
}

TEST_F(DiagnoseLlmCliTest, FailuresFallBackToTheBuiltinDiagnosis) {
  auto builtin = RunSchedmateWithLlm(server_.base_url(),
                                     "diagnose " + ShellQuote(path_) + " --json --no-examples");
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  json jb = json::parse(builtin.out);
  EXPECT_EQ(jb["engine"], "builtin");

  server_.EnqueueChat(ScriptedReply::Raw(200, "{\"choices\": [oops"));  // malformed body
  auto m = RunSchedmateWithLlm(
      server_.base_url(), "diagnose " + ShellQuote(path_) + " --json --no-examples --engine llm");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  json jm = json::parse(m.out);
  EXPECT_EQ(jm["engine"].get<std::string>().rfind("builtin (llm ", 0), 0u) << jm["engine"];
  EXPECT_EQ(jm["label"], jb["label"]);
  EXPECT_EQ(jm["category"], jb["category"]);

  const std::string url = server_.base_url();
  server_.Stop();
  auto r = RunSchedmateWithLlm(
      url, "diagnose " + ShellQuote(path_) + " --json --no-examples --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "builtin (llm unavailable: connection refused)");
  EXPECT_EQ(j["label"], jb["label"]);
}

// --engine auto: the built-in diagnosis answers when it is sure (the server is never contacted,
// not even probed); an unsure one (no failure class found) is handed to the LLM.
TEST_F(DiagnoseLlmCliTest, AutoAsksTheLlmOnlyWhenTheBuiltinDiagnosisIsUnsure) {
  auto sure = RunSchedmateWithLlm(
      server_.base_url(), "diagnose " + ShellQuote(path_) + " --json --no-examples --engine auto");
  ASSERT_EQ(sure.exit_code, 0) << sure.err;
  json js = json::parse(sure.out);
  EXPECT_EQ(js["engine"], "builtin");
  EXPECT_EQ(js["label"], "infrastructure");
  EXPECT_GE(js["confidence"].get<double>(), 0.8);
  EXPECT_EQ(server_.requests().size(), 0u);

  const std::string unsure = dir_.File("unsure.log");
  ASSERT_OK(WriteStringToFile(unsure, "epoch 4 step 120 loss 0.72\nERROR: trainer stopped\n"));
  auto builtin = RunSchedmateWithLlm(server_.base_url(),
                                     "diagnose " + ShellQuote(unsure) + " --json --no-examples");
  ASSERT_EQ(builtin.exit_code, 0) << builtin.err;
  EXPECT_EQ(json::parse(builtin.out)["label"], "unknown");
  EXPECT_EQ(server_.requests().size(), 0u);

  // The first consultation probes the server (a tiny chat request), then asks for the diagnosis.
  server_.SetChatHandler([](const json& request) {
    if (request.dump().find("Reply with the single word OK") != std::string::npos) {
      return ScriptedReply::Text("OK");
    }
    return ScriptedReply::Text(json{
        {"label", "application"},
        {"category", "scripted_category"},
        {"confidence", 0.9},
        {"root_cause_line", 2},
        {"evidence",
         {{{"line_no", 2}}}}}.dump());
  });
  auto asked = RunSchedmateWithLlm(
      server_.base_url(), "diagnose " + ShellQuote(unsure) + " --json --no-examples --engine auto");
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  json ja = json::parse(asked.out);
  EXPECT_EQ(ja["engine"], "llm (scripted-model)");
  EXPECT_EQ(ja["label"], "application");
  EXPECT_EQ(ja["category"], "scripted_category");
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 2u);  // the probe and the diagnosis

  // --llm-below 0: nothing is below it, so even the unsure diagnosis stays built-in.
  auto never = RunSchedmateWithLlm(
      server_.base_url(),
      "diagnose " + ShellQuote(unsure) + " --json --no-examples --engine auto --llm-below 0");
  ASSERT_EQ(never.exit_code, 0) << never.err;
  EXPECT_EQ(json::parse(never.out)["engine"], "builtin");
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 2u);
}

// A log with bytes that are not UTF-8 (binary junk, Latin-1) must still reach the model as valid
// JSON (U+FFFD in place of the bytes), never crash the request builder.
TEST_F(DiagnoseLlmCliTest, InvalidUtf8InTheLogReachesTheModelAsValidJson) {
  const std::string bad = dir_.File("bad.log");
  ASSERT_OK(WriteStringToFile(bad,
                              "step 1 loss 0.5\n\xff\xfe junk \xc3\x28\n"
                              "NVRM: Xid 79 \xff GPU has fallen off the bus\n"
                              "RuntimeError: CUDA error \xe9t\xe9\n"));
  server_.EnqueueChat(ScriptedReply::Text(json{
      {"label", "infrastructure"},
      {"category", "gpu_xid"},
      {"confidence", 0.9},
      {"root_cause_line", 3},
      {"evidence", {{{"line_no", 3}}}}}.dump()));
  auto r = RunSchedmateWithLlm(
      server_.base_url(), "diagnose " + ShellQuote(bad) + " --json --no-examples --engine llm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["engine"], "llm (scripted-model)");
  ASSERT_EQ(server_.CountRequests("/v1/chat/completions"), 1u);
  const auto req = server_.requests()[0];
  ASSERT_FALSE(req.json.is_null()) << "the request body was not JSON";
  EXPECT_NE(req.body.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

}  // namespace
}  // namespace schedmate
