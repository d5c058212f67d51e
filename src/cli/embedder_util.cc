#include "cli/embedder_util.h"

#include <iostream>
#include <unordered_set>

#include "advisor/fingerprint.h"
#include "cli/cli_util.h"
#include "fmt/format.h"
#include "llm/llm_status.h"

namespace schedmate::cli {

std::string WorkloadTextOf(const store::StoredJob& job) {
  return job.fingerprint.empty() ? advisor::FingerprintOf(job.job).workload : job.fingerprint;
}

void AddEmbedderFlag(CLI::App* cmd, std::string& kind) {
  cmd->add_option("--embedder", kind,
                  "Embedder for similar workloads: hashing (default; built in, offline) or server "
                  "(/v1/embeddings from --llm-config or SCHEDMATE_EMBED_BASE_URL + "
                  "SCHEDMATE_EMBED_MODEL; falls back to hashing on any failure)")
      ->check(CLI::IsMember({"hashing", "server"}, CLI::ignore_case));
}

void AddMinSimilarityFlag(CLI::App* cmd, double& value) {
  cmd->add_option("--min-similarity", value,
                  fmt::format("Cosine threshold for a past workload to count as similar, for the "
                              "--embedder in use (default {}; a semantic model's cosines sit on "
                              "another scale: tune it with `history replay` and "
                              "score_predictions.py)",
                              advisor::HistoryEstimatorOptions{}.min_similarity))
      ->check(FiniteRange(0.0, 1.0));
}

advisor::HistoryEstimatorOptions WithMinSimilarity(advisor::HistoryEstimatorOptions options,
                                                   const std::string& kind, double value) {
  if (value < 0) return options;
  if (kind == "server") {
    options.external_min_similarity = value;
  } else {
    options.min_similarity = value;
  }
  return options;
}

SimilarityEmbedder::~SimilarityEmbedder() = default;

std::unique_ptr<SimilarityEmbedder> SimilarityEmbedder::Resolve(const std::string& kind,
                                                                const std::string& llm_config,
                                                                bool required) {
  std::unique_ptr<SimilarityEmbedder> e(new SimilarityEmbedder());
  if (kind != "server") return e;
  auto setup =
      llm::LoadLlmSetup(llm_config.empty() ? std::nullopt : std::optional<std::string>(llm_config));
  if (!setup.ok()) Fail(setup.status());
  if (!(*setup)->embeddings_configured()) {
    e->unavailable_ =
        (*setup)->config().backend == "none"
            ? "disabled (backend: none)"
            : "not configured; set SCHEDMATE_EMBED_BASE_URL and SCHEDMATE_EMBED_MODEL or "
              "embeddings: in --llm-config";
  } else {
    e->model_ = (*setup)->config().embeddings.model;
    const size_t dim = (*setup)->config().embedding_dimension;
    e->server_ = std::make_unique<llm::ServerTextEmbedder>((*setup)->embedder(), e->model_, dim);
    e->cache_ = std::make_unique<advisor::StoredVectorEmbedder>(
        *e->server_, advisor::StoredVectorEmbedderOptions{.expected_dimension = dim});
    e->setup_ = std::move(setup).value();
  }
  if (!e->unavailable_.empty()) {
    if (required) Fail(Status::FailedPrecondition("server embeddings: " + e->unavailable_));
    std::cerr << "schedmate: warning: --embedder server: " << e->unavailable_
              << "; using the hashing embedder\n";
  }
  return e;
}

const text::TextEmbedder* SimilarityEmbedder::estimator_embedder() const { return cache_.get(); }

store::EmbedderIdentity SimilarityEmbedder::identity() const {
  return {"server:" + model_, cache_ != nullptr ? cache_->Dimension() : 0};
}

std::string SimilarityEmbedder::Preload(store::SqliteHistoryStore& store,
                                        std::span<const advisor::JobFingerprint> history) {
  if (cache_ == nullptr) return "";
  auto stored = store.StoredEmbedder();
  if (!stored.ok()) Fail(stored.status());
  if (!stored->has_value()) {
    return "no stored vectors: the history is embedded now (run `schedmate history reindex` "
           "once to store them)";
  }
  const store::EmbedderIdentity& have = **stored;
  if (have.name != identity().name) {
    return fmt::format(
        "stored vectors come from {}, not {}: the history is embedded now (run `schedmate "
        "history reindex` to replace them)",
        have.name, identity().name);
  }
  auto vectors = store.ListEmbeddings(have);
  if (!vectors.ok()) Fail(vectors.status());
  for (store::StoredEmbedding& v : *vectors) {
    Status s = cache_->Preload(v.key, std::move(v.vector));
    if (!s.ok()) {
      // The configured dimension disagrees with the stored vectors.
      return fmt::format("stored vectors not used ({}); run `schedmate history reindex`",
                         s.message());
    }
  }
  std::unordered_set<std::string_view> missing;
  for (const advisor::JobFingerprint& f : history) {
    if (!f.workload.empty() && cache_->Find(f.workload) == nullptr) missing.insert(f.workload);
  }
  if (!missing.empty()) {
    return fmt::format(
        "{} workload texts of the history have no stored vector and are embedded "
        "now (run `schedmate history reindex` to store them)",
        missing.size());
  }
  return "";
}

std::string SimilarityEmbedder::Label() const {
  if (!unavailable_.empty()) return "hashing (server embeddings unavailable: " + unavailable_ + ")";
  if (cache_ == nullptr) return "hashing";
  const Status& f = cache_->failure();
  if (f.ok()) return "server (" + model_ + ")";
  const std::string cause = llm::ShortCause(f);
  const bool rejected =
      f.code() == StatusCode::kDataLoss || f.code() == StatusCode::kInvalidArgument;
  return fmt::format("hashing (server embeddings {}: {})", rejected ? "rejected" : "unavailable",
                     cause);
}

void SimilarityEmbedder::WarnIfFailed() {
  if (warned_ || cache_ == nullptr || cache_->failure().ok()) return;
  warned_ = true;
  std::cerr << "schedmate: warning: server embeddings failed (" << cache_->failure().message()
            << "); similar workloads were found with the hashing embedder\n";
}

}  // namespace schedmate::cli
