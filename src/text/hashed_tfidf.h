#pragma once
// HashedTfIdf: feature hashing of short texts (log lines, failure messages) into sparse TF-IDF
// vectors, and PrototypeSet: category prototypes (the normalised mean vector of example texts per
// category) scored by cosine similarity.
//
// A text becomes words (MaskedWords for log lines; callers with their own masking pass words),
// the words become features — each word (hash family 1), each adjacent pair joined by a space
// (family 2) and caller-given extra tokens (family 3) — and a feature becomes a bucket: the 64-bit
// FNV-1a of its text from kFeatureHashBasis XOR its family (text/hash.h), folded to 32 bits (high
// XOR low half), masked to the dimension (a power of two). A vector weights each bucket by
// sublinear term frequency (1 + log tf) times its IDF (1 until Fit(): idf = 1 + log((1 + N) / (1 +
// df))) and is L2-normalised. Deterministic: same words, same dimension, same fitted documents ->
// bit-identical vectors. Not thread-safe while fitting; const methods may run concurrently.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace schedmate::text {

// Words of a log line for hashing: runs of ASCII letters and digits in its first 2048 bytes (at
// most 64 words), lower-cased, split where an upper-case letter follows a lower-case one
// (camelCase), every digit run masked to one '#'. "Epoch 12/200" and "epoch 3/90" share words.
std::vector<std::string> MaskedWords(std::string_view text);

class HashedTfIdf {
 public:
  static constexpr uint32_t kDefaultDimension = 1u << 12;
  using Sparse = std::vector<std::pair<uint32_t, float>>;  // sorted by index, L2 norm 1 or empty

  // REQUIRES: `dimension` is a power of two.
  explicit HashedTfIdf(uint32_t dimension = kDefaultDimension);
  uint32_t dimension() const { return dimension_; }

  // Bucketed features of `words` (unigrams, adjacent pairs) and of `extra` tokens.
  std::vector<uint32_t> WordFeatures(std::span<const std::string> words,
                                     std::span<const std::string> extra = {}) const;
  // WordFeatures(MaskedWords(text), extra).
  std::vector<uint32_t> Features(std::string_view text,
                                 std::span<const std::string> extra = {}) const;
  // Learns inverse document frequencies from example documents (their features).
  void Fit(const std::vector<std::vector<uint32_t>>& docs);
  Sparse Vectorize(const std::vector<uint32_t>& features) const;

 private:
  uint32_t Bucket(std::string_view feature, uint64_t family) const;
  uint32_t dimension_;
  std::vector<float> idf_;  // per bucket; empty until Fit(): every idf 1
};

// Cosine similarity of two unit vectors: the dot product over their shared indices.
double SparseCosine(const HashedTfIdf::Sparse& a, const HashedTfIdf::Sparse& b);

class PrototypeSet {
 public:
  PrototypeSet(size_t classes, uint32_t dimension = HashedTfIdf::kDefaultDimension)
      : protos_(classes, std::vector<float>(dimension, 0)) {}
  // Adds an example vector to class `cls` (ignored when out of range).
  void Add(size_t cls, const HashedTfIdf::Sparse& v);
  void Normalize();
  // Cosine similarity of `v` with each class prototype.
  std::vector<float> Scores(const HashedTfIdf::Sparse& v) const;

 private:
  std::vector<std::vector<float>> protos_;
};

}  // namespace schedmate::text
