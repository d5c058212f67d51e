#pragma once
// HashedTfIdfEmbedder: HashedTfIdf's log-line features (MaskedWords unigrams and pairs, idf 1)
// as dense unit vectors of HashedTfIdf::kDefaultDimension (4096) behind TextEmbedder — the
// tracker's embeddings filter without a server ("--filter-embedder hashing").
//
// Rationale. Log line shapes ("epoch <*> step #/# loss=#.#") are short and their words carry
// digits and camelCase that HashingEmbedder's identifier tokenizer treats differently; these are
// the same features the tracker's built-in line classifier scores, so the filter's hashing mode
// agrees with the built-in vocabulary. idf stays 1 so a vector does not depend on which texts
// share a request. Never fails; Name() is "hashing". Thread-safe (const, no state).

#include <span>
#include <string>
#include <vector>

#include "text/hashed_tfidf.h"
#include "text/text_embedder.h"

namespace schedmate::text {

class HashedTfIdfEmbedder final : public TextEmbedder {
 public:
  std::string Name() const override { return "hashing"; }
  size_t Dimension() const override { return tfidf_.dimension(); }
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) const override;

 private:
  HashedTfIdf tfidf_;  // never fitted: idf 1
};

}  // namespace schedmate::text
