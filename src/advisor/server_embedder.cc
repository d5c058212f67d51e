#include "advisor/server_embedder.h"

#include <cmath>

#include "fmt/format.h"

namespace schedmate::advisor {

ServerTextEmbedder::ServerTextEmbedder(llm::Embedder& inner, size_t expected_dimension)
    : inner_(inner), dimension_(expected_dimension != 0 ? expected_dimension : inner.Dimension()) {}

size_t ServerTextEmbedder::Dimension() const { return dimension_.load(); }

Result<std::vector<text::Embedding>> ServerTextEmbedder::Embed(
    std::span<const std::string> texts) const {
  if (texts.empty()) return std::vector<text::Embedding>{};
  SM_ASSIGN_OR_RETURN(std::vector<llm::Embedding> vectors, inner_.Embed(texts));
  if (vectors.size() != texts.size()) {
    return Status::DataLoss(fmt::format("embedding count mismatch: {} inputs, {} vectors",
                                        texts.size(), vectors.size()));
  }
  for (size_t i = 0; i < vectors.size(); ++i) {
    auto& v = vectors[i];
    if (v.empty()) return Status::DataLoss(fmt::format("empty embedding for input {}", i));
    size_t expected = dimension_.load();
    if (expected == 0) {
      // First answer fixes the dimension (compare-exchange: concurrent first calls agree).
      dimension_.compare_exchange_strong(expected, v.size());
      expected = dimension_.load();
    }
    if (v.size() != expected) {
      return Status::DataLoss(
          fmt::format("embedding dimension mismatch: expected {}, got {}", expected, v.size()));
    }
    double norm = 0;
    for (float x : v) {
      if (!std::isfinite(x)) {
        return Status::DataLoss(fmt::format("non-finite embedding component for input {}", i));
      }
      norm += static_cast<double>(x) * x;
    }
    if (norm > 0) {
      const float inv = static_cast<float>(1.0 / std::sqrt(norm));
      for (float& x : v) x *= inv;
    }
  }
  return vectors;
}

}  // namespace schedmate::advisor
