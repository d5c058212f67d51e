#pragma once
// Embedder: the embedding-server transport, text -> dense vectors. Backends: OpenAiEmbedder (HTTP
// /v1/embeddings), NullEmbedder (offline: kUnavailable). Components do not use it directly: they
// use text::TextEmbedder, which ServerTextEmbedder (server_text_embedder.h) implements over it.

#include <atomic>
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

// Checks an embedding server's answer to `inputs` texts before anyone indexes it: one non-empty
// vector per input, all of length `dimension` (0: the first vector fixes it, stored back with a
// compare-exchange so concurrent first calls agree), finite components. With `normalise`, scales
// each vector to unit length (an all-zero vector stays zero). Errors (kDataLoss) say what was
// wrong: "embedding count mismatch: 3 inputs, 2 vectors", "embedding dimension mismatch: expected
// 1024, got 768", "empty embedding for input 1", "non-finite embedding component for input 0".
Status CheckEmbeddings(std::vector<Embedding>& vectors, size_t inputs,
                       std::atomic<size_t>& dimension, bool normalise);

}  // namespace schedmate::llm
