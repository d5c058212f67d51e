#include "advisor/history_estimator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

namespace schedmate::advisor {
namespace {

std::string GpuKey(const JobRecord& job) { return std::to_string(job.gpus.milli()); }

struct TierSpec {
  const char* name;
  double strength;  // confidence ceiling of this tier
};
constexpr TierSpec kExact{"exact", 0.9};
constexpr TierSpec kWorkload{"workload", 0.85};
constexpr TierSpec kSimilar{"similar", 0.7};
constexpr TierSpec kUserGpus{"user-gpus", 0.55};
constexpr TierSpec kUser{"user", 0.45};
constexpr TierSpec kPeers{"peers", 0.4};
constexpr TierSpec kClass{"class", 0.25};
constexpr TierSpec kGlobal{"global", 0.15};

std::string Why(const TierSpec& tier) {
  std::string_view n = tier.name;
  if (n == "exact") return "same user, same workload, same GPUs/CPUs/VC";
  if (n == "workload") return "same user, same workload, same GPUs";
  if (n == "similar") return "same user, similar workload";
  if (n == "user-gpus") return "same user, same GPU count";
  if (n == "user") return "same user";
  if (n == "peers") return "other users, same or similar workload";
  if (n == "class") return "any user, same GPU count";
  return "recent jobs cluster-wide";
}

}  // namespace

HistoryEstimator::HistoryEstimator(HistoryEstimatorOptions options,
                                   const text::TextEmbedder* embedder)
    : options_(options),
      embedder_({.dimension = options.embedding_dimension}),
      index_({.dimension = options.embedding_dimension}) {
  options_.quantile = std::clamp(options_.quantile, 0.01, 1.0);
  if (options_.recent == 0) options_.recent = 1;
  external_ = embedder;
}

HistoryEstimator::~HistoryEstimator() = default;

uint32_t HistoryEstimator::FingerprintId(const std::string& workload, bool create) {
  auto it = fp_ids_.find(workload);
  if (it != fp_ids_.end()) return it->second;
  if (!create) return UINT32_MAX;
  uint32_t id = static_cast<uint32_t>(fp_texts_.size());
  fp_ids_.emplace(workload, id);
  fp_texts_.push_back(workload);
  if (!workload.empty()) {
    // Adding a fresh id with the right dimension cannot fail.
    (void)index_.Add(id, embedder_.EmbedOne(workload));
  }
  return id;
}

void HistoryEstimator::Push(const std::string& key, uint32_t entry) {
  Group& g = groups_[key];
  g.push_back(entry);
  if (g.size() > options_.recent) g.pop_front();
}

const HistoryEstimator::Group* HistoryEstimator::Find(const std::string& key) const {
  auto it = groups_.find(key);
  return it == groups_.end() || it->second.empty() ? nullptr : &it->second;
}

Result<std::vector<std::pair<uint32_t, float>>> HistoryEstimator::ExternalSimilar(
    const std::string& workload) {
  std::vector<std::pair<uint32_t, float>> out;
  auto cached = ext_cache_.find(workload);
  if (cached != ext_cache_.end() && cached->second.first == fp_texts_.size()) {
    return cached->second.second;
  }
  // Embed the fingerprints not yet in the external index plus the query, in one batch.
  std::vector<uint32_t> pending_ids;
  std::vector<std::string> texts;
  for (size_t id = ext_indexed_; id < fp_texts_.size(); ++id) {
    if (fp_texts_[id].empty()) continue;
    pending_ids.push_back(static_cast<uint32_t>(id));
    texts.push_back(fp_texts_[id]);
  }
  texts.push_back(workload);
  std::optional<Result<std::vector<text::Embedding>>> answer;
  try {
    answer.emplace(external_->Embed(texts));
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, fmt::format("embedder threw: {}", e.what()));
  } catch (...) {
    return Status(StatusCode::kInternal, "embedder threw");
  }
  if (!answer->ok()) return answer->status();
  const std::vector<text::Embedding>* vecs = &**answer;
  if (vecs->size() != texts.size()) {
    return Status(StatusCode::kDataLoss, fmt::format("embedder returned {} vectors for {} texts",
                                                     vecs->size(), texts.size()));
  }
  const size_t dim = ext_index_ ? ext_index_->dimension() : vecs->front().size();
  for (const text::Embedding& v : *vecs) {
    if (v.size() != dim || dim == 0) {
      return Status(
          StatusCode::kDataLoss,
          fmt::format("embedding dimension mismatch: expected {}, got {}", dim, v.size()));
    }
  }
  if (!ext_index_) {
    ext_index_ = std::make_unique<text::VectorIndex>(text::VectorIndexOptions{.dimension = dim});
  }
  for (size_t i = 0; i < pending_ids.size(); ++i) {
    SM_RETURN_IF_ERROR(ext_index_->Add(pending_ids[i], (*vecs)[i]));
  }
  ext_indexed_ = fp_texts_.size();
  if (ext_index_->size() == 0) return out;
  SM_ASSIGN_OR_RETURN(auto found, ext_index_->Search(vecs->back(), options_.similar_k));
  const double threshold = options_.external_min_similarity >= 0 ? options_.external_min_similarity
                                                                 : options_.min_similarity;
  for (const text::Neighbour& n : found) {
    if (n.similarity < threshold) continue;
    out.emplace_back(static_cast<uint32_t>(n.id), n.similarity);
  }
  if (ext_cache_.size() > 100000) ext_cache_.clear();  // bound memory
  ext_cache_[workload] = {fp_texts_.size(), out};
  return out;
}

std::vector<std::pair<uint32_t, float>> HistoryEstimator::SimilarFingerprints(
    const std::string& workload, std::string* note) {
  std::vector<std::pair<uint32_t, float>> out;
  if (workload.empty() || index_.size() == 0) return out;
  if (external_ != nullptr) {
    auto ext = ExternalSimilar(workload);
    if (ext.ok()) return *std::move(ext);
    *note = fmt::format("; similarity by the hashing embedder (external embedder failed: {})",
                        ext.status().message());
  }
  auto cached = similar_cache_.find(workload);
  if (cached != similar_cache_.end() && cached->second.first == fp_texts_.size()) {
    return cached->second.second;
  }
  if (similar_cache_.size() > 100000) similar_cache_.clear();  // bound memory
  auto found = index_.Search(embedder_.EmbedOne(workload), options_.similar_k);
  if (!found.ok()) return out;
  for (const text::Neighbour& n : *found) {
    if (n.similarity < options_.min_similarity) continue;
    out.emplace_back(static_cast<uint32_t>(n.id), n.similarity);
  }
  similar_cache_[workload] = {fp_texts_.size(), out};
  return out;  // ordered by similarity desc, id asc
}

void HistoryEstimator::Observe(const JobRecord& job, SimTime finish) {
  ObserveWithFingerprint(job, finish, FingerprintOf(job));
}

void HistoryEstimator::ObserveWithFingerprint(const JobRecord& job, SimTime finish,
                                              const JobFingerprint& fp) {
  uint32_t fid = FingerprintId(fp.workload, /*create=*/true);
  uint32_t idx = static_cast<uint32_t>(entries_.size());
  double d = std::max(job.duration.seconds_f(), 1.0);
  entries_.push_back({job.id, job.user, d, fp.work, finish.seconds(), fid});
  const std::string f = std::to_string(fid);
  const std::string g = GpuKey(job);
  Push("x|" + job.user + "|" + f + "|" + g + "|" + std::to_string(job.cpus) + "|" + job.vc, idx);
  Push("w|" + job.user + "|" + f + "|" + g, idx);
  Push("uf|" + job.user + "|" + f, idx);
  Push("ug|" + job.user + "|" + g, idx);
  Push("u|" + job.user, idx);
  Push("pw|" + f + "|" + g, idx);
  Push("f|" + f, idx);
  Push("c|" + g, idx);
  Push("g", idx);
  user_latest_[job.user] = d;
}

DurationEstimate HistoryEstimator::Estimate(const JobRecord& job, SimTime /*now*/) {
  return EstimateDetailed(job, FingerprintOf(job)).estimate;
}

DetailedEstimate HistoryEstimator::EstimateDetailed(const JobRecord& job,
                                                    const JobFingerprint& fp) {
  DetailedEstimate out;
  const uint32_t fid = FingerprintId(fp.workload, /*create=*/false);
  const bool known_fp = fid != UINT32_MAX;
  const std::string f = known_fp ? std::to_string(fid) : std::string();
  const std::string g = GpuKey(job);

  // Gather (entry, similarity) evidence from the first tier that has any.
  std::vector<std::pair<uint32_t, float>> ev;
  const TierSpec* tier = nullptr;
  auto take = [&](const Group* grp, float sim) {
    if (grp == nullptr) return;
    for (uint32_t e : *grp) ev.emplace_back(e, sim);
  };
  auto try_group = [&](const TierSpec& t, const std::string& key) {
    if (tier != nullptr) return;
    take(Find(key), 1.0f);
    if (!ev.empty()) tier = &t;
  };
  // The similar tiers pool the most similar workloads' recent jobs, nearest workload first,
  // keeping at most `recent` of them.
  std::vector<std::pair<uint32_t, float>> similar;
  bool similar_done = false;
  std::string embed_note;  // non-empty when the external embedder failed
  auto try_similar = [&](const TierSpec& t, const std::string& prefix) {
    if (tier != nullptr) return;
    if (!similar_done) {
      similar = SimilarFingerprints(fp.workload, &embed_note);
      similar_done = true;
    }
    for (const auto& [sid, sim] : similar) {
      if (sid == fid) continue;  // the identical workload was an earlier tier
      take(Find(prefix + std::to_string(sid)), sim);
      if (ev.size() >= options_.recent) break;
    }
    if (ev.size() > options_.recent) ev.resize(options_.recent);
    if (!ev.empty()) tier = &t;
  };
  if (known_fp) {
    try_group(kExact,
              "x|" + job.user + "|" + f + "|" + g + "|" + std::to_string(job.cpus) + "|" + job.vc);
    try_group(kWorkload, "w|" + job.user + "|" + f + "|" + g);
  }
  try_similar(kSimilar, "uf|" + job.user + "|");
  try_group(kUserGpus, "ug|" + job.user + "|" + g);
  try_group(kUser, "u|" + job.user);
  if (known_fp && !fp.workload.empty()) try_group(kPeers, "pw|" + f + "|" + g);
  try_similar(kPeers, "f|");
  try_group(kClass, "c|" + g);
  try_group(kGlobal, "g");

  DurationEstimate& est = out.estimate;
  if (tier == nullptr) {
    out.tier = "cold-start";
    Duration d = job.time_limit && *job.time_limit > Duration::Zero() ? *job.time_limit
                                                                      : options_.cold_start;
    est.duration = d;
    est.low = Duration::Zero();
    est.high = d * 4;
    est.confidence = 0;
    est.explanation =
        job.time_limit
            ? "cold start: no finished jobs yet; using the job's time limit"
            : fmt::format("cold start: no finished jobs yet; default {}", FormatDuration(d));
    est.explanation += embed_note;
    return out;
  }
  out.tier = tier->name;

  // Scale by work and collect values.
  std::vector<double> values;
  for (const auto& [e, sim] : ev) {
    const Entry& en = entries_[e];
    double scaled = en.duration_s;
    if (fp.work > 0 && en.work > 0) scaled *= std::clamp(fp.work / en.work, 0.01, 100.0);
    values.push_back(scaled);
    out.neighbours.push_back({en.job_id, en.user, en.duration_s, scaled, sim, en.finish_s});
  }
  std::reverse(out.neighbours.begin(), out.neighbours.end());  // most recent first
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  size_t qi = std::min(sorted.size() - 1,
                       static_cast<size_t>(options_.quantile * static_cast<double>(sorted.size())));
  double point = sorted[qi];
  double low = sorted.front(), high = sorted.back();
  if (sorted.size() == 1) {
    low = point / 2;
    high = point * 2;
  }
  std::string cap_note;
  if (options_.cap_by_user_latest) {
    auto it = user_latest_.find(job.user);
    if (it != user_latest_.end() && it->second < point) {
      cap_note = fmt::format("; capped at {} by the user's most recently finished job",
                             FormatDuration(Duration::FromSecondsF(it->second)));
      point = it->second;
      low = std::min(low, point);
      out.capped_by_user_latest = true;
    }
  }
  double spread = std::log(std::max(high, 1.0) / std::max(low, 1.0));
  double n = static_cast<double>(sorted.size());
  est.confidence = tier->strength * (1.0 - std::exp(-n / 3.0)) / (1.0 + 0.5 * spread);
  est.duration = Duration::FromSecondsF(point);
  est.low = Duration::FromSecondsF(low);
  est.high = Duration::FromSecondsF(high);
  est.explanation = fmt::format(
      "{} ({}): {}, the {:.2f} quantile of {} finished job{} (range {} .. {}){}", tier->name,
      Why(*tier), FormatDuration(est.duration), options_.quantile, sorted.size(),
      sorted.size() == 1 ? "" : "s", FormatDuration(est.low), FormatDuration(est.high), cap_note);
  est.explanation += embed_note;
  return out;
}

}  // namespace schedmate::advisor
