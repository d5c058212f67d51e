#include "llm/embedder.h"

#include <cmath>

#include "fmt/format.h"

namespace schedmate::llm {

Status CheckEmbeddings(std::vector<Embedding>& vectors, size_t inputs,
                       std::atomic<size_t>& dimension, bool normalise) {
  if (vectors.size() != inputs) {
    return Status::DataLoss(
        fmt::format("embedding count mismatch: {} inputs, {} vectors", inputs, vectors.size()));
  }
  for (size_t i = 0; i < vectors.size(); ++i) {
    Embedding& v = vectors[i];
    if (v.empty()) return Status::DataLoss(fmt::format("empty embedding for input {}", i));
    size_t expected = dimension.load();
    if (expected == 0) {
      dimension.compare_exchange_strong(expected, v.size());
      expected = dimension.load();
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
    if (normalise && norm > 0) {
      const float inv = static_cast<float>(1.0 / std::sqrt(norm));
      for (float& x : v) x *= inv;
    }
  }
  return Status::Ok();
}

}  // namespace schedmate::llm
