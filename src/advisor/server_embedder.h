#pragma once
// ServerTextEmbedder: text::TextEmbedder over llm::Embedder, so anything written against the
// hashed embedder (vector index, similar-workload lookup) can use an embedding server
// (/v1/embeddings: BGE-m3 behind vLLM/SGLang/llama-server) instead.
//
// Rationale. The server's vectors are only usable if every vector has the same length as the
// index it goes into, and a misconfigured server (another model behind the same URL) changes the
// length silently. So the dimension is fixed — by `expected_dimension`, else by the inner
// embedder's Dimension(), else by the first answer — and every later vector is checked against it
// (kDataLoss "embedding dimension mismatch: expected N, got M"). The answer must hold one vector
// per input. Vectors are L2-normalised to honour TextEmbedder's unit-length contract (an all-zero
// vector stays zero; non-finite components are kDataLoss).
//
// Thread-safety: Embed() may run concurrently if the inner embedder allows it.

#include <atomic>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "llm/embedder.h"
#include "text/hashing_embedder.h"

namespace schedmate::advisor {

class ServerTextEmbedder final : public text::TextEmbedder {
 public:
  // `inner` must outlive this adapter. `expected_dimension` 0: learn it.
  explicit ServerTextEmbedder(llm::Embedder& inner, size_t expected_dimension = 0);
  // 0 until known.
  size_t Dimension() const override;
  Result<std::vector<text::Embedding>> Embed(std::span<const std::string> texts) const override;

 private:
  llm::Embedder& inner_;
  mutable std::atomic<size_t> dimension_;
};

}  // namespace schedmate::advisor
