#pragma once
// StoredVectorEmbedder: a text::TextEmbedder in front of a slow one (an embedding server) that
// answers from vectors it already has — loaded from the history store, or embedded earlier in the
// run — and sends only the other texts to the inner embedder, in batches.
//
// Rationale. The history estimator's similar tiers embed every distinct workload text of the
// history once and the query at each estimate. With a server embedder that is one request per
// few dozen texts for the whole history at every `schedmate advise`; `schedmate history reindex`
// stores the vectors instead, and this class serves them. It is also the place where the rules
// that make server vectors safe to compare are enforced:
//   - dimension: every vector (stored or new) has the same length; the first one fixes it (or
//     `expected_dimension`). A server that answers with another length (another model behind the
//     same URL) gives kDataLoss "embedding dimension mismatch: ... run `schedmate history
//     reindex`" and no vector of it is kept;
//   - circuit breaker: after the first failure of the inner embedder every later call fails at
//     once with that error, so a dead server costs one timeout per run, not one per estimate
//     (the estimator then falls back to its hashing embedder and says so);
//   - batches: at most `batch_size` texts per inner call; duplicates in a call are sent once.
// Texts are matched exactly (the estimator's fingerprint texts are canonical).
//
// Thread-safety: none (Embed() is const per the interface but updates the cache).

#include <cstddef>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "core/status.h"
#include "text/hashing_embedder.h"

namespace schedmate::advisor {

struct StoredVectorEmbedderOptions {
  size_t batch_size = 64;         // texts per inner request (>= 1)
  size_t expected_dimension = 0;  // 0: fixed by the first vector
};

class StoredVectorEmbedder final : public text::TextEmbedder {
 public:
  // `inner` must outlive this object.
  explicit StoredVectorEmbedder(const text::TextEmbedder& inner,
                                StoredVectorEmbedderOptions options = {});

  // Adds a known vector for `text` (a later one for the same text replaces it).
  // kInvalidArgument when its length differs from the dimension or it is empty.
  Status Preload(const std::string& text, std::vector<float> vector);

  std::string Name() const override { return inner_.Name(); }
  size_t Dimension() const override { return dimension_; }
  // One vector per text: known ones from the cache, the rest from the inner embedder.
  Result<std::vector<text::Embedding>> Embed(std::span<const std::string> texts) const override;

  // The vector known for `text`, or nullptr.
  const std::vector<float>* Find(const std::string& text) const;

  // Counters: texts answered from the cache, texts sent to the inner embedder, inner calls.
  size_t hits() const { return hits_; }
  size_t sent() const { return sent_; }
  size_t requests() const { return requests_; }
  // The first inner failure (OK while there was none). Once set, Embed() fails with it.
  const Status& failure() const { return failure_; }

 private:
  Status CheckDimension(size_t got, const char* what) const;

  const text::TextEmbedder& inner_;
  StoredVectorEmbedderOptions options_;
  mutable size_t dimension_ = 0;
  mutable std::unordered_map<std::string, std::vector<float>> known_;
  mutable size_t hits_ = 0;
  mutable size_t sent_ = 0;
  mutable size_t requests_ = 0;
  mutable Status failure_;
};

}  // namespace schedmate::advisor
