#include "llm/openai_protocol.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;

TEST(ChatRequestToJsonTest, WritesThePortableSubsetOnly) {
  ChatRequest r;
  r.messages = {ChatMessage::System("sys"), ChatMessage::User("hi"),
                ChatMessage::Assistant("", {ToolCall{"c1", "file_read", R"({"path":"a"})"}}),
                ChatMessage::Tool("c1", "contents")};
  r.tools = {ToolSpec{"file_read", "Read a file", {{"type", "object"}}}};
  r.response_format = JsonSchemaFormat{"meta", {{"type", "object"}}, true};
  r.temperature = 0.2;
  r.max_tokens = 100;
  r.seed = 42;
  r.stop = {"\n\n"};
  json j = ChatRequestToJson(r, "default-model", /*stream=*/false);
  EXPECT_EQ(j["model"], "default-model");
  ASSERT_EQ(j["messages"].size(), 4u);
  EXPECT_EQ(j["messages"][0], (json{{"role", "system"}, {"content", "sys"}}));
  EXPECT_EQ(j["messages"][2]["content"], nullptr);
  EXPECT_EQ(j["messages"][2]["tool_calls"][0]["function"]["name"], "file_read");
  EXPECT_EQ(j["messages"][2]["tool_calls"][0]["function"]["arguments"], R"({"path":"a"})");
  EXPECT_EQ(j["messages"][3]["tool_call_id"], "c1");
  EXPECT_EQ(j["tools"][0]["type"], "function");
  EXPECT_EQ(j["tools"][0]["function"]["parameters"], (json{{"type", "object"}}));
  EXPECT_EQ(j["response_format"]["type"], "json_schema");
  EXPECT_EQ(j["response_format"]["json_schema"]["name"], "meta");
  EXPECT_EQ(j["response_format"]["json_schema"]["strict"], true);
  EXPECT_EQ(j["temperature"], 0.2);
  EXPECT_EQ(j["max_tokens"], 100);
  EXPECT_EQ(j["seed"], 42);
  EXPECT_EQ(j["stop"], (json{"\n\n"}));
  EXPECT_FALSE(j.contains("stream"));
  for (const char* forbidden :
       {"tool_choice", "logprobs", "n", "logit_bias", "parallel_tool_calls"}) {
    EXPECT_FALSE(j.contains(forbidden)) << forbidden;
  }
}

TEST(ChatRequestToJsonTest, OmitsUnsetOptionsAndHonoursRequestModel) {
  ChatRequest r;
  r.model = "explicit";
  r.messages = {ChatMessage::User("hi")};
  json j = ChatRequestToJson(r, "default-model", /*stream=*/true);
  EXPECT_EQ(j["model"], "explicit");
  EXPECT_EQ(j["stream"], true);
  for (const char* absent :
       {"tools", "response_format", "temperature", "max_tokens", "seed", "stop"}) {
    EXPECT_FALSE(j.contains(absent)) << absent;
  }
}

TEST(ParseChatResponseTest, ReadsContentToolCallsUsage) {
  auto r = ParseChatResponse(R"({"model":"m","choices":[{"index":0,"message":{"role":"assistant",
      "content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f",
      "arguments":"{\"x\":1}"}},{"id":"b","function":{"name":"g","arguments":{"y":2}}}]},
      "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":7,"completion_tokens":3}})");
  ASSERT_OK(r);
  EXPECT_EQ(r->message.content, "");
  ASSERT_EQ(r->message.tool_calls.size(), 2u);
  EXPECT_EQ(r->message.tool_calls[0], (ToolCall{"a", "f", R"({"x":1})"}));
  EXPECT_EQ(r->message.tool_calls[1].arguments, R"({"y":2})");  // object arguments serialised
  EXPECT_EQ(r->finish_reason, "tool_calls");
  EXPECT_EQ(r->usage.prompt_tokens, 7);
  EXPECT_EQ(r->usage.total_tokens, 10);  // derived when absent
  EXPECT_EQ(r->model, "m");
}

TEST(ParseChatResponseTest, RejectsMalformedAnswersWithAReason) {
  struct Case {
    const char* name;
    const char* body;
    const char* expect;
  };
  const Case cases[] = {
      {"not json", "{\"choices\": [", "malformed JSON"},
      {"not an object", "[1,2]", "not an object"},
      {"no choices", R"({"choices":[]})", "no choices"},
      {"no message", R"({"choices":[{"index":0}]})", "no choices[0].message"},
      {"tool call without name", R"({"choices":[{"message":{"tool_calls":[{"function":{}}]}}]})",
       "function.name"},
  };
  auto in_band = ParseChatResponse(R"({"error":{"message":"model overloaded"}})");
  ASSERT_FALSE(in_band.ok());
  EXPECT_EQ(in_band.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(in_band.status().message().find("model overloaded"), std::string::npos);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = ParseChatResponse(c.body);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().message();
  }
}

TEST(SseParserTest, SplitsEventsWhateverTheChunking) {
  const std::string stream =
      ": keep-alive\r\ndata: {\"a\":1}\r\n\r\nevent: x\ndata: line1\ndata: line2\n\ndata: "
      "[DONE]\n\n";
  for (size_t step : {1u, 2u, 5u, 1000u}) {
    SCOPED_TRACE(step);
    SseParser p;
    std::vector<std::string> got;
    for (size_t i = 0; i < stream.size(); i += step) {
      for (auto& d : p.Feed(stream.substr(i, step))) got.push_back(d);
    }
    EXPECT_FALSE(p.Finish().has_value());
    EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "line1\nline2", "[DONE]"}));
  }
}

TEST(SseParserTest, FinishReturnsAnUnterminatedLastEvent) {
  SseParser p;
  EXPECT_TRUE(p.Feed("data: {\"x\":2}").empty());
  EXPECT_EQ(p.Finish(), std::optional<std::string>("{\"x\":2}"));
}

TEST(StreamAccumulatorTest, MergesContentAndToolCallPieces) {
  StreamAccumulator acc;
  const char* chunks[] = {
      R"({"model":"m","choices":[{"delta":{"role":"assistant","content":"Hel"}}]})",
      R"({"choices":[{"delta":{"content":"lo"}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"file_","arguments":"{\"pa"}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"th\":1}"}}]}}]})",
      R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":4,"completion_tokens":2}})",
  };
  std::string text;
  for (const char* c : chunks) {
    auto piece = acc.Add(c);
    ASSERT_OK(piece);
    text += *piece;
  }
  EXPECT_EQ(text, "Hello");
  EXPECT_TRUE(acc.saw_finish());
  ASSERT_OK(acc.Add("[DONE]"));
  EXPECT_TRUE(acc.done());
  ChatResponse r = acc.Take();
  EXPECT_EQ(r.message.content, "Hello");
  ASSERT_EQ(r.message.tool_calls.size(), 1u);
  EXPECT_EQ(r.message.tool_calls[0], (ToolCall{"c1", "file_read", R"({"path":1})"}));
  EXPECT_EQ(r.finish_reason, "tool_calls");
  EXPECT_EQ(r.usage.total_tokens, 6);
  EXPECT_EQ(r.model, "m");
}

TEST(StreamAccumulatorTest, RejectsGarbageChunks) {
  StreamAccumulator acc;
  auto r = acc.Add("{oops");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

TEST(EmbeddingProtocolTest, OrdersByIndexAndChecksShape) {
  auto ok = ParseEmbeddingResponse(
      R"({"data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}]})", 2);
  ASSERT_OK(ok);
  EXPECT_EQ((*ok)[0], (Embedding{1, 2}));
  EXPECT_EQ((*ok)[1], (Embedding{3, 4}));
  EXPECT_FALSE(ParseEmbeddingResponse(R"({"data":[{"embedding":[1]}]})", 2).ok());
  EXPECT_FALSE(
      ParseEmbeddingResponse(R"({"data":[{"embedding":[1]},{"embedding":[1,2]}]})", 2).ok());
  EXPECT_FALSE(ParseEmbeddingResponse(R"({"data":[{"embedding":["x"]}]})", 1).ok());
  json req = EmbeddingRequestToJson(std::vector<std::string>{"a", "b"}, "bge");
  EXPECT_EQ(req, (json{{"model", "bge"}, {"input", {"a", "b"}}}));
}

TEST(HttpErrorToStatusTest, MapsRetryableAndPermanentCodes) {
  struct Case {
    int http;
    StatusCode code;
  };
  const Case cases[] = {
      {400, StatusCode::kInvalidArgument},    {401, StatusCode::kFailedPrecondition},
      {403, StatusCode::kFailedPrecondition}, {404, StatusCode::kNotFound},
      {408, StatusCode::kUnavailable},        {409, StatusCode::kUnavailable},
      {422, StatusCode::kInvalidArgument},    {429, StatusCode::kUnavailable},
      {500, StatusCode::kUnavailable},        {503, StatusCode::kUnavailable}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.http);
    Status s = HttpErrorToStatus(c.http, R"({"error":{"message":"boom"}})", "POST u");
    EXPECT_EQ(s.code(), c.code);
    EXPECT_EQ(s.message().rfind("HTTP " + std::to_string(c.http) + "; POST u: boom", 0), 0u)
        << s.message();
  }
}

TEST(EndpointUrlTest, AcceptsBaseWithOrWithoutV1) {
  EXPECT_EQ(EndpointUrl("http://h:8000", "chat/completions"), "http://h:8000/v1/chat/completions");
  EXPECT_EQ(EndpointUrl("http://h:8000/", "embeddings"), "http://h:8000/v1/embeddings");
  EXPECT_EQ(EndpointUrl("http://h:8000/v1/", "embeddings"), "http://h:8000/v1/embeddings");
}

}  // namespace
}  // namespace schedmate::llm
