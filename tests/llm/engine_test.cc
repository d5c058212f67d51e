#include "llm/engine.h"

#include <gtest/gtest.h>

#include "core/file_util.h"
#include "llm/budgeted_chat_client.h"
#include "llm/caching_chat_client.h"
#include "llm/llm_setup.h"
#include "testing/llm/fake_chat_client.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

TEST(EngineChoiceTest, Parses) {
  EXPECT_EQ(*ParseEngineChoice("builtin"), EngineChoice::kBuiltin);
  EXPECT_EQ(*ParseEngineChoice("LLM"), EngineChoice::kLlm);
  EXPECT_EQ(*ParseEngineChoice(" auto "), EngineChoice::kAuto);
  auto bad = ParseEngineChoice("gpt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--engine: expected builtin, llm or auto, got 'gpt'");
  EXPECT_EQ(EngineChoiceName(EngineChoice::kAuto), "auto");
}

TEST(FallbackReasonTest, OneFormForEveryComponent) {
  EXPECT_EQ(FallbackReason(Status::DeadlineExceeded("timeout after 20 s; POST http://h/v1/chat")),
            "builtin (llm unavailable: timeout after 20 s)");
  EXPECT_EQ(FallbackReason(Status::Unavailable("HTTP 503; POST u: overloaded; after 3 attempts")),
            "builtin (llm unavailable: HTTP 503)");
  EXPECT_EQ(FallbackReason(Status::ResourceExhausted("token budget used up; 10 of 5"), "drain"),
            "drain (llm unavailable: token budget used up)");
  EXPECT_EQ(FallbackReason(
                Status::DataLoss("schema violation at $.x: expected integer; after 2 attempts")),
            "builtin (llm answer rejected: schema violation at $.x: expected integer)");
  EXPECT_EQ(LlmEngineLabel("qwen"), "llm (qwen)");
  EXPECT_EQ(FallbackNotice("advise", Status::Unavailable("connection refused; POST u")),
            "schedmate: warning: advise: the LLM failed (connection refused; POST u); using the "
            "built-in engine");
}

std::unique_ptr<LlmSetup> MakeSetup(const std::string& base_url, LlmConfig c = {}) {
  c.chat.base_url = base_url;
  c.chat.model = base_url.empty() ? "" : "test-model";
  c.chat.timeout = Duration::Seconds(5);
  c.probe_timeout = Duration::Millis(500);
  LlmSetupDeps deps;
  deps.sleeper = std::make_unique<schedmate::testing::RecordingSleeper>();
  auto s = LlmSetup::Create(std::move(c), std::move(deps));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

TEST(DecideEngineTest, NotConfigured) {
  auto setup = MakeSetup("");
  EXPECT_FALSE(setup->chat_configured());
  auto b = DecideEngine(EngineChoice::kBuiltin, setup.get());
  EXPECT_FALSE(b.use_llm);
  EXPECT_EQ(b.engine, "builtin");
  auto a = DecideEngine(EngineChoice::kAuto, setup.get());
  EXPECT_FALSE(a.use_llm);
  EXPECT_EQ(a.engine, "builtin");
  EXPECT_TRUE(a.notice.empty());
  auto l = DecideEngine(EngineChoice::kLlm, nullptr);
  EXPECT_FALSE(l.use_llm);
  EXPECT_EQ(l.engine, "builtin (llm unavailable: not configured)");
  EXPECT_NE(l.notice.find("SCHEDMATE_LLM_BASE_URL"), std::string::npos);
  // The offline client fails so callers fall back.
  ChatRequest req;
  req.messages = {ChatMessage::User("x")};
  EXPECT_EQ(setup->chat().Complete(req).status().code(), StatusCode::kUnavailable);
}

TEST(DecideEngineTest, AutoProbesOnceAndUsesAHealthyServer) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(ScriptedReply::Text("OK"));
  auto setup = MakeSetup(server.base_url());
  auto d = DecideEngine(EngineChoice::kAuto, setup.get());
  EXPECT_TRUE(d.use_llm);
  EXPECT_EQ(d.engine, "llm (test-model)");
  auto again = DecideEngine(EngineChoice::kAuto, setup.get());
  EXPECT_TRUE(again.use_llm);
  EXPECT_EQ(server.CountRequests("/v1/chat/completions"), 1u);
  EXPECT_EQ(server.requests()[0].json["max_tokens"], 4);
}

TEST(DecideEngineTest, AutoFallsBackWhenTheProbeTimesOut) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(ScriptedReply::Text("OK").WithDelay(Duration::Seconds(5)));
  auto setup = MakeSetup(server.base_url());
  auto d = DecideEngine(EngineChoice::kAuto, setup.get());
  EXPECT_FALSE(d.use_llm);
  EXPECT_EQ(d.engine, "builtin (llm unavailable: timeout after 0.5 s)");
  EXPECT_NE(d.notice.find("--engine auto"), std::string::npos);
  // --engine llm does not probe: it uses the model and falls back per call.
  auto l = DecideEngine(EngineChoice::kLlm, setup.get());
  EXPECT_TRUE(l.use_llm);
  EXPECT_EQ(l.engine, "llm (test-model)");
}

TEST(LlmSetupTest, StackCachesBudgetsRetriesAndLogs) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(ScriptedReply::Error(503, "warming up"));
  server.EnqueueChat(ScriptedReply::Text("answer", 30, 10));
  server.EnqueueChat(ScriptedReply::Text("answer 2", 30, 10));
  schedmate::testing::TempDir dir;
  LlmConfig c;
  c.cache_dir = dir.File("cache");
  c.call_log = dir.File("calls.jsonl");
  c.token_budget = 45;
  auto setup = MakeSetup(server.base_url(), c);
  ChatRequest req;
  req.messages = {ChatMessage::User("q1")};
  auto a = setup->chat().Complete(req);
  ASSERT_OK(a);
  EXPECT_EQ(a->message.content, "answer");
  auto hit = setup->chat().Complete(req);  // cached: no HTTP, no budget
  ASSERT_OK(hit);
  EXPECT_EQ(server.CountRequests("/v1/chat/completions"), 2u);
  ASSERT_NE(setup->budget(), nullptr);
  EXPECT_EQ(setup->budget()->used_tokens(), 40);
  EXPECT_EQ(setup->cache()->hits(), 1);
  req.messages = {ChatMessage::User("q2")};
  ASSERT_OK(setup->chat().Complete(req));  // 40 < 45 still allowed
  req.messages = {ChatMessage::User("q3")};
  EXPECT_EQ(setup->chat().Complete(req).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(server.CountRequests("/v1/chat/completions"), 3u);
  auto log = ReadFileToString(dir.File("calls.jsonl"));
  ASSERT_OK(log);
  // One line per HTTP attempt: the 503, then two answers.
  EXPECT_NE(log->find("\"outcome\":\"UNAVAILABLE\""), std::string::npos);
  size_t lines = 0;
  for (char ch : *log) lines += ch == '\n';
  EXPECT_EQ(lines, 3u);
}

TEST(LlmSetupTest, EmbedderUsesTheScriptedVectors) {
  ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.SetEmbeddingDimension(4);
  LlmConfig c;
  c.embeddings.base_url = server.base_url();
  c.embeddings.model = "bge";
  auto setup = MakeSetup(server.base_url(), c);
  ASSERT_TRUE(setup->embeddings_configured());
  std::vector<std::string> texts = {"a", "b", "c"};
  auto v = setup->embedder().Embed(texts);
  ASSERT_OK(v);
  EXPECT_EQ(v->size(), 3u);
  EXPECT_EQ(setup->embedder().Dimension(), 4u);
}

}  // namespace
}  // namespace schedmate::llm

namespace schedmate::llm {
namespace {

TEST(RunEngineTest, UsesTheLlmAndFallsBackSayingWhy) {
  EngineDecision use{true, "llm (qwen)", ""};
  int builtin_calls = 0;
  std::function<int()> builtin = [&] {
    ++builtin_calls;
    return 1;
  };
  auto ok = RunEngine<int>(
      use, [] { return Result<int>(42); }, builtin, "advise");
  EXPECT_EQ(ok.value, 42);
  EXPECT_EQ(ok.engine, "llm (qwen)");
  EXPECT_TRUE(ok.notice.empty());
  EXPECT_EQ(builtin_calls, 0);

  auto failed = RunEngine<int>(
      use, [] { return Result<int>(Status::DeadlineExceeded("timeout after 20 s; POST u")); },
      builtin, "advise");
  EXPECT_EQ(failed.value, 1);
  EXPECT_EQ(failed.engine, "builtin (llm unavailable: timeout after 20 s)");
  EXPECT_NE(failed.notice.find("advise: the LLM failed"), std::string::npos);

  EngineDecision off{false, "builtin (llm unavailable: not configured)", "warn"};
  auto named = RunEngine<int>(
      off, [] { return Result<int>(0); }, builtin, "logs", "", "drain");
  EXPECT_EQ(named.engine, "drain (llm unavailable: not configured)");
  EXPECT_EQ(named.notice, "warn");
  EXPECT_EQ(builtin_calls, 2);
}

}  // namespace
}  // namespace schedmate::llm
