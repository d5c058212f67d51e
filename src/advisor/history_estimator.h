#pragma once
// HistoryEstimator: the advisor's duration estimator. Predicts a job's run time from the finished
// jobs most like it, online (it learns each job when told it finished), and says which past jobs
// it leaned on and why.
//
// Rationale. Users repeat themselves: most GPU jobs are re-runs or small variations of the same
// user's earlier jobs, so the best evidence is the user's own recent finished jobs with the same
// workload and resources; other users' jobs and global statistics are weaker fallbacks. Evidence
// is gathered from the first tier that has any, in this order:
//   1. exact      same user, same workload text, same GPUs, CPUs and VC
//   2. workload   same user, same workload text, same GPUs
//   3. similar    same user, workload text similar by embedding (hashed TF-IDF cosine >=
//                 min_similarity, nearest first), any resources
//   4. user-gpus  same user, same GPU count (the user's recent history in that resource class)
//   5. user       same user, any job
//   6. peers      other users, same workload text and GPUs, then similar workloads
//   7. class      anyone's jobs with the same GPU count (resource class)
//   8. global     anyone's recent jobs
// and, with no finished job at all, a cold start (the job's time limit when it has one, else
// `cold_start`) with confidence 0.
// Within a tier the evidence is the tier's last `recent` jobs (recency: behaviour drifts), each
// scaled by the ratio of work (steps x batch / GPUs) when both jobs state it. The point estimate
// is the `quantile` of the evidence, not its median: durations in a group are right-skewed with a
// heavy early-exit mode (failed and cancelled runs), and relative error is asymmetric (an
// estimate can be at most 100% too low but unboundedly too high). Finally, when
// `cap_by_user_latest`, the estimate is capped at the duration of the user's most recently
// finished job: a user in a short-run regime (debugging, crashing, sweeping) tends to stay there.
// The interval is [min, max] of the scaled evidence (widened by x2 on each side with one sample);
// the confidence grows with the tier's strength and evidence count and shrinks with its spread.
//
// Embedder. The similar tiers use the estimator's own HashingEmbedder unless an external
// text::TextEmbedder (e.g. ServerTextEmbedder) is passed to the constructor. The external embedder
// is NOT owned: it must outlive the estimator. Fingerprint texts are embedded with it lazily, in
// one batch per estimate, into a second index whose dimension is fixed by the first answer. When
// the external embedder fails (error, wrong vector count or dimension, exception) the estimate
// falls back to the hashing embedder's index (always maintained) and its explanation says so;
// the failed texts are retried at the next estimate. Estimate never throws.
//
// Determinism: evidence lists are kept in observe order; ties in similarity break by fingerprint
// id (first seen first). Thread-safety: none (one thread, or external locking).

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "advisor/fingerprint.h"
#include "core/duration_estimator.h"
#include "core/job.h"
#include "text/hashing_embedder.h"
#include "text/vector_index.h"

namespace schedmate::advisor {

struct HistoryEstimatorOptions {
  size_t recent = 10;      // evidence per tier: the last `recent` jobs of the group
  double quantile = 0.35;  // point estimate quantile of the evidence, in (0, 1]
  bool cap_by_user_latest = true;
  double min_similarity = 0.8;  // tier "similar"/"peers": cosine threshold (hashing vectors)
  // The same threshold for the external embedder's vectors (a semantic model's cosines sit on
  // another scale); below 0: min_similarity. A fallback to hashing uses min_similarity.
  double external_min_similarity = -1;
  size_t similar_k = 8;  // workloads considered in the similarity tiers
  size_t embedding_dimension = 128;
  Duration cold_start = Duration::Hours(1);
};

// One past job the estimate leaned on.
struct Evidence {
  std::string job_id;
  std::string user;
  double duration_s = 0;  // as it ran
  double scaled_s = 0;    // after work scaling (== duration_s when not scaled)
  double similarity = 1;  // of its workload text to the query's (1 = identical)
  int64_t finish_s = 0;
};

struct DetailedEstimate {
  DurationEstimate estimate;
  std::string tier;                  // "exact", "workload", ..., "global", "cold-start"
  std::vector<Evidence> neighbours;  // the evidence, most recent first
  bool capped_by_user_latest = false;
};

class HistoryEstimator final : public DurationEstimator {
 public:
  // `embedder`: optional external embedder for the similar tiers (non-owning, may be null = the
  // built-in hashing embedder; must outlive this estimator).
  explicit HistoryEstimator(HistoryEstimatorOptions options = {},
                            const text::TextEmbedder* embedder = nullptr);
  ~HistoryEstimator() override;

  std::string_view Name() const override { return "advisor"; }
  // Uses FingerprintOf(job). `now` is not used beyond the online contract (only observed jobs).
  DurationEstimate Estimate(const JobRecord& job, SimTime now) override;
  void Observe(const JobRecord& job, SimTime finish) override;

  // With an explicit fingerprint (e.g. from extracted metadata).
  DetailedEstimate EstimateDetailed(const JobRecord& job, const JobFingerprint& fp);
  void ObserveWithFingerprint(const JobRecord& job, SimTime finish, const JobFingerprint& fp);

  size_t observed() const { return entries_.size(); }

 private:
  struct Entry {
    std::string job_id;
    std::string user;
    double duration_s;
    double work;
    int64_t finish_s;
    uint32_t fp_id;
  };
  using Group = std::deque<uint32_t>;  // entry indexes, oldest first, at most options_.recent
  uint32_t FingerprintId(const std::string& workload, bool create);
  void Push(const std::string& key, uint32_t entry);
  const Group* Find(const std::string& key) const;
  // Sets *note when the external embedder failed and the hashing index was used instead.
  std::vector<std::pair<uint32_t, float>> SimilarFingerprints(const std::string& workload,
                                                              std::string* note);
  Result<std::vector<std::pair<uint32_t, float>>> ExternalSimilar(const std::string& workload);

  HistoryEstimatorOptions options_;
  std::vector<Entry> entries_;
  std::unordered_map<std::string, Group> groups_;
  std::unordered_map<std::string, uint32_t> fp_ids_;
  std::vector<std::string> fp_texts_;
  std::unordered_map<std::string, double> user_latest_;  // user -> last finished duration
  text::HashingEmbedder embedder_;
  text::VectorIndex index_;
  // workload -> (fingerprints known when computed, similar fingerprints); recomputed when new
  // fingerprints have been added since.
  std::unordered_map<std::string, std::pair<size_t, std::vector<std::pair<uint32_t, float>>>>
      similar_cache_;
  // External embedder (not owned), its index (created on the first answer) and how many
  // fingerprint ids (in id order) have been considered for it; results cached like similar_cache_.
  const text::TextEmbedder* external_ = nullptr;
  std::unique_ptr<text::VectorIndex> ext_index_;
  size_t ext_indexed_ = 0;
  std::unordered_map<std::string, std::pair<size_t, std::vector<std::pair<uint32_t, float>>>>
      ext_cache_;
};

}  // namespace schedmate::advisor
