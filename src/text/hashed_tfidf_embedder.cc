#include "text/hashed_tfidf_embedder.h"

namespace schedmate::text {

Result<std::vector<Embedding>> HashedTfIdfEmbedder::Embed(
    std::span<const std::string> texts) const {
  std::vector<Embedding> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) {
    Embedding dense(tfidf_.dimension(), 0.0f);
    for (const auto& [i, x] : tfidf_.Vectorize(tfidf_.Features(t))) dense[i] = x;
    out.push_back(std::move(dense));
  }
  return out;
}

}  // namespace schedmate::text
