#include "tracker/server_template_embedder.h"

namespace schedmate::tracker {

Result<std::vector<std::vector<float>>> ServerTemplateEmbedder::Embed(
    std::span<const std::string> texts) {
  if (texts.empty()) return std::vector<std::vector<float>>{};
  SM_ASSIGN_OR_RETURN(std::vector<llm::Embedding> vectors, inner_.Embed(texts));
  if (dimension_.load() == 0) dimension_ = inner_.Dimension();
  SM_RETURN_IF_ERROR(llm::CheckEmbeddings(vectors, texts.size(), dimension_, /*normalise=*/false));
  return vectors;
}

}  // namespace schedmate::tracker
