#pragma once
// --embedder for the advisor's similar-workload lookup (advise, history replay, history reindex).
//
//   --embedder hashing   (default) the built-in hashed TF-IDF embedder: offline, deterministic.
//   --embedder server    an OpenAI-compatible /v1/embeddings endpoint (BGE-m3 behind vLLM,
//                        SGLang, llama-server, Ollama) from --llm-config or the
//                        SCHEDMATE_EMBED_BASE_URL / SCHEDMATE_EMBED_MODEL environment.
//
// Server vectors go through advisor::StoredVectorEmbedder: vectors stored by `schedmate history
// reindex` are served from the store, only new texts are sent, batched, the dimension is checked,
// and a failing server is asked once per run. Whatever fails, the estimate still comes (from the
// hashing embedder) and the "embedder" field says why:
//   "hashing" | "server (bge-m3)" | "hashing (server embeddings unavailable: connection refused)"
//
//   --min-similarity X   the cosine threshold of the similar tiers for the chosen embedder's
//                        vectors (default 0.8, tuned for hashing); with server it sets the
//                        external threshold only, so a fallback to hashing keeps 0.8.

#include <CLI/CLI.hpp>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "advisor/fingerprint.h"
#include "advisor/history_estimator.h"
#include "advisor/stored_vector_embedder.h"
#include "core/status.h"
#include "llm/llm_setup.h"
#include "llm/server_text_embedder.h"
#include "store/history_store.h"
#include "text/hashing_embedder.h"

namespace schedmate::cli {

// The fingerprint text the estimator embeds for a stored job (its recorded workload text, else
// the one derived from its record).
std::string WorkloadTextOf(const store::StoredJob& job);

class SimilarityEmbedder {
 public:
  // `kind`: "hashing" or "server". With "server" and `required` (history reindex) a missing
  // configuration or llm support is Fail()ed; otherwise it becomes the fallback label.
  static std::unique_ptr<SimilarityEmbedder> Resolve(const std::string& kind,
                                                     const std::string& llm_config, bool required);
  ~SimilarityEmbedder();

  // The embedder for HistoryEstimator (nullptr: its own hashing embedder).
  const text::TextEmbedder* estimator_embedder() const;
  // The batching, dimension-checking cache in front of the server (nullptr for hashing).
  advisor::StoredVectorEmbedder* cache() const { return cache_.get(); }
  // {"server:<model>", dimension}; the dimension is 0 until known.
  store::EmbedderIdentity identity() const;
  // Loads the store's vectors (keyed by workload text) when they were made by this embedder;
  // returns a note for the output when some or all of `history`'s workload texts must be embedded
  // now (none stored, another embedder, new jobs). Fail()s on a corrupt store.
  std::string Preload(store::SqliteHistoryStore& store,
                      std::span<const advisor::JobFingerprint> history);
  // The "embedder" field as things stand (after the run: includes a server failure).
  std::string Label() const;
  // On stderr once, when the server failed during the run.
  void WarnIfFailed();

 private:
  SimilarityEmbedder() = default;
  std::string model_;
  std::string unavailable_;               // non-empty: the server is not used at all (why)
  std::unique_ptr<llm::LlmSetup> setup_;  // owns the server connection (before server_)
  std::unique_ptr<llm::ServerTextEmbedder> server_;  // over setup_'s embedder
  std::unique_ptr<advisor::StoredVectorEmbedder> cache_;
  bool warned_ = false;
};

// Adds --embedder to `cmd`, bound to `kind`.
void AddEmbedderFlag(CLI::App* cmd, std::string& kind);

// Adds --min-similarity to `cmd`, bound to `value` (below 0: not given).
void AddMinSimilarityFlag(CLI::App* cmd, double& value);

// The estimator options with a --min-similarity `value` applied to the vectors of `kind`
// (server: the external threshold, so a fallback to hashing keeps the hashing default).
advisor::HistoryEstimatorOptions WithMinSimilarity(advisor::HistoryEstimatorOptions options,
                                                   const std::string& kind, double value);

}  // namespace schedmate::cli
