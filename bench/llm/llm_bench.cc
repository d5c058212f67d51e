// Micro-benchmarks of the llm layer's own overhead (no model): request serialisation, answer
// parsing, SSE framing, schema validation, and one HTTP round trip over loopback to the scripted
// server (client + curl + server cost per call, the floor under any real model's latency).
#include <benchmark/benchmark.h>

#include "llm/curl_transport.h"
#include "llm/json_schema.h"
#include "llm/openai_client.h"
#include "llm/openai_protocol.h"
#include "testing/llm/scripted_chat_server.h"

namespace schedmate::llm {
namespace {

using nlohmann::json;

ChatRequest BigRequest() {
  ChatRequest r;
  r.messages = {ChatMessage::System(std::string(2000, 's')),
                ChatMessage::User(std::string(8000, 'u'))};
  r.tools = {ToolSpec{"file_read",
                      "Read a file",
                      {{"type", "object"},
                       {"properties", {{"path", {{"type", "string"}}}}},
                       {"required", {"path"}}}}};
  r.temperature = 0.0;
  r.max_tokens = 512;
  return r;
}

void BM_ChatRequestToJson(benchmark::State& state) {
  const ChatRequest r = BigRequest();
  for (auto _ : state) benchmark::DoNotOptimize(ChatRequestToJson(r, "m", false).dump());
}
BENCHMARK(BM_ChatRequestToJson);

void BM_ParseChatResponse(benchmark::State& state) {
  const std::string body =
      json{{"choices",
            {{{"message", {{"role", "assistant"}, {"content", std::string(4000, 'a')}}},
              {"finish_reason", "stop"}}}},
           {"usage", {{"prompt_tokens", 100}, {"completion_tokens", 1000}}}}
          .dump();
  for (auto _ : state) benchmark::DoNotOptimize(ParseChatResponse(body));
}
BENCHMARK(BM_ParseChatResponse);

void BM_SseStream200Chunks(benchmark::State& state) {
  std::string stream;
  for (int i = 0; i < 200; ++i) {
    stream += "data: " +
              json{{"choices", {{{"delta", {{"content", "token "}}}, {"finish_reason", nullptr}}}}}
                  .dump() +
              "\n\n";
  }
  stream += "data: [DONE]\n\n";
  for (auto _ : state) {
    SseParser p;
    StreamAccumulator acc;
    for (size_t i = 0; i < stream.size(); i += 512) {
      for (const std::string& d : p.Feed(std::string_view(stream).substr(i, 512))) {
        benchmark::DoNotOptimize(acc.Add(d));
      }
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * stream.size()));
}
BENCHMARK(BM_SseStream200Chunks);

void BM_ValidateJson(benchmark::State& state) {
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"framework", {{"type", "string"}, {"enum", {"pytorch", "jax", "other"}}}},
                         {"epochs", {{"type", "integer"}, {"minimum", 1}}},
                         {"datasets", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
                       {"required", {"framework", "epochs"}}};
  const json value = {
      {"framework", "jax"}, {"epochs", 90}, {"datasets", {"imagenet", "coco", "c4", "wiki"}}};
  for (auto _ : state) benchmark::DoNotOptimize(ValidateJson(value, schema));
}
BENCHMARK(BM_ValidateJson);

void BM_LoopbackRoundTrip(benchmark::State& state) {
  schedmate::testing::ScriptedChatServerOptions opts;
  opts.max_requests = 1'000'000;
  schedmate::testing::ScriptedChatServer server(opts);
  if (!server.Start().ok()) {
    state.SkipWithError("cannot start the scripted server");
    return;
  }
  server.SetChatHandler(
      [](const json&) { return schedmate::testing::ScriptedReply::Text("pong"); });
  CurlHttpTransport transport;
  OpenAiCompatibleClient client(
      {server.base_url(), "m", "", Duration::Seconds(2), Duration::Seconds(5)}, transport);
  ChatRequest r;
  r.messages = {ChatMessage::User("ping")};
  for (auto _ : state) {
    auto resp = client.Complete(r);
    if (!resp.ok()) {
      state.SkipWithError(resp.status().ToString().c_str());
      break;
    }
  }
}
BENCHMARK(BM_LoopbackRoundTrip)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace schedmate::llm
