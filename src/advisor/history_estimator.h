#pragma once
// HistoryEstimator: the advisor's duration estimator. Predicts a job's run time from the finished
// jobs most like it, online (it learns each job when told it finished), and says which past jobs
// it leaned on and why.
//
// Rationale. Users repeat themselves: most GPU jobs are re-runs or small variations of the same
// user's earlier jobs, so the best evidence is the user's own recent finished jobs with the same
// workload and resources; other users' jobs and global statistics are weaker fallbacks. Evidence
// is gathered from the first tier that has any, in this order:
//   1. exact      same user, same workload text, same resources (GPUs, CPUs, nodes, time limit, VC)
//   2. resources  same user, same resources, any workload
//   3. workload   same user, same workload text, same GPUs
//   4. similar    same user, workload text similar by embedding (hashed TF-IDF cosine >=
//                 min_similarity, nearest first), any resources
//   5. user-gpus  same user, same GPU count (the user's recent history in that resource class)
//   6. user       same user, any job
//   7. peers      other users, same workload text and GPUs, then similar workloads
//   8. class      anyone's jobs with the same GPU count (resource class)
//   9. global     anyone's recent jobs
// Workload range: a workload's own recent runs, across users, bound where its run time falls.
// When the chosen tier ignores the workload (resources, user-gpus, user, class, global) and the
// query's workload has at least `workload_range_min_jobs` finished runs spanning (quantiles
// `workload_range_tail` .. 1 - tail of their log2 run times, last `workload_range_window` runs)
// less than `workload_range_narrowing` of the cluster's span, the tier's evidence outside that
// range is set aside; when none is left, the workload's own last `recent` runs (any user) are the
// evidence (tier "workload-range"). A label that says nothing about run time spans about the
// cluster's range and changes nothing. On Venus (Lucid's trace, whose model/dataset labels were
// assigned by run-time class) within x2 went 54.6 -> 57.1 on the first half by time (where the
// parameters were chosen; 8 settings around them all give 59.4-59.8 overall) and 57.1 -> 62.1 on
// the second; the GPW traces have no labels and are unchanged.
// Tier 1 is skipped while it has proven worse than tier 2 online: whenever both had evidence,
// the estimator records which one's point was within x2 of the actual run time once the job
// finished, and uses the workload split only while its record is at least as good (the
// workload text of some traces is a synthetic label that splits a user's history into noise).
// With no finished job of the user and no other user's job of the same workload, a cold start
// from what the job says about itself, in this order: (tier "semantic", confidence 0.1) its
// amount of training (max steps x batch, or epochs x the data set's size) over a throughput
// prior for its model family or parameter count, GPU type and count (config/
// duration_priors.yaml; the explanation lists every assumption), capped by its time limit;
// (tier "cold-start", confidence 0) its time limit times the ratio actual / limit learnt online
// from finished jobs that had one (prior 0.5); else `cold_start`. Only jobs without either go to
// tiers 8 and 9.
//
// Outcome odds. Many jobs end early (failed, cancelled): whether the user's previous job (with the
// same GPU count, else any) completed or ended early, and how long before this submission
// (< 10 min, < 2 h, later), predict strongly whether this one completes (Venus: 0.88 of jobs
// after a completed job resubmitted within 10 min complete, 0.24 after an early end). The
// estimator learns P(completes) per such context online (cluster-wide counts, Laplace prior,
// shrunk towards the user's own counts; none when the job's submit time precedes that end, i.e.
// is unknown) and reports it (DetailedEstimate::p_complete and the
// explanation). With `outcome_mixture` the evidence is reweighted into a mixture: completed
// runs carry P(completes) of the mass, early ends the rest. It is off by default: on the four
// shared traces it moved within x2 by -0.6 to +0.3 points (even the true outcome as an oracle
// adds only 2-4 points: early ends are spread over decades).
//
// The estimate is a distribution (see duration_distribution.h): the tier's last `recent` jobs,
// each scaled by the ratio of work (steps x batch / GPUs) when both jobs state it, weighted by
// `recency_decay`^age (the newest 1), smoothed in log2 space. Its quantiles are recalibrated
// online by a QuantileCalibrator on the PITs of finished jobs, so p10..p90 hold about 80% of
// actual run times. The median and p10/p90 are reported (DurationEstimate::median, low = p10,
// high = p90); the point estimate (DurationEstimate::duration) is one of:
//  - kDensityWindow (default): the centre of the densest factor-2 window of a smoothed density
//    (DensityGrid, kernel `point_bandwidth`), with `over_penalty` on mass more than 2x below it.
//    The density mixes three things, each normalised:
//      the evidence, as weighted above (runs under a thousandth of the newest's weight left
//        out: they cannot move the point);
//      `sequence_weight` x the group's next runs: when the evidence is one group, the runs that
//        followed a run in the same octave (floor log2 s) as the group's newest one, weighted
//        `sequence_decay`^age, used when their weights sum to `sequence_min_weight` (a user
//        whose 2-4 h run is usually followed by another 2-4 h run, or whose crashes come in
//        bursts, says so here);
//      `user_mix` x the user's last runs of any shape (weighted `user_mix_decay`^age), so a
//        group with few runs leans on the user's habits.
//    The point is at least 1 s; the grid's cells are 2^0.25 apart, so the point is one of them.
//    (Chosen in a pure-Python prototype on Helios and Philly GPW; Venus and Theta, not looked
//    at, gained as much: see the README.)
//  - kWindowMode: the same window over the evidence's raw runs (no smoothing, no mixture);
//  - kMedian: the calibrated median.
// The tier-1-vs-tier-2 comparison uses the same rule on each group alone (no user mixture).
// EstimateDistribution skips the point (the median stands in): the schedmate policy reads only
// the distribution.
// The confidence grows with the tier's strength and evidence count and shrinks with the spread
// p90/p10. The explanation names the tier, the evidence, the quantiles and what was learnt.
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

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "advisor/density_grid.h"
#include "advisor/duration_distribution.h"
#include "advisor/duration_priors.h"
#include "advisor/fingerprint.h"
#include "core/duration_estimator.h"
#include "core/job.h"
#include "text/hashing_embedder.h"
#include "text/vector_index.h"

namespace schedmate::advisor {

enum class PointEstimate : uint8_t { kDensityWindow, kWindowMode, kMedian };

struct HistoryEstimatorOptions {
  size_t recent = 32;          // evidence per tier: the last `recent` jobs of the group
  double recency_decay = 0.7;  // weight of the k-th newest evidence job: decay^k
  PointEstimate point = PointEstimate::kDensityWindow;
  double over_penalty = 0.5;  // window points: cost of mass > 2x below the point
  double bandwidth = 0.6;     // kernel scale in log2 units (widened for few samples)
  // kDensityWindow (see above): its kernel (log2 units), the next-run evidence and the user's
  // other runs. A weight of 0 turns that part off.
  double point_bandwidth = 0.45;
  double sequence_weight = 0.5;
  double sequence_decay = 0.97;
  double sequence_min_weight = 3;
  double user_mix = 0.2;
  double user_mix_decay = 0.97;
  int64_t calibrate_after = 50;  // finished predictions before quantiles are recalibrated
  double min_similarity = 0.8;   // tier "similar"/"peers": cosine threshold (hashing vectors)
  // The same threshold for the external embedder's vectors (a semantic model's cosines sit on
  // another scale); below 0: min_similarity. A fallback to hashing uses min_similarity.
  double external_min_similarity = -1;
  size_t similar_k = 8;  // workloads considered in the similarity tiers
  size_t embedding_dimension = 128;
  Duration cold_start = Duration::Hours(1);
  // Outcome mixture: evidence jobs that completed and jobs that ended early (failed, cancelled,
  // preempted, node failure) are weighted by the predicted P(completes) of the query (see
  // above). false: every evidence job keeps its recency weight.
  bool outcome_mixture = false;
  // Cold start from the job's description (steps or epochs, model, GPUs: duration_priors.h)
  // before the other users' same-size jobs (tiers class and global) and the flat default.
  bool semantic_cold_start = true;
  // Pseudo-counts of the cluster-wide odds in a user's own odds (shrinkage).
  double outcome_prior_strength = 4;
  // Workload range (see above): on/off, tail quantile, runs kept per workload (and cluster-
  // wide), runs needed, and the span ratio below which a workload's range is used.
  bool workload_range = true;
  double workload_range_tail = 0.02;
  size_t workload_range_window = 256;
  size_t workload_range_min_jobs = 20;
  double workload_range_narrowing = 0.8;
  // false: no explanation text and no neighbours (the simulator reads only the numbers, which
  // are the same either way).
  bool explain = true;
};

// One evidence tier: its name and the confidence ceiling of its evidence.
struct TierSpec {
  const char* name;
  double strength;
};

// What the estimator expects of the job's outcome, from the user's previous job.
struct OutcomeOdds {
  double p_complete = -1;  // P(the job completes), -1: no basis (no reweighting)
  int context = -1;        // index of the (previous outcome, gap) context, -1: none
  std::string text;        // for the explanation
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
  DurationEstimate estimate;               // duration = the point, low/high = p10/p90
  std::string tier;                        // "exact", "resources", ..., "global", "cold-start"
  std::vector<Evidence> neighbours;        // the evidence, most recent first
  double p10_s = 0, p50_s = 0, p90_s = 0;  // calibrated quantiles
  double p_complete = -1;                  // OutcomeOdds::p_complete used (-1: none)
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
  // Skips the point estimate (kDensityWindow's costs about 1 us): duration = the median.
  DurationEstimate EstimateDistribution(const JobRecord& job, SimTime now) override;
  void Observe(const JobRecord& job, SimTime finish) override;

  // With an explicit fingerprint (e.g. from extracted metadata).
  DetailedEstimate EstimateDetailed(const JobRecord& job, const JobFingerprint& fp) {
    return EstimateWith(job, fp, /*want_point=*/true);
  }
  void ObserveWithFingerprint(const JobRecord& job, SimTime finish, const JobFingerprint& fp);

  size_t observed() const { return entries_.size(); }
  // Finished predictions the quantile calibration has learnt from.
  int64_t calibration_samples() const { return calibrator_.samples(); }

 private:
  // What every estimate reads of a past job, apart from what only explanations name.
  struct Entry {
    double duration_s;  // at least 1
    double log2_s;      // log2(duration_s)
    double work;
    uint8_t outcome;  // kOutcome* in history_estimator.cc
  };
  struct EntryInfo {
    std::string job_id;
    uint32_t user;  // index into user_names_
    int64_t finish_s;
  };
  // An evidence group: its kind and the parts of the job it is keyed on (the others 0). Users,
  // VCs, resource shapes and workloads are interned once per call into dense ids.
  enum class GroupKind : uint8_t {
    kExact,         // user, workload, resource shape
    kResources,     // user, resource shape
    kWorkload,      // user, workload, GPUs
    kUserWorkload,  // user, workload (the similar tier)
    kUserGpus,      // user, GPUs
    kUser,          // user
    kPeers,         // workload, GPUs
    kAnyWorkload,   // workload (the similar peers tier)
    kClass,         // GPUs
    kGlobal,
  };
  struct GroupKey {
    GroupKind kind;
    uint32_t user = 0, fid = 0, res = 0;
    int64_t gpus = 0;
    bool operator==(const GroupKey&) const = default;
  };
  struct GroupKeyHash {
    size_t operator()(const GroupKey& k) const;
  };
  // A job's resource shape: everything it asked the scheduler for.
  struct ResourceShape {
    int64_t gpus_milli;
    int32_t cpus, nodes;
    int64_t limit_s;  // -1: none
    uint32_t vc;
    bool operator==(const ResourceShape&) const = default;
  };
  struct ResourceShapeHash {
    size_t operator()(const ResourceShape& r) const;
  };
  // The last `capacity` values pushed, oldest first (a ring once full).
  template <typename T>
  class Ring {
   public:
    void Push(T value, size_t capacity) {
      ++pushed_;
      if (items_.size() < capacity) {
        items_.push_back(value);
        return;
      }
      items_[head_] = value;  // replaces the oldest
      head_ = static_cast<uint32_t>((head_ + 1) % items_.size());
    }
    size_t size() const { return items_.size(); }
    bool empty() const { return items_.empty(); }
    T operator[](size_t i) const {  // i < size(); head_ < size() (no division needed)
      const size_t j = head_ + i;
      return items_[j < items_.size() ? j : j - items_.size()];
    }
    // Values pushed so far: item i (oldest first) was the (pushed() - size() + i)-th.
    uint32_t pushed() const { return pushed_; }
    // In storage order (not oldest first).
    const std::vector<T>& stored() const { return items_; }

   private:
    std::vector<T> items_;
    uint32_t head_ = 0;  // the oldest once full
    uint32_t pushed_ = 0;
  };
  // One run of a group as the density grid reads it: where it lands and its octave (floor
  // log2 s).
  struct GridItem {
    DensityGrid::Position at;
    int8_t octave;
  };
  // A group's item: the entry index (what it converts to) and the run's GridItem, kept beside
  // it so a group's density is read from the group alone.
  struct GroupItem {
    uint32_t entry;
    GridItem grid;
    operator uint32_t() const { return entry; }  // NOLINT(google-explicit-constructor)
  };
  // The last `recent` runs of a group.
  using Group = Ring<GroupItem>;
  // Groups by key: open addressing with linear probing (power-of-two slots, at most half
  // full), the group held in its slot, so a lookup touches one cache line before the items.
  class GroupTable {
   public:
    const Group* Find(const GroupKey& key) const;
    Group& FindOrAdd(const GroupKey& key);

   private:
    struct Slot {
      GroupKey key{GroupKind::kGlobal};
      bool used = false;
      Group group;
    };
    size_t SlotOf(const GroupKey& key) const;  // its slot, or the empty one it would take
    void Grow();
    std::vector<Slot> slots_;
    size_t used_ = 0;
  };
  // The submit-time view of one query.
  struct Query {
    const JobRecord& job;
    const JobFingerprint& fp;
    uint32_t fid = UINT32_MAX;  // UINT32_MAX: workload never seen
    uint32_t user = 0, res = 0;
    int64_t gpus = 0;  // milli-GPUs
    bool has_limit = false;
    // The samples of a one-group tier depend on the group alone (no work scaling, no outcome
    // mixture) and no explanation is wanted: distributions may come from dist_cache_.
    bool cacheable = false;
    std::optional<SemanticEstimate> semantic;  // from the job's description (cold start)
  };
  // A one-group tier's distribution by (group key, the group's newest entry, which fixes its
  // content), with its window-mode point and where its quantiles were last found.
  // One evidence job of a cached distribution: its group ordinal (Group::pushed() order).
  struct SortedSample {
    double duration_s, log2_s;
    uint32_t ordinal;
  };
  static constexpr double kNoRoot = std::numeric_limits<double>::quiet_NaN();
  struct CachedDist {
    GroupKey key{GroupKind::kGlobal};
    uint32_t newest = UINT32_MAX;
    // The group's evidence by duration, equal durations newest first (the distribution's
    // order): a newer version of the group updates it by its few new and dropped jobs.
    std::vector<SortedSample> sorted;
    // The distribution's samples (log2 s) and normalised weights, in that order.
    std::vector<double> log2, weight;
    // Made from log2/weight when an estimate needs its quantiles (EnsureDist); null until then.
    std::shared_ptr<const DurationDistribution> dist;
    size_t n = 0;      // samples
    double first = 0;  // the first sample (seconds)
    // The group's own point (kWindowMode: WindowMode; kDensityWindow: without the user mix),
    // for the tier-1-vs-tier-2 check; < 0 until PointOfCached computes it.
    double point = -1;
    double roots[3] = {kNoRoot, kNoRoot, kNoRoot};  // log2 s of p10/p50/p90 last time
  };
  static constexpr size_t kDistCacheSize = 16384;  // direct-mapped by key hash

  using Items = std::vector<std::pair<uint32_t, float>>;   // (entry, similarity)
  using Samples = std::vector<std::pair<double, double>>;  // (seconds, weight)
  // What an estimate left to learn from once its job finishes (keyed by job id).
  struct Pending {
    std::shared_ptr<const DurationDistribution> dist;  // the predicted distribution
    double exact_point = 0, resources_point = 0;       // both > 0 when both tiers had evidence
    int outcome_context = -1;
  };
  // The last `capacity` log2 run times of a workload (or of the cluster), and their range
  // (quantiles tail .. 1 - tail), recomputed when kRangeRefresh runs arrived since, or on any new
  // run while the ring is filling.
  class RangeRing {
   public:
    void Push(double log2_s, size_t capacity) { values_.Push(log2_s, capacity); }
    size_t size() const { return values_.size(); }
    std::pair<double, double> Range(double tail);

   private:
    static constexpr uint32_t kRangeRefresh = 16;
    Ring<double> values_;
    std::vector<double> scratch_;
    uint32_t computed_at_ = 0;
    std::pair<double, double> range_{0, 0};
  };
  // Per (previous outcome, gap since it ended) context: completed and total counts.
  struct OddsCell {
    double completed = 0, total = 0;
  };
  static constexpr int kContexts = 6;
  using OddsTable = std::array<OddsCell, kContexts>;
  // EstimateDetailed; without want_point the point is the median (EstimateDistribution).
  DetailedEstimate EstimateWith(const JobRecord& job, const JobFingerprint& fp, bool want_point);
  uint32_t FingerprintId(const std::string& workload, bool create);
  uint32_t UserId(const std::string& user);
  uint32_t ResourceId(const JobRecord& job);
  void Push(const GroupKey& key, GroupItem item);
  const Group* Find(const GroupKey& key) const;
  // Sets *note when the external embedder failed and the hashing index was used instead.
  std::vector<std::pair<uint32_t, float>> SimilarFingerprints(const std::string& workload,
                                                              std::string* note);
  Result<std::vector<std::pair<uint32_t, float>>> ExternalSimilar(const std::string& workload);
  // The evidence of the first tier that has any (nullptr tier: none). Fills pend's tier points,
  // whether the workload split was ignored, and the embedder note.
  // *chosen: the group of a one-group tier (unchanged when the evidence is pooled or none).
  const TierSpec* GatherEvidence(const Query& q, Items* ev, Pending* pend, bool* split_ignored,
                                 std::string* embed_note, std::optional<GroupKey>* chosen);
  // The cached distribution of a group's evidence (q.cacheable), made on a miss.
  CachedDist& CachedDistOf(const GroupKey& key, const Group& group);
  // Brings c.sorted (of group `key`'s earlier items, or anything when c.key != key) to the
  // group's current evidence.
  void UpdateSorted(const GroupKey& key, const Group& group, CachedDist* c) const;
  // c->log2/weight: what DurationDistribution(SamplesOf(q, items, {}), ...) holds for unscaled
  // samples, from c->sorted of a group that has pushed `pushed` entries.
  void UnscaledSamples(uint32_t pushed, CachedDist* c) const;
  // c->point, computed on first use.
  double PointOfCached(CachedDist* c) const;
  // c->dist, made on first use.
  const DurationDistribution& EnsureDist(CachedDist* c) const;
  // Evidence -> (work-scaled seconds, weight): newest weight 1, older x recency_decay each,
  // reweighted by outcome class when odds.p_complete >= 0.
  Samples SamplesOf(const Query& q, const Items& ev, const OutcomeOdds& odds) const;
  // The point of evidence samples s (seconds) of group `key` (the tier-1-vs-tier-2 check).
  double PointOf(const Query& q, const Samples& s, const GroupKey& key) const;
  // kDensityWindow (seconds). `samples` null: the evidence is group *chosen's own. Else the
  // samples, with the next runs of *chosen when there is one group. with_user: mixed with the
  // user's runs (the estimate's point; the tier-1-vs-tier-2 check compares the groups alone).
  double DensityPoint(uint32_t user, const Samples* samples, const std::optional<GroupKey>& chosen,
                      bool with_user) const;
  // One run in a density: where it lands and its weight.
  struct Run {
    DensityGrid::Position at;
    double weight;
  };
  // The group's runs newest first, weighted decay^age (those below kNegligibleWeight left out).
  void RunsOf(const Group& group, double decay, std::vector<Run>* runs) const;
  // Adds `scale` x the density of `runs` (mass 1) mixed with the next runs of `sequence` (may
  // be null; see kDensityWindow above) to *grid.
  void AddDensity(const std::vector<Run>& runs, const Group* sequence, double scale,
                  DensityGrid* grid) const;
  double BandwidthFor(size_t n) const;
  // The workload range's restriction of a workload-blind tier's evidence (see above). Returns
  // the tier the evidence now is; clears *chosen when the evidence is no longer one group's.
  const TierSpec* RestrictToWorkloadRange(const Query& q, const TierSpec* tier, Items* ev,
                                          std::optional<GroupKey>* chosen, std::string* text);
  OutcomeOdds PredictOutcome(const Query& q) const;
  void LearnOutcome(uint32_t user, uint8_t outcome, int context);
  // No evidence: the job's time limit, else the default. Sets samples, bandwidth and text.
  void ColdStart(const Query& q, Samples* samples, double* bandwidth, std::string* text) const;
  // Quantiles, point, confidence and explanation from the final distribution.
  // `cached` (may be null): the window point and quantile start points of a cached dist.
  // `density_point`: kDensityWindow's point in seconds, < 0 when not wanted (the point is then
  // the median).
  void Summarise(const TierSpec* tier, const DurationDistribution& dist, size_t n_samples,
                 double first_sample, CachedDist* cached, double density_point,
                 const std::string& evidence_text, DetailedEstimate* out) const;

  HistoryEstimatorOptions options_;
  std::vector<Entry> entries_;
  std::vector<EntryInfo> entry_info_;  // same index as entries_
  GroupTable groups_;
  std::unordered_map<std::string, uint32_t> fp_ids_;
  std::vector<std::string> fp_texts_;
  std::unordered_map<std::string, uint32_t> user_ids_;
  std::vector<std::string> user_names_;
  std::unordered_map<std::string, uint32_t> vc_ids_;
  std::unordered_map<ResourceShape, uint32_t, ResourceShapeHash> resource_ids_;
  std::unordered_map<std::string, Pending> pending_;
  std::vector<CachedDist> dist_cache_;  // kDistCacheSize slots once used
  KernelTable point_kernel_;
  mutable std::vector<Run> run_scratch_, next_scratch_;  // DensityPoint's working lists
  // The newest finished job per (user, GPUs) (kUserGpus) and per user (kUser): (outcome, finish
  // seconds).
  std::unordered_map<GroupKey, std::pair<uint8_t, int64_t>, GroupKeyHash> last_outcome_;
  OddsTable odds_{};
  std::unordered_map<uint32_t, OddsTable> user_odds_;
  QuantileCalibrator calibrator_;
  int64_t exact_hits_ = 0, resources_hits_ = 0;  // tier 1 vs tier 2, within x2
  std::deque<double> limit_ratios_;              // recent actual / time limit, at most 256
  std::vector<RangeRing> workload_runs_;         // by fingerprint id (non-empty workloads)
  RangeRing cluster_runs_;
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
