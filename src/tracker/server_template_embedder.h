#pragma once
// ServerTemplateEmbedder: the embeddings filter's TemplateEmbedder over llm::Embedder (an
// embedding server behind /v1/embeddings: BGE-m3 on vLLM/SGLang/llama-server, from LlmSetup).
//
// Rationale. The filter compares vectors from several requests, so every vector must have one
// length, and a misconfigured server (another model behind the same URL) changes it silently.
// The dimension is fixed by `expected_dimension` (LlmConfig::embedding_dimension), else by the
// inner embedder's Dimension(), else by the first vector; any other length is kDataLoss
// "embedding dimension mismatch: expected N, got M". The answer must hold one non-empty vector
// per input (kDataLoss otherwise). Inner errors (server down, timeout, HTTP errors) pass through
// unchanged so the caller's fallback can name them. The checks are llm::CheckEmbeddings, shared
// with advisor's ServerTextEmbedder (which also normalises; the filter's cosine does its own).
//
// Thread-safety: none (one filter run at a time).

#include <atomic>
#include <span>
#include <string>
#include <vector>

#include "llm/embedder.h"
#include "tracker/embedding_filter.h"

namespace schedmate::tracker {

class ServerTemplateEmbedder final : public TemplateEmbedder {
 public:
  // `inner` must outlive the adapter. `model` names it in the filter label.
  ServerTemplateEmbedder(llm::Embedder& inner, std::string model, size_t expected_dimension = 0)
      : inner_(inner), model_(std::move(model)), dimension_(expected_dimension) {}
  std::string Name() const override { return model_.empty() ? "server" : model_; }
  Result<std::vector<std::vector<float>>> Embed(std::span<const std::string> texts) override;
  // 0 until known.
  size_t dimension() const { return dimension_.load(); }

 private:
  llm::Embedder& inner_;
  std::string model_;
  std::atomic<size_t> dimension_;
};

}  // namespace schedmate::tracker
