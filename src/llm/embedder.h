#pragma once
// Embedder: text -> dense vectors. Backends: OpenAiEmbedder (HTTP /v1/embeddings), NullEmbedder
// (offline: kUnavailable); text/ ships the deterministic HashingEmbedder.

#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace schedmate::llm {

using Embedding = std::vector<float>;

class Embedder {
 public:
  virtual ~Embedder() = default;
  // One vector per input, in input order, each of length Dimension() (once known).
  // Thread-safety: implementations in llm/ are safe for concurrent calls.
  virtual Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) = 0;
  // Vector length; 0 while unknown (an HTTP backend learns it from its first answer unless the
  // configuration states it).
  virtual size_t Dimension() const = 0;
};

}  // namespace schedmate::llm
