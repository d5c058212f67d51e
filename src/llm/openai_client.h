#pragma once
// OpenAiCompatibleClient and OpenAiEmbedder: the production backends. They speak the subset of
// the OpenAI HTTP API that vLLM, SGLang, llama.cpp's llama-server and Ollama all serve
// (POST {base_url}/v1/chat/completions, POST {base_url}/v1/embeddings) through an HttpTransport,
// so tests can swap the network out. No retries, caching or budgets here: those are wrappers.

#include <atomic>
#include <string>

#include "core/sim_time.h"
#include "llm/chat_client.h"
#include "llm/embedder.h"
#include "llm/http_transport.h"

namespace schedmate::llm {

// One server: where it is, which model, how to authenticate, how long to wait.
struct OpenAiEndpoint {
  std::string base_url;  // "http://127.0.0.1:8000" (a trailing "/v1" is accepted)
  std::string model;
  std::string api_key;  // empty: no Authorization header (local servers)
  Duration connect_timeout = Duration::Seconds(10);
  Duration timeout = Duration::Seconds(120);  // the whole request, streaming included
};

class OpenAiCompatibleClient final : public ChatClient {
 public:
  // `transport` must outlive the client. Thread-safe.
  OpenAiCompatibleClient(OpenAiEndpoint endpoint, HttpTransport& transport);
  Result<ChatResponse> Complete(const ChatRequest& request) override;
  Result<ChatResponse> CompleteStream(const ChatRequest& request,
                                      const StreamCallback& on_delta) override;
  const OpenAiEndpoint& endpoint() const { return endpoint_; }

 private:
  HttpRequest MakeRequest(const ChatRequest& request, bool stream) const;
  OpenAiEndpoint endpoint_;
  HttpTransport& transport_;
};

class OpenAiEmbedder final : public Embedder {
 public:
  // `dimension` 0: learned from the first answer. `transport` must outlive the embedder.
  OpenAiEmbedder(OpenAiEndpoint endpoint, HttpTransport& transport, size_t dimension = 0);
  // Sends all texts in one request (callers batch). kDataLoss when the vector length differs from
  // the known dimension.
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override;
  size_t Dimension() const override { return dimension_.load(); }

 private:
  OpenAiEndpoint endpoint_;
  HttpTransport& transport_;
  std::atomic<size_t> dimension_;
};

}  // namespace schedmate::llm
