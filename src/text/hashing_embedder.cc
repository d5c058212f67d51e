#include "text/hashing_embedder.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/check.h"
#include "text/hash.h"
#include "text/tokenizer.h"

namespace schedmate::text {
namespace {

// FNV-1a with the seed spread over all bits, then avalanched so low bits (the bucket) are mixed.
uint64_t FeatureHash(std::string_view s, uint64_t seed) {
  return Avalanche64(Fnv1a64(s, kFeatureHashBasis ^ (seed * 0x9E3779B97F4A7C15ULL)));
}

}  // namespace

HashingEmbedder::HashingEmbedder(HashingEmbedderOptions options) : options_(options) {
  SM_CHECK(options_.dimension > 0) << "HashingEmbedder dimension must be positive";
  df_.assign(options_.dimension, 0);
}

void HashingEmbedder::Features(std::string_view text, std::vector<std::pair<uint32_t, int>>& out,
                               std::vector<uint64_t>& hashes) const {
  std::vector<std::string> tokens = Tokenize(text);
  hashes.clear();
  for (size_t i = 0; i < tokens.size(); ++i) {
    hashes.push_back(FeatureHash(tokens[i], options_.seed));
    if (options_.bigrams && i + 1 < tokens.size()) {
      hashes.push_back(FeatureHash(tokens[i] + "\x1f" + tokens[i + 1], options_.seed));
    }
  }
  out.clear();
  for (uint64_t h : hashes) {
    out.emplace_back(static_cast<uint32_t>(h % options_.dimension), (h >> 63) != 0 ? -1 : 1);
  }
}

Embedding HashingEmbedder::EmbedOne(std::string_view text) const {
  std::vector<std::pair<uint32_t, int>> feats;
  std::vector<uint64_t> hashes;
  Features(text, feats, hashes);
  // Term frequency per distinct hash (not per bucket: collisions add after weighting).
  std::map<uint64_t, int> tf;
  for (uint64_t h : hashes) ++tf[h];
  Embedding v(options_.dimension, 0.0f);
  for (const auto& [h, count] : tf) {
    uint32_t bucket = static_cast<uint32_t>(h % options_.dimension);
    double sign = (h >> 63) != 0 ? -1.0 : 1.0;
    double idf = 1.0;
    if (documents_ > 0) {
      idf = 1.0 + std::log((1.0 + static_cast<double>(documents_)) /
                           (1.0 + static_cast<double>(df_[bucket])));
    }
    v[bucket] += static_cast<float>(sign * (1.0 + std::log(static_cast<double>(count))) * idf);
  }
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (norm > 0) {
    float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : v) x *= inv;
  }
  return v;
}

Result<std::vector<Embedding>> HashingEmbedder::Embed(std::span<const std::string> texts) const {
  std::vector<Embedding> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) out.push_back(EmbedOne(t));
  return out;
}

void HashingEmbedder::ObserveDocument(std::string_view text) {
  std::vector<std::pair<uint32_t, int>> feats;
  std::vector<uint64_t> hashes;
  Features(text, feats, hashes);
  std::vector<uint32_t> buckets;
  for (const auto& f : feats) buckets.push_back(f.first);
  std::sort(buckets.begin(), buckets.end());
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  for (uint32_t b : buckets) ++df_[b];
  ++documents_;
}

float Cosine(std::span<const float> a, std::span<const float> b) {
  SM_CHECK(a.size() == b.size()) << "Cosine of vectors of different sizes";
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}

}  // namespace schedmate::text
