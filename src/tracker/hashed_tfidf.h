#pragma once
// HashedTfIdf: feature hashing of log-line text into a fixed-size sparse TF-IDF vector, plus
// category prototypes (the normalised mean vector of example lines per category) scored by
// cosine similarity. Words are lower-cased, split at snake_case/camelCase boundaries and have
// digit runs masked, so unseen formats that share vocabulary ("loss", "it/s", "Traceback")
// land near the right prototype. Deterministic (FNV-1a hashing). Not thread-safe while fitting.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace schedmate::tracker {

class HashedTfIdf {
 public:
  static constexpr uint32_t kDim = 1u << 12;
  using Sparse = std::vector<std::pair<uint32_t, float>>;  // sorted by index, L2 norm 1

  // Hashed features of `text` (unigrams and bigrams of masked words) and of `extra` tokens.
  static std::vector<uint32_t> Features(std::string_view text,
                                        const std::vector<std::string>& extra);
  // Learns inverse document frequencies from example documents.
  void Fit(const std::vector<std::vector<uint32_t>>& docs);
  Sparse Vectorize(const std::vector<uint32_t>& features) const;

 private:
  std::vector<float> idf_ = std::vector<float>(kDim, 1.0f);
};

class PrototypeSet {
 public:
  explicit PrototypeSet(size_t classes)
      : protos_(classes, std::vector<float>(HashedTfIdf::kDim, 0)) {}
  void Add(size_t cls, const HashedTfIdf::Sparse& v);
  void Normalize();
  // Cosine similarity of `v` with each class prototype.
  std::vector<float> Scores(const HashedTfIdf::Sparse& v) const;

 private:
  std::vector<std::vector<float>> protos_;
};

}  // namespace schedmate::tracker
