#pragma once
// Text embedding without a model: hashed TF-IDF ("feature hashing").
//
// HashingEmbedder implements TextEmbedder (text_embedder.h) for identifier-rich text (workload
// descriptions: the advisor's similar tiers; its 0.8 similarity threshold is tuned on these
// vectors, so they never change). It maps each token (see tokenizer.h)
// and each adjacent token pair to one of `dimension` buckets with FNV-1a (a second hash bit picks
// the sign, so collisions cancel in expectation), weights it by sublinear term frequency
// (1 + log tf) times IDF, and L2-normalises. IDF comes from documents passed to
// ObserveDocument(): idf = 1 + log((1 + N) / (1 + df)); with no documents observed every idf is 1
// (plain TF). Same inputs and same observed documents give bit-identical vectors.
//
// Thread-safety: Embed() is const and may run concurrently; ObserveDocument() must not run
// concurrently with anything else.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "text/text_embedder.h"

namespace schedmate::text {

struct HashingEmbedderOptions {
  size_t dimension = 256;  // number of buckets; must be > 0
  bool bigrams = true;     // also hash adjacent token pairs
  uint64_t seed = 0;       // mixes into the hash: different seeds give different spaces
};

class HashingEmbedder final : public TextEmbedder {
 public:
  explicit HashingEmbedder(HashingEmbedderOptions options = {});

  std::string Name() const override { return "hashing"; }
  size_t Dimension() const override { return options_.dimension; }
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) const override;
  // One text; never fails.
  Embedding EmbedOne(std::string_view text) const;

  // Counts the distinct features of `text` toward document frequencies (IDF).
  void ObserveDocument(std::string_view text);
  int64_t documents_observed() const { return documents_; }

 private:
  // Features (bucket index with sign) of a text.
  void Features(std::string_view text, std::vector<std::pair<uint32_t, int>>& out,
                std::vector<uint64_t>& hashes) const;
  HashingEmbedderOptions options_;
  std::vector<int64_t> df_;  // per bucket
  int64_t documents_ = 0;
};

// Cosine similarity of two unit vectors (their dot product). REQUIRES: equal sizes.
float Cosine(std::span<const float> a, std::span<const float> b);

}  // namespace schedmate::text
