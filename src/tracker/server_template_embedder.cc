#include "tracker/server_template_embedder.h"

#include "fmt/format.h"

namespace schedmate::tracker {

Result<std::vector<std::vector<float>>> ServerTemplateEmbedder::Embed(
    std::span<const std::string> texts) {
  if (texts.empty()) return std::vector<std::vector<float>>{};
  SM_ASSIGN_OR_RETURN(std::vector<llm::Embedding> vectors, inner_.Embed(texts));
  if (vectors.size() != texts.size()) {
    return Status::DataLoss(fmt::format("embedding count mismatch: {} inputs, {} vectors",
                                        texts.size(), vectors.size()));
  }
  if (dimension_ == 0) dimension_ = inner_.Dimension();
  for (size_t i = 0; i < vectors.size(); ++i) {
    if (vectors[i].empty()) return Status::DataLoss(fmt::format("empty embedding for input {}", i));
    if (dimension_ == 0) dimension_ = vectors[i].size();
    if (vectors[i].size() != dimension_) {
      return Status::DataLoss(fmt::format("embedding dimension mismatch: expected {}, got {}",
                                          dimension_, vectors[i].size()));
    }
  }
  return vectors;
}

}  // namespace schedmate::tracker
