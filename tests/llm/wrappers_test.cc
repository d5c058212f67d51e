// Retry, cache, budget, concurrency and logging wrappers.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "core/file_util.h"
#include "llm/budgeted_chat_client.h"
#include "llm/caching_chat_client.h"
#include "llm/caching_embedder.h"
#include "llm/call_log.h"
#include "llm/concurrency_limited_chat_client.h"
#include "llm/curl_transport.h"
#include "llm/logging_chat_client.h"
#include "llm/null_clients.h"
#include "llm/openai_client.h"
#include "llm/retrying_chat_client.h"
#include "testing/llm/fake_chat_client.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

using schedmate::testing::FakeChatClient;
using schedmate::testing::RecordingSleeper;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

ChatRequest Ask(const std::string& text) {
  ChatRequest r;
  r.messages = {ChatMessage::User(text)};
  return r;
}

class RetryOverHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(server_.Start());
    endpoint_ = {server_.base_url(), "m", "", Duration::Seconds(2), Duration::Seconds(5)};
  }
  ScriptedChatServer server_;
  CurlHttpTransport transport_;
  OpenAiEndpoint endpoint_;
  RecordingSleeper sleeper_;
};

TEST_F(RetryOverHttpTest, RateLimitThenSuccessTakesTwoCalls) {
  server_.EnqueueChat(ScriptedReply::Error(429, "rate limited"));
  server_.EnqueueChat(ScriptedReply::Text("fine"));
  OpenAiCompatibleClient http(endpoint_, transport_);
  RetryingChatClient client(http, RetryPolicy{}, sleeper_, /*seed=*/3);
  auto r = client.Complete(Ask("q"));
  ASSERT_OK(r);
  EXPECT_EQ(r->message.content, "fine");
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 2u);
  ASSERT_EQ(sleeper_.sleeps().size(), 1u);
  EXPECT_LE(sleeper_.sleeps()[0], Duration::Millis(500));
  EXPECT_GE(sleeper_.sleeps()[0], Duration::Millis(375));
}

TEST_F(RetryOverHttpTest, BadRequestIsNotRetried) {
  server_.EnqueueChat(ScriptedReply::Error(400, "bad schema"));
  server_.EnqueueChat(ScriptedReply::Text("never sent"));
  OpenAiCompatibleClient http(endpoint_, transport_);
  RetryingChatClient client(http, RetryPolicy{}, sleeper_);
  auto r = client.Complete(Ask("q"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 1u);
  EXPECT_TRUE(sleeper_.sleeps().empty());
}

TEST_F(RetryOverHttpTest, ServerErrorsExhaustTheRetries) {
  for (int i = 0; i < 4; ++i) server_.EnqueueChat(ScriptedReply::Error(500, "oops"));
  OpenAiCompatibleClient http(endpoint_, transport_);
  RetryingChatClient client(http, RetryPolicy{}, sleeper_);
  auto r = client.Complete(Ask("q"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("after 3 attempts"), std::string::npos);
  EXPECT_EQ(server_.CountRequests("/v1/chat/completions"), 3u);
  EXPECT_EQ(sleeper_.sleeps().size(), 2u);
}

TEST(RetryTest, PermanentCodesAreNeverRetried) {
  for (StatusCode code :
       {StatusCode::kInvalidArgument, StatusCode::kNotFound, StatusCode::kFailedPrecondition,
        StatusCode::kDataLoss, StatusCode::kResourceExhausted}) {
    SCOPED_TRACE(std::string(StatusCodeName(code)));
    FakeChatClient fake;
    fake.Enqueue(Status(code, "no"));
    RecordingSleeper sleeper;
    RetryingChatClient client(fake, RetryPolicy{}, sleeper);
    EXPECT_EQ(client.Complete(Ask("q")).status().code(), code);
    EXPECT_EQ(fake.calls(), 1u);
  }
}

TEST(RetryTest, TimeoutsAreRetried) {
  FakeChatClient fake;
  fake.Enqueue(Status::DeadlineExceeded("timeout after 1 s"));
  fake.EnqueueText("ok");
  RecordingSleeper sleeper;
  RetryingChatClient client(fake, RetryPolicy{}, sleeper);
  ASSERT_OK(client.Complete(Ask("q")));
  EXPECT_EQ(fake.calls(), 2u);
}

TEST(RetryTest, BackoffIsExponentialJitteredAndSeeded) {
  RecordingSleeper sleeper;
  RetryPolicy p{5, Duration::Millis(100), Duration::Millis(1000), 0.25};
  Retrier a(p, sleeper, 11), b(p, sleeper, 11);
  const int64_t caps[] = {100, 200, 400, 800, 1000, 1000};
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    Duration da = a.Backoff(i), db = b.Backoff(i);
    EXPECT_EQ(da, db);  // same seed, same pauses
    EXPECT_LE(da, Duration::Millis(caps[i]));
    EXPECT_GE(da, Duration::Micros(caps[i] * 750));
  }
}

TEST(RetryTest, StreamIsNotRetriedAfterContentWasDelivered) {
  // A fake whose stream delivers a piece and then fails.
  class HalfStream final : public ChatClient {
   public:
    int calls = 0;
    Result<ChatResponse> Complete(const ChatRequest&) override { return Status::Internal("no"); }
    Result<ChatResponse> CompleteStream(const ChatRequest&, const StreamCallback& cb) override {
      ++calls;
      cb(StreamDelta{"part"});
      return Status::Unavailable("connection error");
    }
  } half;
  RecordingSleeper sleeper;
  RetryingChatClient client(half, RetryPolicy{}, sleeper);
  auto r = client.CompleteStream(Ask("q"), [](const StreamDelta&) { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(half.calls, 1);
  EXPECT_NE(r.status().message().find("not retried"), std::string::npos);
}

TEST(CachingTest, SecondIdenticalRequestIsServedFromDisk) {
  schedmate::testing::TempDir dir;
  FakeChatClient fake;
  fake.EnqueueText("first", 9);
  fake.EnqueueText("second", 9);
  CachingChatClient cache(fake, dir.File("cache"), "http://x\nm");
  auto a = cache.Complete(Ask("same"));
  auto b = cache.Complete(Ask("same"));
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(b->message.content, "first");
  EXPECT_EQ(b->usage.total_tokens, 9);
  EXPECT_EQ(fake.calls(), 1u);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_TRUE(std::filesystem::exists(cache.EntryPath(Ask("same"))));
  auto c = cache.Complete(Ask("different"));
  ASSERT_OK(c);
  EXPECT_EQ(c->message.content, "second");
  EXPECT_EQ(fake.calls(), 2u);
  // A fresh client over the same directory (a later run) hits too, also for streams.
  FakeChatClient unused;
  CachingChatClient again(unused, dir.File("cache"), "http://x\nm");
  std::string streamed;
  auto d = again.CompleteStream(Ask("same"), [&](const StreamDelta& s) {
    streamed += s.content;
    return true;
  });
  ASSERT_OK(d);
  EXPECT_EQ(streamed, "first");
  EXPECT_EQ(unused.calls(), 0u);
}

TEST(CachingTest, NamespaceErrorsAndDamagedEntriesAreMisses) {
  schedmate::testing::TempDir dir;
  FakeChatClient fake;
  fake.Enqueue(Status::Unavailable("down"));
  fake.EnqueueText("a");
  fake.EnqueueText("b");
  fake.EnqueueText("c");
  CachingChatClient cache(fake, dir.path(), "ns1");
  EXPECT_FALSE(cache.Complete(Ask("q")).ok());  // errors are not cached
  EXPECT_EQ(cache.Complete(Ask("q"))->message.content, "a");
  CachingChatClient other_model(fake, dir.path(), "ns2");
  EXPECT_EQ(other_model.Complete(Ask("q"))->message.content, "b");
  ASSERT_OK(WriteStringToFile(cache.EntryPath(Ask("q")), "{broken"));
  EXPECT_EQ(cache.Complete(Ask("q"))->message.content, "c");
  EXPECT_EQ(fake.calls(), 4u);
}

TEST(BudgetTest, StopsOnceTheBudgetIsSpent) {
  FakeChatClient fake;
  fake.SetHandler([](const ChatRequest&) -> Result<ChatResponse> {
    ChatResponse r;
    r.message = ChatMessage::Assistant("ok");
    r.usage = {10, 5, 15};
    return r;
  });
  BudgetedChatClient client(fake, 20);
  ASSERT_OK(client.Complete(Ask("1")));
  ASSERT_OK(client.Complete(Ask("2")));  // 15 < 20: allowed, overruns to 30
  EXPECT_EQ(client.used_tokens(), 30);
  auto r = client.Complete(Ask("3"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "token budget used up; 30 of 20 tokens used");
  EXPECT_EQ(fake.calls(), 2u);
}

TEST(BudgetTest, EstimatesTokensWhenTheServerReportsNone) {
  FakeChatClient fake;
  fake.EnqueueText(std::string(40, 'a'), /*total_tokens=*/0);
  BudgetedChatClient client(fake, 1000);
  ASSERT_OK(client.Complete(Ask(std::string(40, 'b'))));
  EXPECT_EQ(client.used_tokens(), 20);  // 80 characters / 4
}

TEST(ConcurrencyTest, NeverMoreThanTheLimitInFlight) {
  std::atomic<int> in_flight{0}, peak{0};
  FakeChatClient fake;
  fake.SetHandler([&](const ChatRequest&) -> Result<ChatResponse> {
    int now = ++in_flight;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --in_flight;
    return ChatResponse{ChatMessage::Assistant("x"), "stop", {}, ""};
  });
  ConcurrencyLimitedChatClient client(fake, 2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] { EXPECT_TRUE(client.Complete(Ask("q")).ok()); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fake.calls(), 6u);
  EXPECT_EQ(peak.load(), 2);
}

TEST(LoggingTest, RecordsLatencyTokensAndOutcome) {
  FakeClock clock;
  FakeChatClient fake;
  fake.SetHandler([&](const ChatRequest& req) -> Result<ChatResponse> {
    clock.Advance(Duration::Millis(250));
    if (req.messages[0].content == "fail") return Status::DeadlineExceeded("timeout after 1 s; u");
    ChatResponse r;
    r.message = ChatMessage::Assistant("ok");
    r.usage = {7, 3, 10};
    r.finish_reason = "stop";
    return r;
  });
  MemoryCallLog log;
  LoggingChatClient client(fake, log, clock, "qwen");
  ASSERT_OK(client.Complete(Ask("hi")));
  EXPECT_FALSE(client.Complete(Ask("fail")).ok());
  auto recs = log.records();
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kind, "chat");
  EXPECT_EQ(recs[0].model, "qwen");
  EXPECT_EQ(recs[0].latency, Duration::Millis(250));
  EXPECT_EQ(recs[0].prompt_tokens, 7);
  EXPECT_EQ(recs[0].completion_tokens, 3);
  EXPECT_EQ(recs[0].outcome, "OK");
  EXPECT_EQ(recs[1].outcome, "DEADLINE_EXCEEDED");
  EXPECT_EQ(recs[1].error, "timeout after 1 s");
}

TEST(LoggingTest, JsonlLogWritesOneObjectPerLine) {
  schedmate::testing::TempDir dir;
  {
    auto log = JsonlCallLog::Open(dir.File("calls.jsonl"));
    ASSERT_OK(log);
    CallRecord r;
    r.kind = "embed";
    r.model = "bge";
    r.items = 3;
    r.latency = Duration::Millis(12);
    (*log)->Record(r);
    (*log)->Record(r);
  }
  auto text = ReadFileToString(dir.File("calls.jsonl"));
  ASSERT_OK(text);
  size_t lines = 0;
  for (char c : *text) lines += c == '\n';
  EXPECT_EQ(lines, 2u);
  auto first = nlohmann::json::parse(text->substr(0, text->find('\n')));
  EXPECT_EQ(first["kind"], "embed");
  EXPECT_EQ(first["items"], 3);
  EXPECT_EQ(first["latency_ms"], 12.0);
  EXPECT_FALSE(JsonlCallLog::Open(dir.File("no/such/dir/x.jsonl")).ok());
}

TEST(NullClientsTest, AlwaysUnavailable) {
  NullChatClient chat;
  auto r = chat.Complete(Ask("q"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(), "not configured");
  NullEmbedder emb("disabled");
  std::vector<std::string> t = {"a"};
  EXPECT_EQ(emb.Embed(t).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(emb.Dimension(), 0u);
}

}  // namespace
}  // namespace schedmate::llm

namespace schedmate::llm {
namespace {

class CountingEmbedder final : public Embedder {
 public:
  std::vector<std::vector<std::string>> batches;
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override {
    batches.emplace_back(texts.begin(), texts.end());
    std::vector<Embedding> out;
    for (const std::string& t : texts) out.push_back({static_cast<float>(t.size())});
    return out;
  }
  size_t Dimension() const override { return 1; }
};

TEST(CachingEmbedderTest, EmbedsEachTextOnceInOrder) {
  CountingEmbedder counting;
  CachingEmbedder cache(counting, /*max_entries=*/3);
  std::vector<std::string> a = {"x", "yy", "x"};
  auto r1 = cache.Embed(a);
  ASSERT_OK(r1);
  EXPECT_EQ(*r1, (std::vector<Embedding>{{1}, {2}, {1}}));
  EXPECT_EQ(counting.batches, (std::vector<std::vector<std::string>>{{"x", "yy"}}));
  std::vector<std::string> b = {"yy", "zzz", "x"};
  auto r2 = cache.Embed(b);
  ASSERT_OK(r2);
  EXPECT_EQ(*r2, (std::vector<Embedding>{{2}, {3}, {1}}));
  EXPECT_EQ(counting.batches.back(), (std::vector<std::string>{"zzz"}));
  EXPECT_EQ(cache.hits(), 3);
  EXPECT_EQ(cache.misses(), 3);
  std::vector<std::string> c = {"wwww"};  // beyond 3 entries: cleared, refilled
  ASSERT_OK(cache.Embed(c));
  ASSERT_OK(cache.Embed(a));
  EXPECT_EQ(counting.batches.back(), (std::vector<std::string>{"x", "yy"}));
}

}  // namespace
}  // namespace schedmate::llm
