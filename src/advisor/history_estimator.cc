#include "advisor/history_estimator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

namespace schedmate::advisor {
namespace {

constexpr TierSpec kExact{"exact", 0.9};
constexpr TierSpec kResources{"resources", 0.85};
constexpr TierSpec kWorkload{"workload", 0.8};
constexpr TierSpec kSimilar{"similar", 0.7};
constexpr TierSpec kUserGpus{"user-gpus", 0.55};
constexpr TierSpec kUser{"user", 0.45};
constexpr TierSpec kPeers{"peers", 0.4};
constexpr TierSpec kWorkloadRange{"workload-range", 0.4};
constexpr TierSpec kClass{"class", 0.25};
constexpr TierSpec kGlobal{"global", 0.15};

std::string Why(const TierSpec& tier) {
  std::string_view n = tier.name;
  if (n == "exact") return "same user, same workload, same GPUs/CPUs/nodes/time limit/VC";
  if (n == "resources") return "same user, same GPUs/CPUs/nodes/time limit/VC";
  if (n == "workload") return "same user, same workload, same GPUs";
  if (n == "similar") return "same user, similar workload";
  if (n == "user-gpus") return "same user, same GPU count";
  if (n == "user") return "same user";
  if (n == "peers") return "other users, same or similar workload";
  if (n == "workload-range") return "any user, same workload";
  if (n == "class") return "any user, same GPU count";
  return "recent jobs cluster-wide";
}

// splitmix64's finaliser: spreads the bits of a packed key.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool WithinFactor2(double pred, double actual) {
  return std::abs(std::log2(std::max(pred, 1.0) / std::max(actual, 1.0))) <= 1.0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

constexpr size_t kMaxPending = size_t{1} << 20;  // estimates whose job never finished are dropped
constexpr size_t kLimitRatios = 256;
constexpr double kColdBandwidth = 2.5;       // log2 units: a cold start knows little
constexpr double kSemanticConfidence = 0.1;  // priors are typical cases, not this job
// kDensityWindow: runs weighing less than this (the newest weighs 1) are left out of a density:
// a thousandth of the newest run's kernel cannot move the point (decay 0.7: ages past 19).
constexpr double kNegligibleWeight = 1e-3;

// Outcome classes. A timeout ran its course (to the limit), so it counts with the completed.
constexpr uint8_t kOutcomeUnknown = 0, kOutcomeCompleted = 1, kOutcomeEarly = 2;
uint8_t OutcomeOf(JobState s) {
  switch (s) {
    case JobState::kUnknown:
      return kOutcomeUnknown;
    case JobState::kCompleted:
    case JobState::kTimeout:
      return kOutcomeCompleted;
    default:
      return kOutcomeEarly;
  }
}
// Gap buckets between the previous job's end and this submission: a quick resubmission after a
// crash is a debugging cycle; a return after hours is a fresh start.
constexpr int64_t kGapBounds[] = {600, 7200};  // seconds: < 10 min, < 2 h, later
int GapBucket(int64_t gap_s) {
  if (gap_s < kGapBounds[0]) return 0;
  return gap_s < kGapBounds[1] ? 1 : 2;
}
constexpr const char* kGapText[] = {"less than 10 min", "10 min to 2 h", "more than 2 h"};

}  // namespace

HistoryEstimator::HistoryEstimator(HistoryEstimatorOptions options,
                                   const text::TextEmbedder* embedder)
    : options_(options),
      point_kernel_(std::clamp(options.point_bandwidth, 0.05, 10.0)),
      embedder_({.dimension = options.embedding_dimension}),
      index_({.dimension = options.embedding_dimension}) {
  if (options_.recent == 0) options_.recent = 1;
  options_.recency_decay = std::clamp(options_.recency_decay, 0.01, 1.0);
  options_.over_penalty = std::max(options_.over_penalty, 0.0);
  options_.bandwidth = std::clamp(options_.bandwidth, 0.05, 10.0);
  options_.point_bandwidth = point_kernel_.bandwidth();
  options_.sequence_weight = std::clamp(options_.sequence_weight, 0.0, 1.0);
  options_.sequence_decay = std::clamp(options_.sequence_decay, 0.01, 1.0);
  options_.user_mix = std::clamp(options_.user_mix, 0.0, 1.0);
  options_.user_mix_decay = std::clamp(options_.user_mix_decay, 0.01, 1.0);
  calibrator_ = QuantileCalibrator(options_.calibrate_after);
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

size_t HistoryEstimator::GroupKeyHash::operator()(const GroupKey& k) const {
  uint64_t h = Mix(static_cast<uint64_t>(k.kind) << 32 | k.user);
  h = Mix(h ^ (static_cast<uint64_t>(k.fid) << 32 | k.res));
  return static_cast<size_t>(Mix(h ^ static_cast<uint64_t>(k.gpus)));
}

size_t HistoryEstimator::ResourceShapeHash::operator()(const ResourceShape& r) const {
  uint64_t h = Mix(static_cast<uint64_t>(r.gpus_milli));
  h = Mix(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(r.cpus)) << 32 |
               static_cast<uint32_t>(r.nodes)));
  h = Mix(h ^ static_cast<uint64_t>(r.limit_s));
  return static_cast<size_t>(Mix(h ^ r.vc));
}

std::pair<double, double> HistoryEstimator::RangeRing::Range(double tail) {
  const size_t n = values_.size();
  if (n == 0) return {0, 0};
  const bool filling = scratch_.size() != n;
  const uint32_t pushed = values_.pushed();
  if (computed_at_ != 0 && pushed == computed_at_) return range_;
  if (computed_at_ != 0 && !filling && pushed - computed_at_ < kRangeRefresh) return range_;
  // Values are run times: ties are equal values, so the order among them does not matter.
  scratch_ = values_.stored();
  const auto lo = static_cast<ptrdiff_t>(tail * static_cast<double>(n - 1));
  const auto hi = static_cast<ptrdiff_t>((1 - tail) * static_cast<double>(n - 1));
  std::nth_element(scratch_.begin(), scratch_.begin() + hi, scratch_.end());
  const double top = scratch_[hi];
  std::nth_element(scratch_.begin(), scratch_.begin() + lo, scratch_.begin() + hi);
  range_ = {scratch_[lo], top};
  computed_at_ = pushed;
  return range_;
}

uint32_t HistoryEstimator::UserId(const std::string& user) {
  auto [it, added] = user_ids_.try_emplace(user, static_cast<uint32_t>(user_names_.size()));
  if (added) user_names_.push_back(user);
  return it->second;
}

uint32_t HistoryEstimator::ResourceId(const JobRecord& job) {
  auto vc = vc_ids_.try_emplace(job.vc, static_cast<uint32_t>(vc_ids_.size())).first;
  const ResourceShape shape{job.gpus.milli(), job.cpus, job.nodes,
                            job.time_limit ? job.time_limit->seconds() : int64_t{-1}, vc->second};
  return resource_ids_.try_emplace(shape, static_cast<uint32_t>(resource_ids_.size()))
      .first->second;
}

size_t HistoryEstimator::GroupTable::SlotOf(const GroupKey& key) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = GroupKeyHash()(key) & mask;; i = (i + 1) & mask) {
    if (!slots_[i].used || slots_[i].key == key) return i;
  }
}

const HistoryEstimator::Group* HistoryEstimator::GroupTable::Find(const GroupKey& key) const {
  if (slots_.empty()) return nullptr;
  const Slot& s = slots_[SlotOf(key)];
  return s.used && !s.group.empty() ? &s.group : nullptr;
}

HistoryEstimator::Group& HistoryEstimator::GroupTable::FindOrAdd(const GroupKey& key) {
  if (2 * (used_ + 1) > slots_.size()) Grow();
  Slot& s = slots_[SlotOf(key)];
  if (!s.used) {
    s.used = true;
    s.key = key;
    ++used_;
  }
  return s.group;
}

void HistoryEstimator::GroupTable::Grow() {
  std::vector<Slot> old(std::max<size_t>(1024, 2 * slots_.size()));
  old.swap(slots_);
  for (Slot& s : old) {
    if (s.used) slots_[SlotOf(s.key)] = std::move(s);
  }
}

void HistoryEstimator::Push(const GroupKey& key, GroupItem item) {
  groups_.FindOrAdd(key).Push(item, options_.recent);
}

const HistoryEstimator::Group* HistoryEstimator::Find(const GroupKey& key) const {
  return groups_.Find(key);
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
  ObserveWithFingerprint(job, finish, WorkloadFingerprintOf(job));  // semantics unused there
}

void HistoryEstimator::ObserveWithFingerprint(const JobRecord& job, SimTime finish,
                                              const JobFingerprint& fp) {
  const uint32_t fid = FingerprintId(fp.workload, /*create=*/true);
  const uint32_t entry = static_cast<uint32_t>(entries_.size());
  const double d = std::max(job.duration.seconds_f(), 1.0);
  const uint8_t outcome = OutcomeOf(job.state);
  const uint32_t user = UserId(job.user);
  const uint32_t res = ResourceId(job);
  const int64_t gpus = job.gpus.milli();
  const double log2_s = std::log2(d);
  entries_.push_back({d, log2_s, fp.work, outcome});
  entry_info_.push_back({job.id, user, finish.seconds()});
  const GroupItem item{entry,
                       {DensityGrid::Locate(log2_s),
                        static_cast<int8_t>(std::clamp(std::floor(log2_s), -1.0, 127.0))}};
  Push({GroupKind::kExact, user, fid, res}, item);
  Push({GroupKind::kResources, user, 0, res}, item);
  Push({GroupKind::kWorkload, user, fid, 0, gpus}, item);
  Push({GroupKind::kUserWorkload, user, fid}, item);
  Push({GroupKind::kUserGpus, user, 0, 0, gpus}, item);
  Push({GroupKind::kUser, user}, item);
  Push({GroupKind::kPeers, 0, fid, 0, gpus}, item);
  Push({GroupKind::kAnyWorkload, 0, fid}, item);
  Push({GroupKind::kClass, 0, 0, 0, gpus}, item);
  Push({GroupKind::kGlobal}, item);
  if (options_.workload_range) {
    if (!fp.workload.empty()) {
      if (workload_runs_.size() <= fid) workload_runs_.resize(fid + 1);
      workload_runs_[fid].Push(log2_s, options_.workload_range_window);
    }
    cluster_runs_.Push(log2_s, options_.workload_range_window);
  }
  if (job.time_limit && *job.time_limit > Duration::Zero()) {
    limit_ratios_.push_back(d / std::max(job.time_limit->seconds_f(), 1.0));
    if (limit_ratios_.size() > kLimitRatios) limit_ratios_.pop_front();
  }
  // Learn from what was predicted for this job: the PIT of its run time, which of the exact and
  // resources tiers would have been within x2, and its outcome in its context.
  auto it = pending_.find(job.id);
  if (it != pending_.end()) {
    const Pending& p = it->second;
    if (p.dist) calibrator_.RecordBin(p.dist->CdfBin(d, QuantileCalibrator::kBins));
    if (p.exact_point > 0 && p.resources_point > 0) {
      exact_hits_ += WithinFactor2(p.exact_point, d);
      resources_hits_ += WithinFactor2(p.resources_point, d);
    }
    LearnOutcome(user, outcome, p.outcome_context);
    pending_.erase(it);
  }
  if (outcome != kOutcomeUnknown) {
    // Newest by finish time: observations arrive in finish order.
    last_outcome_[{GroupKind::kUserGpus, user, 0, 0, gpus}] = {outcome, finish.seconds()};
    last_outcome_[{GroupKind::kUser, user}] = {outcome, finish.seconds()};
  }
}

void HistoryEstimator::LearnOutcome(uint32_t user, uint8_t outcome, int context) {
  if (context < 0 || context >= kContexts || outcome == kOutcomeUnknown) return;
  const double c = outcome == kOutcomeCompleted ? 1.0 : 0.0;
  odds_[context].completed += c;
  odds_[context].total += 1;
  OddsCell& u = user_odds_[user][context];
  u.completed += c;
  u.total += 1;
}

OutcomeOdds HistoryEstimator::PredictOutcome(const Query& q) const {
  const JobRecord& job = q.job;
  OutcomeOdds odds;
  auto it = last_outcome_.find({GroupKind::kUserGpus, q.user, 0, 0, q.gpus});
  const bool same_gpus = it != last_outcome_.end();
  if (!same_gpus) it = last_outcome_.find({GroupKind::kUser, q.user});
  if (it == last_outcome_.end()) return odds;
  const auto [prev, finish_s] = it->second;
  // A submission before the previous job ended: the submit time is unknown (e.g. `advise`).
  if (job.submit.seconds() < finish_s) return odds;
  const int gap = GapBucket(job.submit.seconds() - finish_s);
  odds.context = (prev == kOutcomeCompleted ? 0 : 3) + gap;
  // The cluster's odds in this context (Laplace prior 1/2), shrunk towards by the user's own.
  const OddsCell& all = odds_[odds.context];
  const double p_all = (all.completed + 1.0) / (all.total + 2.0);
  double p = p_all, user_n = 0;
  auto u = user_odds_.find(q.user);
  if (u != user_odds_.end()) {
    const OddsCell& c = u->second[odds.context];
    const double k = options_.outcome_prior_strength;
    p = (c.completed + k * p_all) / (c.total + k);
    user_n = c.total;
  }
  odds.p_complete = std::clamp(p, 0.02, 0.98);
  if (!options_.explain) return odds;
  odds.text = fmt::format(
      "; P(completes) {:.2f}: the user's previous job{} {} {} before this submission (cluster: "
      "{:.2f} of {:.0f} jobs in that situation completed; the user's own: {:.0f})",
      odds.p_complete, same_gpus ? " with these GPUs" : "",
      prev == kOutcomeCompleted ? "completed" : "ended early", kGapText[gap], p_all, all.total,
      user_n);
  return odds;
}

HistoryEstimator::Samples HistoryEstimator::SamplesOf(const Query& q, const Items& ev,
                                                      const OutcomeOdds& odds) const {
  Samples s;
  s.reserve(ev.size());
  double mass[3] = {0, 0, 0};
  double w = 1;
  for (size_t k = ev.size(); k-- > 0;) {
    const Entry& en = entries_[ev[k].first];
    double scaled = en.duration_s;
    if (q.fp.work > 0 && en.work > 0) scaled *= std::clamp(q.fp.work / en.work, 0.01, 100.0);
    s.emplace_back(scaled, w);
    mass[en.outcome] += w;
    w *= options_.recency_decay;
  }
  // The mixture: completed runs get P(completes) of the known-outcome mass, early ends the rest.
  if (!options_.outcome_mixture || odds.p_complete < 0 || mass[kOutcomeCompleted] <= 0 ||
      mass[kOutcomeEarly] <= 0) {
    return s;
  }
  const double known = mass[kOutcomeCompleted] + mass[kOutcomeEarly];
  const double scale_c = odds.p_complete * known / mass[kOutcomeCompleted];
  const double scale_e = (1 - odds.p_complete) * known / mass[kOutcomeEarly];
  for (size_t i = 0; i < s.size(); ++i) {
    const uint8_t o = entries_[ev[ev.size() - 1 - i].first].outcome;
    if (o == kOutcomeCompleted) s[i].second *= scale_c;
    if (o == kOutcomeEarly) s[i].second *= scale_e;
  }
  return s;
}

double HistoryEstimator::BandwidthFor(size_t n) const {
  return options_.bandwidth * (1.0 + 2.0 / static_cast<double>(std::max<size_t>(n, 1)));
}

double HistoryEstimator::PointOf(const Query& q, const Samples& s, const GroupKey& key) const {
  if (options_.point == PointEstimate::kDensityWindow) {
    return DensityPoint(q.user, &s, key, /*with_user=*/false);
  }
  DurationDistribution dist(s, BandwidthFor(s.size()));
  return options_.point == PointEstimate::kWindowMode ? dist.WindowMode(options_.over_penalty)
                                                      : dist.Quantile(calibrator_.Level(0.5));
}

void HistoryEstimator::RunsOf(const Group& group, double decay, std::vector<Run>* runs) const {
  // SamplesOf's weights and order (newest first): a group's runs give its samples' density.
  runs->clear();
  double w = 1;
  for (size_t k = group.size(); k-- > 0 && w >= kNegligibleWeight; w *= decay) {
    runs->push_back({group[k].grid.at, w});
  }
}

void HistoryEstimator::AddDensity(const std::vector<Run>& runs, const Group* sequence, double scale,
                                  DensityGrid* grid) const {
  double mass = 0;
  for (const Run& r : runs) mass += r.weight * DensityGrid::KernelMass(r.at, point_kernel_);
  // The next runs: newest first, the run at i followed the run at i - 1.
  std::vector<Run>& next = next_scratch_;
  next.clear();
  double next_weight = 0, next_mass = 0;
  const size_t n = sequence != nullptr ? sequence->size() : 0;
  if (options_.sequence_weight > 0 && n >= 2) {
    const Group& g = *sequence;
    const int8_t newest = g[n - 1].grid.octave;
    double w = 1;
    for (size_t i = n - 1; i >= 1; --i, w *= options_.sequence_decay) {
      if (g[i - 1].grid.octave != newest) continue;
      next.push_back({g[i].grid.at, w});
      next_weight += w;
      next_mass += w * DensityGrid::KernelMass(g[i].grid.at, point_kernel_);
    }
  }
  const double s =
      next_weight >= options_.sequence_min_weight && next_mass > 0 ? options_.sequence_weight : 0;
  if (mass > 0) {
    for (const Run& r : runs) grid->Add(r.at, scale * (1 - s) * r.weight / mass, point_kernel_);
  }
  if (s > 0) {
    for (const Run& r : next) grid->Add(r.at, scale * s * r.weight / next_mass, point_kernel_);
  }
}

double HistoryEstimator::DensityPoint(uint32_t user_id, const Samples* samples,
                                      const std::optional<GroupKey>& chosen, bool with_user) const {
  // Built afresh: a few dozen kernels on a small grid.
  std::vector<Run>& runs = run_scratch_;
  runs.clear();
  const Group* group = chosen ? Find(*chosen) : nullptr;
  if (samples != nullptr) {
    for (const auto& [seconds, weight] : *samples) {
      if (weight < kNegligibleWeight * samples->front().second) break;  // newest first
      runs.push_back({DensityGrid::Locate(std::log2(std::max(seconds, 1.0))), weight});
    }
  } else {
    RunsOf(*group, options_.recency_decay, &runs);
  }
  const Group* user = nullptr;
  if (with_user && options_.user_mix > 0) {
    user = Find({GroupKind::kUser, user_id});
    if (user != nullptr && user->empty()) user = nullptr;
  }
  DensityGrid grid;
  AddDensity(runs, group, user != nullptr ? 1 - options_.user_mix : 1.0, &grid);
  if (user != nullptr) {
    RunsOf(*user, options_.user_mix_decay, &runs);
    AddDensity(runs, nullptr, options_.user_mix, &grid);
  }
  return std::max(1.0, std::exp2(grid.WindowPoint(options_.over_penalty)));  // runs count >= 1 s
}

void HistoryEstimator::UpdateSorted(const GroupKey& key, const Group& group, CachedDist* c) const {
  // The distribution's order: duration, equal durations newest first (SamplesOf lists the
  // evidence newest first and the distribution's sort is stable).
  auto before = [](const SortedSample& a, const SortedSample& b) {
    return a.duration_s != b.duration_s ? a.duration_s < b.duration_s : a.ordinal > b.ordinal;
  };
  const size_t n = group.size();
  const uint32_t pushed = group.pushed();
  const uint32_t first = pushed - static_cast<uint32_t>(n);  // group[0]'s ordinal
  std::vector<SortedSample>& sorted = c->sorted;
  uint32_t known = first;  // the ordinals from `known` on are not in `sorted` yet
  if (c->key == key && c->newest != UINT32_MAX && !sorted.empty()) {
    // Entry indexes grow with each Observe, so the group's items are in entry order: the
    // entries newer than c->newest are the new ones.
    size_t fresh = 0;
    while (fresh < n && group[n - 1 - fresh] > c->newest) ++fresh;
    known = pushed - static_cast<uint32_t>(fresh);
    std::erase_if(sorted, [&](const SortedSample& s) { return s.ordinal < first; });
  } else {
    sorted.clear();
  }
  for (uint32_t ord = known; ord < pushed; ++ord) {
    const Entry& en = entries_[group[ord - first]];
    const SortedSample s{en.duration_s, en.log2_s, ord};
    sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), s, before), s);
  }
}

void HistoryEstimator::UnscaledSamples(uint32_t pushed, CachedDist* c) const {
  // SamplesOf's weights: 1, decay, decay^2, ... from the newest, each divided by their sum in
  // that order (the sum is positive: every weight is).
  const std::vector<SortedSample>& sorted = c->sorted;
  const size_t n = sorted.size();
  std::array<double, 64> small;
  std::vector<double> large(n > small.size() ? n : 0);
  double* by_rank = n > small.size() ? large.data() : small.data();
  double total = 0, decayed = 1;
  for (size_t k = 0; k < n; ++k) {
    by_rank[k] = decayed;
    total += decayed;
    decayed *= options_.recency_decay;
  }
  c->log2.resize(n);
  c->weight.resize(n);
  for (size_t i = 0; i < n; ++i) {
    c->log2[i] = sorted[i].log2_s;
    c->weight[i] = by_rank[pushed - 1 - sorted[i].ordinal] / total;
  }
}

const DurationDistribution& HistoryEstimator::EnsureDist(CachedDist* c) const {
  if (!c->dist) {
    c->dist = std::make_shared<const DurationDistribution>(c->log2, c->weight, BandwidthFor(c->n));
  }
  return *c->dist;
}

HistoryEstimator::CachedDist& HistoryEstimator::CachedDistOf(const GroupKey& key,
                                                             const Group& group) {
  if (dist_cache_.empty()) dist_cache_.resize(kDistCacheSize);
  CachedDist& c = dist_cache_[GroupKeyHash()(key) % kDistCacheSize];
  const uint32_t newest = group[group.size() - 1];
  if (c.newest == newest && c.key == key) return c;
  // The same group's earlier quantiles are where the new ones' searches start (the searches'
  // results do not depend on where they start).
  if (!(c.key == key)) std::fill(std::begin(c.roots), std::end(c.roots), std::nan(""));
  UpdateSorted(key, group, &c);
  c.key = key;
  c.newest = newest;
  UnscaledSamples(group.pushed(), &c);
  c.dist.reset();
  c.n = group.size();
  c.first = entries_[newest].duration_s;
  c.point = -1;  // PointOfCached computes it when asked
  return c;
}

double HistoryEstimator::PointOfCached(CachedDist* c) const {
  if (c->point >= 0) return c->point;
  c->point = 0;
  if (options_.point == PointEstimate::kWindowMode) {
    c->point = DurationDistribution::WindowModeOf(c->log2.data(), c->weight.data(), c->n,
                                                  options_.over_penalty);
  } else if (options_.point == PointEstimate::kDensityWindow) {
    c->point = DensityPoint(c->key.user, nullptr, c->key, /*with_user=*/false);
  }
  return c->point;
}

const TierSpec* HistoryEstimator::GatherEvidence(const Query& q, Items* ev, Pending* pend,
                                                 bool* split_ignored, std::string* embed_note,
                                                 std::optional<GroupKey>* chosen) {
  const bool known_fp = q.fid != UINT32_MAX;
  const TierSpec* tier = nullptr;
  auto take = [&](const Group* grp, float sim) {
    if (grp == nullptr) return;
    for (size_t i = 0; i < grp->size(); ++i) ev->emplace_back((*grp)[i], sim);
  };
  auto try_group = [&](const TierSpec& t, const GroupKey& key) {
    if (tier != nullptr) return;
    take(Find(key), 1.0f);
    if (!ev->empty()) {
      tier = &t;
      *chosen = key;
    }
  };
  // The similar tiers pool the most similar workloads' recent jobs, nearest workload first,
  // keeping at most `recent` of them.
  Items similar;
  bool similar_done = false;
  auto try_similar = [&](const TierSpec& t, GroupKey key) {
    if (tier != nullptr) return;
    if (!similar_done) {
      similar = SimilarFingerprints(q.fp.workload, embed_note);
      similar_done = true;
    }
    for (const auto& [sid, sim] : similar) {
      if (sid == q.fid) continue;  // the identical workload was an earlier tier
      key.fid = sid;
      take(Find(key), sim);
      if (ev->size() >= options_.recent) break;
    }
    if (ev->size() > options_.recent) ev->resize(options_.recent);
    if (!ev->empty()) tier = &t;
  };

  // Tier 1 against tier 2: both points are kept to learn which one to trust.
  const GroupKey exact_key{GroupKind::kExact, q.user, q.fid, q.res};
  const GroupKey resources_key{GroupKind::kResources, q.user, 0, q.res};
  if (known_fp) {
    const Group* exact = Find(exact_key);
    const Group* resources = Find(resources_key);
    const bool window = options_.point != PointEstimate::kMedian;
    if (exact != nullptr && resources != nullptr && q.cacheable && window) {
      pend->exact_point = PointOfCached(&CachedDistOf(exact_key, *exact));
      pend->resources_point = PointOfCached(&CachedDistOf(resources_key, *resources));
      if (exact_hits_ >= resources_hits_) {
        take(exact, 1.0f);
        tier = &kExact;
        *chosen = exact_key;
      } else {
        *split_ignored = true;
      }
    } else if (exact != nullptr && resources != nullptr) {
      Items a, b;
      take(exact, 1.0f);
      a.swap(*ev);
      take(resources, 1.0f);
      b.swap(*ev);
      pend->exact_point = PointOf(q, SamplesOf(q, a, {}), exact_key);
      pend->resources_point = PointOf(q, SamplesOf(q, b, {}), resources_key);
      if (exact_hits_ >= resources_hits_) {
        ev->swap(a);
        tier = &kExact;
        *chosen = exact_key;
      } else {
        *split_ignored = true;
      }
    }
  }
  if (known_fp && tier == nullptr && !*split_ignored) try_group(kExact, exact_key);
  try_group(kResources, resources_key);
  if (known_fp) try_group(kWorkload, {GroupKind::kWorkload, q.user, q.fid, 0, q.gpus});
  try_similar(kSimilar, {GroupKind::kUserWorkload, q.user});
  try_group(kUserGpus, {GroupKind::kUserGpus, q.user, 0, 0, q.gpus});
  try_group(kUser, {GroupKind::kUser, q.user});
  if (known_fp && !q.fp.workload.empty()) {
    try_group(kPeers, {GroupKind::kPeers, 0, q.fid, 0, q.gpus});
  }
  try_similar(kPeers, {GroupKind::kAnyWorkload});
  // A job's own time limit or description says more than strangers' jobs of the same size.
  if (!q.has_limit && !q.semantic) {
    try_group(kClass, {GroupKind::kClass, 0, 0, 0, q.gpus});
    try_group(kGlobal, {GroupKind::kGlobal});
  }
  return tier;
}

const TierSpec* HistoryEstimator::RestrictToWorkloadRange(const Query& q, const TierSpec* tier,
                                                          Items* ev,
                                                          std::optional<GroupKey>* chosen,
                                                          std::string* text) {
  const bool blind = tier == &kResources || tier == &kUserGpus || tier == &kUser ||
                     tier == &kClass || tier == &kGlobal;
  if (!blind || q.fid >= workload_runs_.size() || q.fp.workload.empty()) return tier;
  RangeRing& runs = workload_runs_[q.fid];
  if (runs.size() < std::max<size_t>(options_.workload_range_min_jobs, 1)) return tier;
  const double tail = std::clamp(options_.workload_range_tail, 0.0, 0.5);
  // Plain locals, not structured bindings: the lambda below captures them (clang < 16 refuses
  // to capture bindings).
  const std::pair<double, double> range = runs.Range(tail);
  const std::pair<double, double> cluster = cluster_runs_.Range(tail);
  const double lo = range.first, hi = range.second;
  const double cluster_lo = cluster.first, cluster_hi = cluster.second;
  if (hi - lo >= options_.workload_range_narrowing * (cluster_hi - cluster_lo)) return tier;
  const size_t before = ev->size();
  std::erase_if(*ev, [&](const std::pair<uint32_t, float>& e) {
    const double l = entries_[e.first].log2_s;
    return l < lo || l > hi;
  });
  const size_t kept = ev->size();
  if (kept == before) return tier;
  chosen->reset();
  if (kept == 0) {
    const GroupKey key{GroupKind::kAnyWorkload, 0, q.fid};
    const Group* grp = Find(key);
    if (grp == nullptr) return tier;  // cannot happen: the ring and the group grow together
    const size_t from = grp->size() > options_.recent ? grp->size() - options_.recent : 0;
    for (size_t i = from; i < grp->size(); ++i) ev->emplace_back((*grp)[i], 1.0f);
    *chosen = key;
  }
  if (options_.explain) {
    *text = fmt::format(
        "; the workload's last {} runs (any user) took {} .. {} (p{:g}..p{:g}; the cluster's {} .. "
        "{}): {} of the {} jobs of tier {} fell outside and {} set aside{}",
        runs.size(), FormatDuration(Duration::FromSecondsF(std::exp2(lo))),
        FormatDuration(Duration::FromSecondsF(std::exp2(hi))), 100 * tail, 100 * (1 - tail),
        FormatDuration(Duration::FromSecondsF(std::exp2(cluster_lo))),
        FormatDuration(Duration::FromSecondsF(std::exp2(cluster_hi))), before - kept, before,
        tier->name, before - kept == 1 ? "is" : "are",
        kept == 0 ? "; the workload's own last runs are the evidence" : "");
  }
  return kept == 0 ? &kWorkloadRange : tier;
}

void HistoryEstimator::ColdStart(const Query& q, Samples* samples, double* bandwidth,
                                 std::string* text) const {
  const JobRecord& job = q.job;
  if (q.semantic) {
    double s = q.semantic->seconds;
    std::string cap;
    if (q.has_limit && job.time_limit->seconds_f() < s) {
      s = job.time_limit->seconds_f();
      cap = fmt::format("; capped at the job's time limit {}", FormatDuration(*job.time_limit));
    }
    samples->emplace_back(s, 1.0);
    *bandwidth = DurationPriors::Builtin().bandwidth;
    if (options_.explain) {
      *text =
          fmt::format("cold start from the job's description (no finished job like it): {} = {}{}",
                      q.semantic->explanation,
                      FormatDuration(Duration::FromSecondsF(q.semantic->seconds)), cap);
    }
    return;
  }
  if (!q.has_limit) {
    samples->emplace_back(options_.cold_start.seconds_f(), 1.0);
    *bandwidth = kColdBandwidth;
    if (options_.explain) {
      *text = fmt::format("cold start: no finished jobs yet; default {}",
                          FormatDuration(options_.cold_start));
    }
    return;
  }
  // The limit times the learnt ratios actual / limit (newest weighted most), else x 0.5.
  const double limit_s = job.time_limit->seconds_f();
  double w = 1;
  for (size_t k = limit_ratios_.size(); k-- > 0 && samples->size() < 64;) {
    samples->emplace_back(limit_s * limit_ratios_[k], w);
    w *= 0.97;
  }
  if (samples->empty()) {
    samples->emplace_back(limit_s * 0.5, 1.0);
    *bandwidth = kColdBandwidth;
    if (options_.explain) {
      *text = fmt::format(
          "cold start: no finished job of this user; half the job's time limit {} (assumed: "
          "jobs use about half their limit until finished jobs say otherwise)",
          FormatDuration(*job.time_limit));
    }
    return;
  }
  *bandwidth = BandwidthFor(samples->size());
  if (!options_.explain) return;
  std::vector<double> ratios(limit_ratios_.begin(), limit_ratios_.end());
  *text = fmt::format(
      "cold start: no finished job of this user; the job's time limit {} times the ratio "
      "run time / limit of {} recently finished jobs (median {:.2f})",
      FormatDuration(*job.time_limit), limit_ratios_.size(), Median(ratios));
}

void HistoryEstimator::Summarise(const TierSpec* tier, const DurationDistribution& dist,
                                 size_t n_samples, double first_sample, CachedDist* cached,
                                 double density_point, const std::string& evidence_text,
                                 DetailedEstimate* out) const {
  DurationEstimate& est = out->estimate;
  const double l10 = calibrator_.Level(0.1), l50 = calibrator_.Level(0.5),
               l90 = calibrator_.Level(0.9);
  double fresh[3] = {std::nan(""), std::nan(""), std::nan("")};
  double* roots = cached != nullptr ? cached->roots : fresh;
  out->p10_s = dist.Quantile(l10, &roots[0]);
  out->p50_s = std::max(out->p10_s, dist.Quantile(l50, &roots[1]));
  out->p90_s = std::max(out->p50_s, dist.Quantile(l90, &roots[2]));
  if (n_samples == 1 && calibrator_.samples() < options_.calibrate_after) {
    out->p50_s = first_sample;  // one symmetric kernel: its centre, exactly
  }
  double point = out->p50_s;
  const bool window = options_.point != PointEstimate::kMedian && tier != nullptr &&
                      !(options_.point == PointEstimate::kDensityWindow && density_point < 0);
  if (window && options_.point == PointEstimate::kDensityWindow) {
    point = density_point;
  } else if (window) {
    point = cached != nullptr ? PointOfCached(cached) : dist.WindowMode(options_.over_penalty);
  }
  est.duration = Duration::FromSecondsF(point);
  est.median = Duration::FromSecondsF(out->p50_s);
  est.low = Duration::FromSecondsF(out->p10_s);
  est.high = Duration::FromSecondsF(out->p90_s);
  if (tier == nullptr) {
    est.confidence = 0;
  } else {
    const double spread = std::log(std::max(out->p90_s, 1.0) / std::max(out->p10_s, 1.0));
    const double n = static_cast<double>(n_samples);
    est.confidence = tier->strength * (1.0 - std::exp(-n / 3.0)) / (1.0 + 0.5 * spread);
  }
  if (!options_.explain) return;
  std::string point_text = "the median";
  if (window && options_.point == PointEstimate::kDensityWindow) {
    point_text = fmt::format(
        "densest x2 window of the smoothed evidence, next runs x{:g}, the user's runs x{:g}; "
        "{:.0f}% of the evidence within x2",
        options_.sequence_weight, options_.user_mix, 100 * dist.WindowMass(point));
  } else if (window) {
    point_text = fmt::format("the centre of the densest x2 window ({:.0f}% of the evidence)",
                             100 * dist.WindowMass(point));
  }
  const std::string calib =
      calibrator_.samples() >= options_.calibrate_after
          ? fmt::format(
                "calibrated on {} finished predictions: p10/p50/p90 at levels "
                "{:.2f}/{:.2f}/{:.2f}",
                calibrator_.samples(), l10, l50, l90)
          : std::string("not yet calibrated");
  est.explanation =
      fmt::format("{}; estimate {} ({}); median {}, p10..p90 {} .. {} ({})", evidence_text,
                  FormatDuration(est.duration), point_text, FormatDuration(est.median),
                  FormatDuration(est.low), FormatDuration(est.high), calib);
}

DurationEstimate HistoryEstimator::Estimate(const JobRecord& job, SimTime /*now*/) {
  return EstimateWith(job, FingerprintOf(job), /*want_point=*/true).estimate;
}

DurationEstimate HistoryEstimator::EstimateDistribution(const JobRecord& job, SimTime /*now*/) {
  return EstimateWith(job, FingerprintOf(job), /*want_point=*/false).estimate;
}

DetailedEstimate HistoryEstimator::EstimateWith(const JobRecord& job, const JobFingerprint& fp,
                                                bool want_point) {
  DetailedEstimate out;
  Query q{job, fp};
  q.fid = FingerprintId(fp.workload, /*create=*/false);
  q.user = UserId(job.user);
  q.res = ResourceId(job);
  q.gpus = job.gpus.milli();
  q.has_limit = job.time_limit && *job.time_limit > Duration::Zero();
  q.cacheable = !options_.explain && !options_.outcome_mixture && !(fp.work > 0);
  if (options_.semantic_cold_start && !fp.semantics.empty()) {
    q.semantic =
        EstimateFromSemantics(DurationPriors::Builtin(), fp.semantics, job.gpus.as_double());
  }

  Items ev;
  Pending pend;
  bool split_ignored = false;
  std::string embed_note;
  std::optional<GroupKey> chosen;
  const TierSpec* tier = GatherEvidence(q, &ev, &pend, &split_ignored, &embed_note, &chosen);
  std::string range_note;
  if (tier != nullptr && options_.workload_range) {
    tier = RestrictToWorkloadRange(q, tier, &ev, &chosen, &range_note);
  }
  CachedDist* cached = nullptr;

  Samples samples;
  double bandwidth = 0;
  std::string evidence_text;
  if (tier == nullptr) {
    out.tier = q.semantic ? "semantic" : "cold-start";
    ColdStart(q, &samples, &bandwidth, &evidence_text);
  } else {
    out.tier = tier->name;
    OutcomeOdds odds = PredictOutcome(q);
    pend.outcome_context = odds.context;
    if (q.cacheable && chosen) {
      cached = &CachedDistOf(*chosen, *Find(*chosen));  // SamplesOf(q, ev, odds)'s samples
      EnsureDist(cached);
    } else {
      samples = SamplesOf(q, ev, odds);
      bandwidth = BandwidthFor(samples.size());
    }
    if (options_.explain) {
      for (size_t k = ev.size(); k-- > 0;) {
        const Entry& en = entries_[ev[k].first];
        const EntryInfo& info = entry_info_[ev[k].first];
        out.neighbours.push_back({info.job_id, user_names_[info.user], en.duration_s,
                                  samples[ev.size() - 1 - k].first, ev[k].second, info.finish_s});
      }
      evidence_text =
          fmt::format("{} ({}): {} finished job{}, newest weighted most (x{:.2f} per older job){}",
                      tier->name, Why(*tier), samples.size(), samples.size() == 1 ? "" : "s",
                      options_.recency_decay, odds.text) +
          range_note;
    }
    out.p_complete = odds.p_complete;
  }
  std::shared_ptr<const DurationDistribution> dist =
      cached != nullptr ? cached->dist
                        : std::make_shared<const DurationDistribution>(samples, bandwidth);
  double density_point = -1;  // not wanted: the median
  if (want_point && tier != nullptr && options_.point == PointEstimate::kDensityWindow) {
    density_point =
        DensityPoint(q.user, cached != nullptr ? nullptr : &samples, chosen, /*with_user=*/true);
  }
  Summarise(tier, *dist, cached != nullptr ? cached->n : samples.size(),
            cached != nullptr ? cached->first : samples.front().first, cached, density_point,
            evidence_text, &out);
  if (tier == nullptr && q.semantic) out.estimate.confidence = kSemanticConfidence;
  if (split_ignored && options_.explain) {
    out.estimate.explanation += fmt::format(
        "; workload split ignored: the user's same-resource jobs were within x2 {} times, "
        "same-workload ones {} times",
        resources_hits_, exact_hits_);
  }
  out.estimate.explanation += embed_note;

  if (!job.id.empty()) {
    if (pending_.size() >= kMaxPending) pending_.clear();
    pend.dist = std::move(dist);
    pending_[job.id] = std::move(pend);
  }
  return out;
}

}  // namespace schedmate::advisor
