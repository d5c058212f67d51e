#pragma once
// ServerTextEmbedder: text::TextEmbedder over llm::Embedder (an embedding server behind
// /v1/embeddings: BGE-m3 on vLLM/SGLang/llama-server, from LlmSetup). The one server adapter:
// the advisor's similar-workload tiers and the tracker's embeddings filter both use it.
//
// Why here. text/ sits below llm/ (llm/ hashes with text/hash.h), so the adapter that joins the
// two lives in the upper one: llm/ implements text/'s interface and text/ knows nothing of
// servers. llm::Embedder stays the transport (HTTP, retries, caching wrappers).
//
// Rationale of the checks. Vectors from several requests are compared with each other, so they
// must share one length, and a misconfigured server (another model behind the same URL) changes
// it silently. The dimension is fixed by `expected_dimension` (LlmConfig::embedding_dimension),
// else by the inner embedder's Dimension() once it knows it, else by the first vector; any other
// length is kDataLoss "embedding dimension mismatch: expected N, got M". The answer must hold one
// non-empty, finite vector per input (kDataLoss otherwise; llm::CheckEmbeddings). Vectors are
// L2-normalised (TextEmbedder's unit-length contract; an all-zero vector stays zero). Inner
// errors (server down, timeout, HTTP errors) pass through unchanged so the caller's fallback can
// name them. No request for an empty input.
//
// Thread-safety: Embed() may run concurrently if the inner embedder allows it.

#include <atomic>
#include <span>
#include <string>
#include <vector>

#include "llm/embedder.h"
#include "text/text_embedder.h"

namespace schedmate::llm {

class ServerTextEmbedder final : public text::TextEmbedder {
 public:
  // `inner` must outlive the adapter. `model` names it ("server" when empty).
  // `expected_dimension` 0: learn it.
  explicit ServerTextEmbedder(Embedder& inner, std::string model = "",
                              size_t expected_dimension = 0)
      : inner_(inner), model_(std::move(model)), dimension_(expected_dimension) {}

  std::string Name() const override { return model_.empty() ? "server" : model_; }
  // The fixed dimension, else the inner embedder's (0 until known).
  size_t Dimension() const override;
  Result<std::vector<text::Embedding>> Embed(std::span<const std::string> texts) const override;

 private:
  Embedder& inner_;
  std::string model_;
  mutable std::atomic<size_t> dimension_;
};

}  // namespace schedmate::llm
