#include "llm/caching_embedder.h"

#include "fmt/format.h"

namespace schedmate::llm {

CachingEmbedder::CachingEmbedder(Embedder& target, size_t max_entries)
    : EmbedderWrapper(target), max_entries_(max_entries) {}

Result<std::vector<Embedding>> CachingEmbedder::Embed(std::span<const std::string> texts) {
  std::vector<Embedding> out(texts.size());
  std::vector<std::string> missing;
  std::vector<size_t> missing_at;  // out index of each missing text (first occurrence)
  std::unordered_map<std::string, size_t> batch_index;
  std::vector<std::pair<size_t, size_t>> duplicates;  // (out index, missing index)
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < texts.size(); ++i) {
      if (auto it = cache_.find(texts[i]); it != cache_.end()) {
        out[i] = it->second;
        ++hits_;
      } else if (auto b = batch_index.find(texts[i]); b != batch_index.end()) {
        duplicates.emplace_back(i, b->second);
        ++hits_;
      } else {
        batch_index.emplace(texts[i], missing.size());
        missing.push_back(texts[i]);
        missing_at.push_back(i);
        ++misses_;
      }
    }
  }
  if (missing.empty()) return out;
  SM_ASSIGN_OR_RETURN(std::vector<Embedding> fresh, target().Embed(missing));
  if (fresh.size() != missing.size()) {
    return Status::DataLoss(
        fmt::format("embedder returned {} vectors for {} texts", fresh.size(), missing.size()));
  }
  for (size_t k = 0; k < missing.size(); ++k) out[missing_at[k]] = fresh[k];
  for (const auto& [i, k] : duplicates) out[i] = fresh[k];
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() + missing.size() > max_entries_) cache_.clear();
  for (size_t k = 0; k < missing.size() && cache_.size() < max_entries_; ++k) {
    cache_.emplace(std::move(missing[k]), std::move(fresh[k]));
  }
  return out;
}

}  // namespace schedmate::llm
