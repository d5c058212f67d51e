#include "text/hashed_tfidf.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/check.h"
#include "text/hash.h"

namespace schedmate::text {
namespace {

constexpr uint64_t kUnigramFamily = 1;
constexpr uint64_t kPairFamily = 2;
constexpr uint64_t kExtraFamily = 3;

bool IsAsciiAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

}  // namespace

std::vector<std::string> MaskedWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  const size_t n = std::min<size_t>(text.size(), 2048);
  while (i < n && words.size() < 64) {
    if (!IsAsciiAlnum(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::string w;
    const size_t b = i;
    while (i < n) {
      const unsigned char d = static_cast<unsigned char>(text[i]);
      if (!IsAsciiAlnum(d)) break;
      if (i > b && d >= 'A' && d <= 'Z' && text[i - 1] >= 'a' && text[i - 1] <= 'z') break;
      if (d >= '0' && d <= '9') {
        if (w.empty() || w.back() != '#') w.push_back('#');
      } else {
        w.push_back(Lower(static_cast<char>(d)));
      }
      ++i;
    }
    words.push_back(std::move(w));
  }
  return words;
}

HashedTfIdf::HashedTfIdf(uint32_t dimension) : dimension_(dimension) {
  SM_CHECK(dimension > 0 && (dimension & (dimension - 1)) == 0)
      << "HashedTfIdf dimension must be a power of two";
}

uint32_t HashedTfIdf::Bucket(std::string_view feature, uint64_t family) const {
  const uint64_t h = Fnv1a64(feature, kFeatureHashBasis ^ family);
  return static_cast<uint32_t>(h ^ (h >> 32)) & (dimension_ - 1);
}

std::vector<uint32_t> HashedTfIdf::WordFeatures(std::span<const std::string> words,
                                                std::span<const std::string> extra) const {
  std::vector<uint32_t> out;
  out.reserve(words.size() * 2 + extra.size());
  for (size_t k = 0; k < words.size(); ++k) {
    out.push_back(Bucket(words[k], kUnigramFamily));
    if (k + 1 < words.size()) out.push_back(Bucket(words[k] + " " + words[k + 1], kPairFamily));
  }
  for (const std::string& e : extra) out.push_back(Bucket(e, kExtraFamily));
  return out;
}

std::vector<uint32_t> HashedTfIdf::Features(std::string_view text,
                                            std::span<const std::string> extra) const {
  return WordFeatures(MaskedWords(text), extra);
}

void HashedTfIdf::Fit(const std::vector<std::vector<uint32_t>>& docs) {
  std::vector<uint32_t> df(dimension_, 0);
  for (const auto& d : docs) {
    std::vector<uint32_t> u = d;
    std::sort(u.begin(), u.end());
    u.erase(std::unique(u.begin(), u.end()), u.end());
    for (uint32_t f : u) ++df[f];
  }
  const double n = static_cast<double>(docs.size());
  idf_.assign(dimension_, 1.0f);
  for (uint32_t k = 0; k < dimension_; ++k) {
    idf_[k] = static_cast<float>(std::log((1.0 + n) / (1.0 + df[k])) + 1.0);
  }
}

HashedTfIdf::Sparse HashedTfIdf::Vectorize(const std::vector<uint32_t>& features) const {
  std::map<uint32_t, float> tf;
  for (uint32_t f : features) tf[f] += 1.0f;
  Sparse v;
  v.reserve(tf.size());
  double norm = 0;
  for (const auto& [k, c] : tf) {
    float w = (1.0f + std::log(c)) * (idf_.empty() ? 1.0f : idf_[k]);
    v.emplace_back(k, w);
    norm += static_cast<double>(w) * w;
  }
  if (norm > 0) {
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (auto& [k, w] : v) w *= inv;
  }
  return v;
}

double SparseCosine(const HashedTfIdf::Sparse& a, const HashedTfIdf::Sparse& b) {
  double dot = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].first == b[j].first) {
      dot += static_cast<double>(a[i].second) * b[j].second;
      ++i;
      ++j;
    } else if (a[i].first < b[j].first) {
      ++i;
    } else {
      ++j;
    }
  }
  return dot;
}

void PrototypeSet::Add(size_t cls, const HashedTfIdf::Sparse& v) {
  if (cls >= protos_.size()) return;
  for (const auto& [k, w] : v) protos_[cls][k] += w;
}

void PrototypeSet::Normalize() {
  for (auto& p : protos_) {
    double norm = 0;
    for (float w : p) norm += static_cast<double>(w) * w;
    if (norm <= 0) continue;
    const float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& w : p) w *= inv;
  }
}

std::vector<float> PrototypeSet::Scores(const HashedTfIdf::Sparse& v) const {
  std::vector<float> out(protos_.size(), 0);
  for (size_t c = 0; c < protos_.size(); ++c) {
    float s = 0;
    for (const auto& [k, w] : v) s += protos_[c][k] * w;
    out[c] = s;
  }
  return out;
}

}  // namespace schedmate::text
