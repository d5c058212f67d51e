#include "advisor/server_embedder.h"

namespace schedmate::advisor {

ServerTextEmbedder::ServerTextEmbedder(llm::Embedder& inner, size_t expected_dimension)
    : inner_(inner), dimension_(expected_dimension != 0 ? expected_dimension : inner.Dimension()) {}

size_t ServerTextEmbedder::Dimension() const { return dimension_.load(); }

Result<std::vector<text::Embedding>> ServerTextEmbedder::Embed(
    std::span<const std::string> texts) const {
  if (texts.empty()) return std::vector<text::Embedding>{};
  SM_ASSIGN_OR_RETURN(std::vector<llm::Embedding> vectors, inner_.Embed(texts));
  SM_RETURN_IF_ERROR(llm::CheckEmbeddings(vectors, texts.size(), dimension_, /*normalise=*/true));
  return vectors;
}

}  // namespace schedmate::advisor
