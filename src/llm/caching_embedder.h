#pragma once
// CachingEmbedder: remembers vectors by text within a process, so repeated texts (log templates,
// file names, recurring job commands) are embedded once. Only the texts not yet known go to the
// target, in one batch, in input order. Bounded: once `max_entries` texts are stored, the cache
// is cleared and refilled (simple and deterministic; no recency bookkeeping on the hot path).

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>

#include "llm/client_wrappers.h"

namespace schedmate::llm {

class CachingEmbedder final : public EmbedderWrapper {
 public:
  // `target` must outlive this wrapper. Thread-safe if the target is.
  CachingEmbedder(Embedder& target, size_t max_entries = 100'000);
  Result<std::vector<Embedding>> Embed(std::span<const std::string> texts) override;
  int64_t hits() const { return hits_.load(); }
  int64_t misses() const { return misses_.load(); }

 private:
  const size_t max_entries_;
  std::mutex mu_;
  std::unordered_map<std::string, Embedding> cache_;  // guarded by mu_; lookups only
  std::atomic<int64_t> hits_{0}, misses_{0};
};

}  // namespace schedmate::llm
