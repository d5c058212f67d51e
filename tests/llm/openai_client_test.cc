// OpenAiCompatibleClient / OpenAiEmbedder over the real curl transport against the scripted
// loopback server.
#include "llm/openai_client.h"

#include <gtest/gtest.h>

#include <chrono>

#include "llm/curl_transport.h"
#include "testing/llm/scripted_chat_server.h"
#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;
using schedmate::testing::ScriptedChatServer;
using schedmate::testing::ScriptedReply;

class OpenAiClientTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(server_.Start()); }
  OpenAiEndpoint Endpoint(std::string key = "") {
    OpenAiEndpoint e;
    e.base_url = server_.base_url();
    e.model = "test-model";
    e.api_key = std::move(key);
    e.connect_timeout = Duration::Seconds(2);
    e.timeout = Duration::Seconds(5);
    return e;
  }
  ChatRequest Hello() {
    ChatRequest r;
    r.messages = {ChatMessage::User("hello")};
    r.max_tokens = 8;
    return r;
  }
  ScriptedChatServer server_;
  CurlHttpTransport transport_;
};

TEST_F(OpenAiClientTest, SendsTheExpectedRequestAndParsesTheAnswer) {
  server_.EnqueueChat(ScriptedReply::Text("hi there", 12, 3));
  OpenAiCompatibleClient client(Endpoint("sekret"), transport_);
  auto r = client.Complete(Hello());
  ASSERT_OK(r);
  EXPECT_EQ(r->message.content, "hi there");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(r->usage.prompt_tokens, 12);
  EXPECT_EQ(r->usage.completion_tokens, 3);
  auto reqs = server_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/v1/chat/completions");
  EXPECT_EQ(reqs[0].headers["authorization"], "Bearer sekret");
  EXPECT_EQ(reqs[0].headers["content-type"], "application/json");
  EXPECT_EQ(reqs[0].json["model"], "test-model");
  EXPECT_EQ(reqs[0].json["messages"][0], (json{{"role", "user"}, {"content", "hello"}}));
  EXPECT_EQ(reqs[0].json["max_tokens"], 8);
}

TEST_F(OpenAiClientTest, NoAuthorizationHeaderWithoutAKey) {
  server_.EnqueueChat(ScriptedReply::Text("x"));
  OpenAiCompatibleClient client(Endpoint(), transport_);
  ASSERT_OK(client.Complete(Hello()));
  EXPECT_EQ(server_.requests()[0].headers.count("authorization"), 0u);
}

TEST_F(OpenAiClientTest, ParsesToolCalls) {
  server_.EnqueueChat(ScriptedReply::ToolCalls({{"call_1", "file_tree", R"({"depth":2})"}}));
  OpenAiCompatibleClient client(Endpoint(), transport_);
  auto r = client.Complete(Hello());
  ASSERT_OK(r);
  ASSERT_EQ(r->message.tool_calls.size(), 1u);
  EXPECT_EQ(r->message.tool_calls[0], (ToolCall{"call_1", "file_tree", R"({"depth":2})"}));
  EXPECT_EQ(r->finish_reason, "tool_calls");
}

TEST_F(OpenAiClientTest, StreamsDeltasInOrder) {
  server_.EnqueueChat(ScriptedReply::Stream({"The ", "job ", "failed."}));
  OpenAiCompatibleClient client(Endpoint(), transport_);
  std::vector<std::string> deltas;
  auto r = client.CompleteStream(Hello(), [&](const StreamDelta& d) {
    deltas.push_back(d.content);
    return true;
  });
  ASSERT_OK(r);
  EXPECT_EQ(deltas, (std::vector<std::string>{"The ", "job ", "failed."}));
  EXPECT_EQ(r->message.content, "The job failed.");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_EQ(server_.requests()[0].json["stream"], true);
  EXPECT_EQ(server_.requests()[0].headers["accept"], "text/event-stream");
}

TEST_F(OpenAiClientTest, StreamCutOffIsAnError) {
  ScriptedReply cut = ScriptedReply::Stream({"partial"}, /*done=*/false);
  server_.EnqueueChat(cut);
  OpenAiCompatibleClient client(Endpoint(), transport_);
  auto r = client.CompleteStream(Hello(), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("stream cut off"), std::string::npos);
}

TEST_F(OpenAiClientTest, NonStreamingAnswerToAStreamRequestIsAnError) {
  server_.EnqueueChat(ScriptedReply::Text("whole answer at once"));
  OpenAiCompatibleClient client(Endpoint(), transport_);
  auto r = client.CompleteStream(Hello(), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message().rfind("no server-sent events", 0), 0u) << r.status().message();
}

TEST_F(OpenAiClientTest, StreamStoppedByCaller) {
  server_.EnqueueChat(ScriptedReply::Stream({"a", "b", "c"}));
  OpenAiCompatibleClient client(Endpoint(), transport_);
  int seen = 0;
  auto r = client.CompleteStream(Hello(), [&](const StreamDelta&) { return ++seen < 2; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(seen, 2);
}

TEST_F(OpenAiClientTest, StreamErrorStatusIsMapped) {
  server_.EnqueueChat(ScriptedReply::Error(429, "slow down"));
  OpenAiCompatibleClient client(Endpoint(), transport_);
  auto r = client.CompleteStream(Hello(), nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("HTTP 429"), std::string::npos);
  EXPECT_NE(r.status().message().find("slow down"), std::string::npos);
}

TEST_F(OpenAiClientTest, HttpErrorsBecomeStatuses) {
  server_.RequireApiKey("right");
  OpenAiCompatibleClient client(Endpoint("wrong"), transport_);
  auto r = client.Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("HTTP 401"), std::string::npos);
  EXPECT_NE(r.status().message().find("API key"), std::string::npos);
}

TEST_F(OpenAiClientTest, MalformedBodyIsDataLoss) {
  server_.EnqueueChat(ScriptedReply::Raw(200, "{\"choices\": [ {\"message\": "));
  OpenAiCompatibleClient client(Endpoint(), transport_);
  auto r = client.Complete(Hello());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message().rfind("malformed JSON from server", 0), 0u);
}

TEST_F(OpenAiClientTest, SlowAnswerTimesOut) {
  server_.EnqueueChat(ScriptedReply::Text("late").WithDelay(Duration::Seconds(3)));
  OpenAiEndpoint e = Endpoint();
  e.timeout = Duration::Millis(300);
  OpenAiCompatibleClient client(e, transport_);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = client.Complete(Hello());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message().rfind("timeout after 0.3 s", 0), 0u) << r.status().message();
  EXPECT_LT(s, 2.0);
}

TEST(OpenAiClientDeadPortTest, ConnectionRefusedIsUnavailable) {
  int port;
  {
    ScriptedChatServer s;
    ASSERT_OK(s.Start());
    port = s.port();
  }  // stopped: nothing listens there now
  CurlHttpTransport transport;
  OpenAiEndpoint e{"http://127.0.0.1:" + std::to_string(port), "m", "", Duration::Seconds(2),
                   Duration::Seconds(2)};
  OpenAiCompatibleClient client(e, transport);
  ChatRequest req;
  req.messages = {ChatMessage::User("x")};
  auto r = client.Complete(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message().rfind("connection refused", 0), 0u) << r.status().message();
}

TEST_F(OpenAiClientTest, EmbeddingsAreDeterministicAndLearnTheDimension) {
  server_.SetEmbeddingDimension(16);
  OpenAiEmbedder embedder(Endpoint(), transport_);
  EXPECT_EQ(embedder.Dimension(), 0u);
  std::vector<std::string> texts = {"nccl timeout", "loss=0.3"};
  auto a = embedder.Embed(texts);
  ASSERT_OK(a);
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].size(), 16u);
  EXPECT_EQ(embedder.Dimension(), 16u);
  EXPECT_EQ((*a)[0], ScriptedChatServer::DeterministicEmbedding("nccl timeout", 16));
  EXPECT_NE((*a)[0], (*a)[1]);
  auto reqs = server_.requests();
  EXPECT_EQ(reqs[0].path, "/v1/embeddings");
  EXPECT_EQ(reqs[0].json["input"], (json{"nccl timeout", "loss=0.3"}));
  EXPECT_EQ(reqs[0].json["model"], "test-model");
  server_.SetEmbeddingDimension(8);  // the server changed model underneath us
  auto b = embedder.Embed(texts);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace schedmate::llm

namespace schedmate::llm {
namespace {

TEST(CurlTransportTest, OversizedAnswersAreRefused) {
  schedmate::testing::ScriptedChatServer server;
  ASSERT_OK(server.Start());
  server.EnqueueChat(schedmate::testing::ScriptedReply::Text(std::string(10000, 'x')));
  CurlHttpTransport transport;
  HttpRequest req;
  req.url = server.base_url() + "/v1/chat/completions";
  req.body = "{}";
  req.max_response_bytes = 1000;
  auto r = transport.Send(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message().rfind("answer too large", 0), 0u);
}

}  // namespace
}  // namespace schedmate::llm
