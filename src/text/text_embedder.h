#pragma once
// TextEmbedder: text -> dense vectors, the one embedding interface of the code base. Whoever
// compares texts by meaning (the advisor's similar-workload tiers, the tracker's embeddings
// filter) is written against it.
//
// Implementations: HashingEmbedder (hashing_embedder.h: identifier tokens, for workload
// descriptions) and HashedTfIdfEmbedder (hashed_tfidf_embedder.h: masked log words, for line
// shapes), both in text/, deterministic and offline; llm::ServerTextEmbedder
// (llm/server_text_embedder.h) over an embedding server; advisor::StoredVectorEmbedder, a cache
// of stored vectors in front of another TextEmbedder.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace schedmate::text {

using Embedding = std::vector<float>;

class TextEmbedder {
 public:
  virtual ~TextEmbedder() = default;
  // What made the vectors, for labels and explanations: "hashing", or a server model's name.
  virtual std::string Name() const = 0;
  // Vector length; 0 while unknown (a server adapter learns it from the first answer).
  virtual size_t Dimension() const = 0;
  // One unit-length (or all-zero, for text with nothing to embed) vector per text, in order, all
  // of one length. One call is at most one request to a server. Errors are the backend's.
  virtual Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) const = 0;
};

}  // namespace schedmate::text
