#include "llm/server_text_embedder.h"

namespace schedmate::llm {

size_t ServerTextEmbedder::Dimension() const {
  const size_t fixed = dimension_.load();
  return fixed != 0 ? fixed : inner_.Dimension();
}

Result<std::vector<text::Embedding>> ServerTextEmbedder::Embed(
    std::span<const std::string> texts) const {
  if (texts.empty()) return std::vector<text::Embedding>{};
  SM_ASSIGN_OR_RETURN(std::vector<Embedding> vectors, inner_.Embed(texts));
  // The inner embedder's dimension (configured, or learnt from an earlier answer) fixes ours;
  // when it has none either, CheckEmbeddings fixes it from the first vector.
  size_t unset = 0;
  dimension_.compare_exchange_strong(unset, inner_.Dimension());
  SM_RETURN_IF_ERROR(CheckEmbeddings(vectors, texts.size(), dimension_, /*normalise=*/true));
  return vectors;
}

}  // namespace schedmate::llm
