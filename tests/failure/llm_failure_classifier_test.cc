// The failure handler's LLM engines against the scripted OpenAI-compatible server: the
// classifier's schema answer over the located window, citation checks, the LLM line judge driving
// the bisection (call counts), and failures that make the caller fall back.
#include "failure/llm_failure_classifier.h"

#include <gtest/gtest.h>

#include "core/check.h"
#include "core/strings.h"
#include "llm/engine.h"
#include "llm/llm_setup.h"
#include "testing/llm/fake_chat_client.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::failure {
namespace {

using nlohmann::json;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

const SignatureSet& Sigs() {
  static const SignatureSet* set = [] {
    auto r = SignatureSet::Builtin();
    SM_CHECK(r.ok()) << r.status().ToString();
    return new SignatureSet(std::move(r).value());
  }();
  return *set;
}

std::unique_ptr<llm::LlmSetup> MakeSetup(const std::string& base_url) {
  llm::LlmConfig c;
  c.chat.base_url = base_url;
  c.chat.model = "scripted-model";
  c.chat.timeout = Duration::Seconds(5);
  llm::LlmSetupDeps deps;
  deps.sleeper = std::make_unique<schedmate::testing::RecordingSleeper>();
  auto s = llm::LlmSetup::Create(std::move(c), std::move(deps));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// 200 lines of training output, then an NCCL failure report.
std::string FailedLog() {
  std::string log;
  for (int i = 1; i <= 200; ++i) log += "step " + std::to_string(i) + " loss 1.23\n";
  log +=
      "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129\n"  // 201
      "Traceback (most recent call last):\n"                                                // 202
      "  File \"train.py\", line 10, in <module>\n"                                         // 203
      "RuntimeError: NCCL communicator was aborted on rank 3.\n"                            // 204
      "ERROR: torchrun: worker failed with exit code 1\n";                                  // 205
  return log;
}

TEST(LlmFailureClassifierTest, SchemaAnswerOverTheLocatedWindow) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.SetChatHandler([](const json& req) {
    const std::string user = req["messages"][1]["content"];
    // The window the model sees: numbered lines with the root marked.
    EXPECT_NE(user.find(": NCCL WARN NET/IB"), std::string::npos);
    EXPECT_NE(user.find("ROOT "), std::string::npos);
    return ScriptedReply::Text(json{
        {"label", "infrastructure"},
        {"category", "NCCL_Network"},
        {"confidence", 0.86},
        {"root_cause_line", 201},
        {"evidence",
         {{{"line_no", 201}, {"text", "ignored: read from the log"}},
          {{"line_no", 204}},
          {{"line_no", 9999}}}}}.dump());
  });
  auto setup = MakeSetup(server.base_url());
  LogView log = LogView::FromString(FailedLog());
  int calls = 0;
  FailureHandlerOptions ho;
  auto d =
      DiagnoseWithLlm(setup->chat(), "scripted-model", Sigs(), nullptr, ho, log, false, {}, &calls);
  ASSERT_OK(d);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(d->label, FailureLabel::kInfrastructure);
  EXPECT_EQ(d->category, "nccl_network");
  EXPECT_DOUBLE_EQ(d->confidence, 0.86);
  ASSERT_TRUE(d->root_cause);
  EXPECT_EQ(d->engine, "builtin+llm:scripted-model");
  // Evidence cites only shown lines, with the log's text; the invented 9999 is dropped.
  for (const Evidence& e : d->evidence) {
    EXPECT_NE(e.line_no, 9999);
    EXPECT_NE(e.text, "ignored: read from the log");
    EXPECT_EQ(e.source.rfind("llm", 0), 0u);
  }
  EXPECT_GE(d->evidence.size(), 2u);
  EXPECT_EQ(server.CountRequests("/v1/chat/completions"), 1u);
  const json req = server.requests()[0].json;
  EXPECT_EQ(req["response_format"]["json_schema"]["name"], "failure_classification");
}

TEST(LlmFailureClassifierTest, LowConfidenceIsUnknownAndCallsAreCounted) {
  schedmate::testing::FakeChatClient fake;
  fake.EnqueueText(R"({"label":"application","category":"x","confidence":0.1,"evidence":[]})");
  LogView log = LogView::FromString(FailedLog());
  LlmFailureClassifier c(fake, "m", &log);
  LocatedLine root{LogLine{204, "RuntimeError: NCCL communicator was aborted on rank 3."},
                   LineRole::kOrigin, 0};
  auto r = c.Classify(FailureReport{root, {}, {}, ""});
  ASSERT_OK(r);
  EXPECT_EQ(r->label, FailureLabel::kUnknown);
  EXPECT_EQ(r->decided_by, "llm:m");
  EXPECT_EQ(c.calls(), 1);
  EXPECT_EQ(c.Name(), "llm:m");
}

TEST(LlmFailureClassifierTest, FailuresReachTheCallerWithAReason) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  auto setup = MakeSetup(server.base_url());
  LogView log = LogView::FromString(FailedLog());
  FailureHandlerOptions ho;
  // Malformed JSON, twice (one repair attempt).
  server.EnqueueChat(ScriptedReply::Text("{\"label\": infrastructure"));
  server.EnqueueChat(ScriptedReply::Text("```json\n{\"label\": \"maybe\"}\n```"));
  auto bad = DiagnoseWithLlm(setup->chat(), "scripted-model", Sigs(), nullptr, ho, log);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(llm::FallbackReason(bad.status()).rfind("builtin (llm answer rejected: ", 0), 0u);
  // 500 after retries.
  for (int i = 0; i < 3; ++i) server.EnqueueChat(ScriptedReply::Error(500, "down"));
  auto down = DiagnoseWithLlm(setup->chat(), "scripted-model", Sigs(), nullptr, ho, log);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(llm::FallbackReason(down.status()), "builtin (llm unavailable: HTTP 500)");
  // 429 after retries.
  for (int i = 0; i < 3; ++i) server.EnqueueChat(ScriptedReply::Error(429, "slow down"));
  auto limited = DiagnoseWithLlm(setup->chat(), "scripted-model", Sigs(), nullptr, ho, log);
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(llm::FallbackReason(limited.status()), "builtin (llm unavailable: HTTP 429)");
}

// A scripted "model" for the line judge: a line mentioning an error is an origin, Traceback and
// frames are trace, the torchrun summary is a wrapper.
ScriptedReply JudgeAnswer(const json& req) {
  const std::string user = req["messages"][1]["content"];
  if (StartsWith(user, "Does this chunk")) {
    const bool any =
        user.find("Error") != std::string::npos || user.find("Traceback") != std::string::npos ||
        user.find("NCCL WARN") != std::string::npos || user.find("ERROR") != std::string::npos;
    return ScriptedReply::Text(json{{"contains_failure", any}}.dump());
  }
  json lines = json::parse(user.substr(user.find('\n') + 1));
  json roles = json::array();
  for (const json& l : lines) {
    const std::string t = l;
    if (t.find("RuntimeError") != std::string::npos) {
      roles.push_back("origin");
    } else if (t.find("NCCL WARN") != std::string::npos) {
      roles.push_back("weak");
    } else if (t.find("torchrun") != std::string::npos) {
      roles.push_back("wrapper");
    } else if (t.find("Traceback") != std::string::npos || t.find("File \"") != std::string::npos) {
      roles.push_back("trace");
    } else {
      roles.push_back("none");
    }
  }
  return ScriptedReply::Text(json{{"roles", roles}}.dump());
}

TEST(LlmLineJudgeTest, BisectionWithTheLlmAsClassifier) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.SetChatHandler(JudgeAnswer);
  auto setup = MakeSetup(server.base_url());
  // A long log: the prefilter answers for chunks above the prompt budget.
  std::string text;
  for (int i = 1; i <= 5000; ++i) text += "step " + std::to_string(i) + " loss 1.23\n";
  text +=
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 10, in <module>\n"
      "RuntimeError: CUDA error: an illegal memory access was encountered\n"
      "ERROR: torchrun: worker failed with exit code 1\n";
  LogView log = LogView::FromString(text);
  RuleLineJudge rules(Sigs());
  LlmFailureOptions o;
  o.max_prompt_bytes = 2048;
  LlmLineJudge judge(setup->chat(), "scripted-model", rules, o);
  FirstErrorLocator locator(judge, LocatorOptions{.initial_chunk_bytes = 1024});
  auto loc = locator.Locate(log);
  ASSERT_OK(loc);
  ASSERT_TRUE(loc->root);
  EXPECT_EQ(loc->root->line.line_no, 5003);
  EXPECT_EQ(loc->root->role, LineRole::kOrigin);
  EXPECT_EQ(static_cast<size_t>(judge.calls()), server.CountRequests("/v1/chat/completions"));
  EXPECT_GE(judge.calls(), 2);  // at least one chunk question and one scoring
  EXPECT_LE(judge.calls() + judge.prefilter_calls(), 40);  // O(log n)
  EXPECT_EQ(judge.Name(), "llm:scripted-model");
}

TEST(LlmLineJudgeTest, WrongRoleCountIsRejected) {
  schedmate::testing::FakeChatClient fake;
  fake.EnqueueText(R"({"roles":["origin"]})");
  fake.EnqueueText(R"({"roles":["origin","origin","origin"]})");
  RuleLineJudge rules(Sigs());
  LlmLineJudge judge(fake, "m", rules);
  const std::string chunk = "a\nb\n";
  auto r = judge.ScoreLines(LogChunk{chunk, 0});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(fake.calls(), 2u);
  EXPECT_EQ(ParseLineRole("Origin"), LineRole::kOrigin);
  EXPECT_FALSE(ParseLineRole("fatal").has_value());
}

}  // namespace
}  // namespace schedmate::failure
