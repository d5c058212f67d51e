#include "policy/schedmate_policy.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "policy/placer.h"

namespace schedmate::policy {
namespace {

constexpr int64_t kMinEstimateUs = 1'000'000;  // 1 s: ranks stay positive

// Running jobs that may be preempted. Their order ("victim order") is decreasing preemption gain
// (rank - cost; ties: latest start first; run_seq is unique among running jobs). A wider job's
// search needs only the set of victims whose gain exceeds its rank and, per node, their order,
// so the victims stay in insertion order and the whole order is made once per call, only when
// a job of at most one node searches. A victim is addressed by its id (insertion position).
class VictimQueue {
 public:
  struct Victim {
    double gain;  // rank - cost (s)
    double cost;  // preemption cost (s)
    int64_t run_seq;
    const JobView* view;
    int32_t gpus;
    bool used;  // preempted in this call
  };
  static constexpr size_t kNone = static_cast<size_t>(-1);
  static bool Before(const Victim& a, const Victim& b) {  // the victim order
    return a.gain != b.gain ? a.gain > b.gain : a.run_seq > b.run_seq;
  }
  void Add(const JobView* view, double gain, double cost) {
    all_.push_back({gain, cost, view->status->run_seq, view, view->gpus(), false});
    first_unused_known_ = false;
  }
  void Reserve(size_t n) { all_.reserve(n); }
  size_t size() const { return all_.size(); }
  const Victim& operator[](size_t id) const { return all_[id]; }
  void MarkUsed(size_t id) {
    all_[id].used = true;
    first_unused_known_ = false;
  }
  // Gain of the first victim in the order not preempted in this call (-1 if none).
  double TopGain() {
    const size_t u = FirstUnused();
    return u == kNone ? -1.0 : all_[u].gain;
  }
  // GPUs of the victims whose gain exceeds `service`, counted from the first unused victim on
  // in the order (those before it are all used).
  int64_t GpusFromFirstUnused(double service) {
    const size_t u = FirstUnused();
    int64_t sum = 0;
    for (const Victim& v : all_) {
      if (v.gain > service && !Before(v, all_[u])) sum += v.gpus;
    }
    return sum;
  }
  // All victim ids in the victim order (sorted on first use in the call).
  const std::vector<size_t>& Ordered() {
    if (ordered_.size() != all_.size()) {
      ordered_.resize(all_.size());
      for (size_t i = 0; i < all_.size(); ++i) ordered_[i] = i;
      std::sort(ordered_.begin(), ordered_.end(),
                [&](size_t a, size_t b) { return Before(all_[a], all_[b]); });
    }
    return ordered_;
  }

 private:
  size_t FirstUnused() {
    if (!first_unused_known_) {
      first_unused_ = kNone;
      for (size_t i = 0; i < all_.size(); ++i) {
        if (!all_[i].used && (first_unused_ == kNone || Before(all_[i], all_[first_unused_]))) {
          first_unused_ = i;
        }
      }
      first_unused_known_ = true;
    }
    return first_unused_;
  }
  std::vector<Victim> all_;
  std::vector<size_t> ordered_;
  size_t first_unused_ = kNone;
  bool first_unused_known_ = false;
};

// Running jobs holding GPUs, by rank: when the running jobs (in increasing rank) would have freed
// `need` GPUs. Ordered lazily from a heap as far as queries need (they ask for few GPUs); the
// answer, the least rank whose jobs up to it hold `need` GPUs, does not depend on tie order.
class FreedByRank {
 public:
  void Reserve(size_t n) { heap_.reserve(n); }
  void Add(double rank_s, int64_t gpus) { heap_.push_back({rank_s, gpus}); }
  void Build() { std::make_heap(heap_.begin(), heap_.end(), std::greater<>()); }
  // Rank (s) by which `need` GPUs are freed; infinity if the running jobs hold fewer.
  double WaitFor(int64_t need) {
    while (!heap_.empty() && (sorted_.empty() || sorted_.back().second < need)) {
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      const int64_t sum = (sorted_.empty() ? 0 : sorted_.back().second) + heap_.back().second;
      sorted_.push_back({heap_.back().first, sum});
      heap_.pop_back();
    }
    const auto freed = std::lower_bound(
        sorted_.begin(), sorted_.end(), need,
        [](const std::pair<double, int64_t>& e, int64_t n) { return e.second < n; });
    return freed == sorted_.end() ? std::numeric_limits<double>::infinity() : freed->first;
  }

 private:
  std::vector<std::pair<double, int64_t>> heap_;    // (rank s, GPUs)
  std::vector<std::pair<double, int64_t>> sorted_;  // (rank s, GPUs freed by then)
};

bool Contains(const std::vector<JobIndex>& v, JobIndex j) {
  return std::find(v.begin(), v.end(), j) != v.end();
}

bool SingleNode(const VictimQueue::Victim& v) {
  return v.view->status->placement.nodes.size() == 1;
}

// For a job of at most one node, given the candidate victims in the victim order: on each node,
// take its single-node victims in decreasing gain until the job fits; the node with the largest
// saved - lost wins (ties: lowest index).
std::vector<size_t> NodeVictims(int32_t gpus, double rank, double wait, const FreeMap& free,
                                const VictimQueue& q, const std::vector<size_t>& cands) {
  struct NodeTake {
    int32_t released = 0;
    double lost = 0;
    double min_rank = std::numeric_limits<double>::infinity();
  };
  std::vector<NodeTake> at(static_cast<size_t>(free.nodes()));
  for (size_t i : cands) {
    if (!SingleNode(q[i])) continue;
    const NodeShare& ns = q[i].view->status->placement.nodes.front();
    NodeTake& t = at[static_cast<size_t>(ns.node)];
    if (free.Free(ns.node) + t.released >= gpus) continue;  // enough already
    t.released += ns.gpus;
    t.lost += rank + q[i].cost;
    t.min_rank = std::min(t.min_rank, q[i].gain + q[i].cost);
  }
  int32_t best = -1;
  double best_net = 0;
  for (int32_t n = 0; n < free.nodes(); ++n) {
    const NodeTake& t = at[static_cast<size_t>(n)];
    if (!free.IsUp(n) || t.released == 0 || free.Free(n) + t.released < gpus) continue;
    const double net = std::min(t.min_rank, wait) - t.lost;
    if (net > best_net) {
      best = n;
      best_net = net;
    }
  }
  std::vector<size_t> chosen;
  if (best < 0) return chosen;
  int32_t released = 0;
  for (size_t k = 0; k < cands.size() && free.Free(best) + released < gpus; ++k) {
    const size_t i = cands[k];
    if (!SingleNode(q[i])) continue;
    const NodeShare& ns = q[i].view->status->placement.nodes.front();
    if (ns.node != best) continue;
    released += ns.gpus;
    chosen.push_back(i);
  }
  return chosen;
}

// Working memory of WideVictims, reused by the blocked jobs of a call. The coverable nodes (those
// all of whose occupants are candidates) get slots in increasing node order; per slot: where its
// victims start in `on` (grouped by node, each group in the victim order), its loss (rank + cost
// over its victims not taken yet) and how many of those are left.
struct WideScratch {
  struct Share {
    size_t victim;
    size_t node;
    int32_t gpus;
  };
  std::vector<Share> shares;
  std::vector<int32_t> victim_gpus;  // by node
  std::vector<int32_t> slot;         // by node, -1: not coverable
  std::vector<int32_t> slot_node;    // by slot
  std::vector<size_t> start, fill, left, on;
  std::vector<double> add;
  // The greedy's nodes: (loss, node) of the 4k + 16 slots of least loss at the start; `at` is
  // each slot's place there (-1: not there or cleared).
  std::vector<std::pair<double, int32_t>> keep;
  std::vector<double> loss;  // LeastLoss's selection buffer
  std::vector<int32_t> at;
  std::vector<uint8_t> is_chosen;  // by victim id
};

// The slots of the coverable nodes (shares' GPUs on a node equal to its used GPUs), in node order.
void CoverableSlots(WideScratch& s, const FreeMap& free) {
  const int32_t g = free.gpus_per_node();
  s.slot.assign(s.victim_gpus.size(), -1);
  s.slot_node.clear();
  for (size_t n = 0; n < s.victim_gpus.size(); ++n) {
    const auto node = static_cast<int32_t>(n);
    // A node without candidates' GPUs is idle or not coverable.
    if (s.victim_gpus[n] == 0 || !free.IsUp(node) || free.Free(node) == g) continue;
    if (g - free.Free(node) == s.victim_gpus[n]) {
      s.slot[n] = static_cast<int32_t>(s.slot_node.size());
      s.slot_node.push_back(node);
    }
  }
}

// Groups the candidates' shares on coverable nodes by slot (s.start / s.on), each group in the
// victim order, and sets each slot's loss (summed in that order) and its count of victims.
void GroupBySlot(WideScratch& s, double rank, const VictimQueue& q) {
  const size_t slots = s.slot_node.size();
  s.start.assign(slots + 1, 0);
  for (const WideScratch::Share& sh : s.shares) {
    if (s.slot[sh.node] >= 0) ++s.start[static_cast<size_t>(s.slot[sh.node]) + 1];
  }
  for (size_t k = 0; k < slots; ++k) s.start[k + 1] += s.start[k];
  s.on.resize(s.start[slots]);
  s.fill.assign(s.start.begin(), s.start.end() - 1);
  for (const WideScratch::Share& sh : s.shares) {
    if (s.slot[sh.node] >= 0) s.on[s.fill[static_cast<size_t>(s.slot[sh.node])]++] = sh.victim;
  }
  s.add.assign(slots, 0);
  s.left.assign(slots, 0);
  for (size_t k = 0; k < slots; ++k) {
    const auto first = s.on.begin() + static_cast<std::ptrdiff_t>(s.start[k]);
    const auto last = s.on.begin() + static_cast<std::ptrdiff_t>(s.start[k + 1]);
    if (last - first > 1) {
      std::sort(first, last, [&](size_t a, size_t b) { return VictimQueue::Before(q[a], q[b]); });
    }
    for (auto it = first; it != last; ++it) s.add[k] += rank + q[*it].cost;
    s.left[k] = s.start[k + 1] - s.start[k];
  }
}

// The `n` least (loss, node) pairs of the slots (s.keep, n >= 1) and each slot's place there
// (s.at): the n-th least loss by selection, then the slots below it and, in node order, those
// at it until n are kept (the pairs are distinct, so this is a full sort's prefix as a set).
void LeastLoss(WideScratch& s, size_t n) {
  s.loss.assign(s.add.begin(), s.add.end());
  std::nth_element(s.loss.begin(), s.loss.begin() + static_cast<std::ptrdiff_t>(n - 1),
                   s.loss.end());
  const double nth = s.loss[n - 1];
  size_t below = 0;
  for (double a : s.add) below += a < nth ? 1 : 0;
  s.keep.clear();
  s.at.assign(s.slot_node.size(), -1);
  size_t at_nth = n - below;  // slots at the n-th loss still to keep
  for (size_t k = 0; k < s.slot_node.size(); ++k) {
    bool take = s.add[k] < nth;
    if (!take && s.add[k] == nth && at_nth > 0) {
      take = true;
      --at_nth;
    }
    if (take) {
      s.at[k] = static_cast<int32_t>(s.keep.size());
      s.keep.push_back({s.add[k], s.slot_node[k]});
    }
  }
}

// For a wider job, given the candidate victims (any order): ceil(gpus / G) idle nodes, first
// those already idle, then nodes all of whose occupants are victims, taken one node at a time by
// least added loss (a victim already taken adds none; ties: lowest index; among the 4k + 16
// nodes of least loss at the start, k the nodes still needed, which bounds a call's cost on
// large partitions); a multi-node victim frees all its nodes; on a node its victims are taken
// in the victim order. Saved: min(wait, least victim rank); lost: rank + cost per victim. None
// when it does not pay.
std::vector<size_t> WideVictims(int32_t gpus, double rank, double wait, const FreeMap& free,
                                const VictimQueue& q, const std::vector<size_t>& cands,
                                WideScratch& s) {
  const int32_t g = free.gpus_per_node();
  const auto want = static_cast<size_t>((gpus + g - 1) / g);
  size_t idle = static_cast<size_t>(free.CountWithFree(g));
  if (idle >= want) return {};
  // Cheap bound first: the nodes still needed take at least ceil(needed / widest victim's
  // nodes) victims, each losing at least rank + the least cost; saved is at most `wait`.
  // One pass over the candidates' placements (each a chain of pointers), flattened for the
  // passes below.
  s.shares.clear();
  size_t widest = 0;
  double least_cost = std::numeric_limits<double>::infinity();
  for (size_t i : cands) {
    const std::vector<NodeShare>& on_nodes = q[i].view->status->placement.nodes;
    widest = std::max(widest, on_nodes.size());
    least_cost = std::min(least_cost, q[i].cost);
    for (const NodeShare& ns : on_nodes)
      s.shares.push_back({i, static_cast<size_t>(ns.node), ns.gpus});
  }
  if (widest == 0) return {};
  if (static_cast<double>((want - idle + widest - 1) / widest) * (rank + least_cost) >= wait) {
    return {};
  }
  s.victim_gpus.assign(static_cast<size_t>(free.nodes()), 0);
  for (const WideScratch::Share& sh : s.shares) s.victim_gpus[sh.node] += sh.gpus;
  CoverableSlots(s, free);
  if (idle + s.slot_node.size() < want) return {};
  GroupBySlot(s, rank, q);
  LeastLoss(s, std::min(s.slot_node.size(), 4 * (want - idle) + 16));
  std::vector<size_t> chosen;
  s.is_chosen.assign(q.size(), 0);
  double saved = wait, lost = 0;
  while (idle < want) {
    // The node of least loss among those kept and not cleared (ties: lowest index).
    const std::pair<double, int32_t>* best = nullptr;
    for (size_t k = 0; k < s.keep.size(); ++k) {
      const auto& e = s.keep[k];
      if (s.at[static_cast<size_t>(s.slot[static_cast<size_t>(e.second)])] ==
              static_cast<int32_t>(k) &&
          (best == nullptr || e < *best)) {
        best = &e;
      }
    }
    if (best == nullptr) break;
    const auto b = static_cast<size_t>(s.slot[static_cast<size_t>(best->second)]);
    for (size_t k = s.start[b]; k < s.start[b + 1]; ++k) {
      const size_t i = s.on[k];
      if (s.is_chosen[i]) continue;
      s.is_chosen[i] = 1;
      chosen.push_back(i);
      lost += rank + q[i].cost;
      saved = std::min(saved, q[i].gain + q[i].cost);
      // saved only falls and lost only grows (rank > 0, costs >= 0): it will not pay.
      if (saved <= lost) return {};
      // Every node of the victim loses it: a node whose victims are all taken is idle (a
      // multi-node victim may clear nodes beyond `best`).
      for (const NodeShare& ns : q[i].view->status->placement.nodes) {
        const int32_t slot = s.slot[static_cast<size_t>(ns.node)];
        if (slot < 0 || s.left[static_cast<size_t>(slot)] == 0) continue;
        const auto k_slot = static_cast<size_t>(slot);
        s.add[k_slot] -= rank + q[i].cost;
        if (--s.left[k_slot] == 0) {
          ++idle;
          s.at[k_slot] = -1;
        } else if (s.at[k_slot] >= 0) {
          s.keep[static_cast<size_t>(s.at[k_slot])].first = s.add[k_slot];
        }
      }
    }
  }
  if (idle < want || saved <= lost) return {};
  return chosen;
}

// Victims of `q` (jobs whose rank exceeds `rank` by more than their cost, not preempted and not
// given a co-runner in this call) to preempt so that a job of `gpus` GPUs and Gittins rank
// `rank` can start, or none. The exchange argument for mean JCT: preempting victims V lets the
// job start now instead of when the first of them would end (it saves about min rank(V), at
// most `wait`) and delays each victim by the job's run time plus its own preemption cost (it
// loses sum over V of rank + cost(v)); preempt only when saved > lost, where saved - lost is
// largest.
std::vector<size_t> ChooseVictims(int32_t gpus, double rank, double wait, const FreeMap& free,
                                  VictimQueue& q, const std::vector<JobIndex>& taken,
                                  WideScratch& scratch) {
  const auto usable = [&](size_t i) {
    return q[i].gain > rank && !q[i].used && !Contains(taken, q[i].view->index);
  };
  std::vector<size_t> cands;
  if (gpus <= free.gpus_per_node()) {
    for (size_t i : q.Ordered()) {
      if (!(q[i].gain > rank)) break;  // the order is by decreasing gain
      if (usable(i)) cands.push_back(i);
    }
    return NodeVictims(gpus, rank, wait, free, q, cands);
  }
  for (size_t i = 0; i < q.size(); ++i) {
    if (usable(i)) cands.push_back(i);
  }
  return WideVictims(gpus, rank, wait, free, q, cands, scratch);
}

}  // namespace

SchedmatePolicy::SchedmatePolicy(const PolicyConfig& config, SchedmateOptions options)
    : config_(config),
      opt_(options),
      index_([this](const JobView& v, SimTime now) {
        EnsureEstimate(v, now);
        const auto rank_ms = static_cast<int64_t>(RankOrEtaSeconds(v, now) * 1e3);
        return std::make_pair(int64_t{v.status->failure_restarts > 0 ? 0 : 1}, rank_ms * v.gpus());
      }),
      model_(config.colocation ? config.colocation : &fallback_model_),
      cache_(*model_) {}

void SchedmatePolicy::OnJobFinished(const JobRecord& job, SimTime) {
  auto it = index_of_.find(&job);
  if (it == index_of_.end()) return;  // another partition's job
  RankerOf(it->second)
      .Observe(static_cast<double>(job.duration.micros()) /
               static_cast<double>(jobs_[it->second].estimate_us));
  index_of_.erase(it);
}

int SchedmatePolicy::SpreadLevel(double log_spread) {
  int level = 0;
  while (level + 1 < kSpreadLevels && log_spread >= kSpreadEdges[level]) ++level;
  return level;
}

GittinsRanker& SchedmatePolicy::RankerOf(JobIndex j) {
  const int shape = jobs_[j].shape;
  if (!rankers_.empty() && rankers_[static_cast<size_t>(shape)]) {
    return *rankers_[static_cast<size_t>(shape)];  // made already (every call but the first)
  }
  return MakeRanker(shape);
}

GittinsRanker& SchedmatePolicy::MakeRanker(int shape) {
  if (rankers_.empty()) rankers_.resize(kPointShape + 1);
  auto& r = rankers_[static_cast<size_t>(shape)];
  if (!r && shape == kPointShape) {
    r = std::make_unique<GittinsRanker>();  // a point estimate: one pseudo-sample at R = 1
  } else if (!r) {
    // Prior: the two-piece log-normal whose p10 and p90 sit at the level's typical spreads
    // below and above the median; ten pseudo-samples at its deciles' midpoints, weight 2 in all.
    const double z90 = 1.2815515655446004;
    const double lo = kSpreadTypical[shape / kSpreadLevels] / z90;
    const double hi = kSpreadTypical[shape % kSpreadLevels] / z90;
    static constexpr double kZ[10] = {-1.6449, -1.0364, -0.6745, -0.3853, -0.1257,
                                      0.1257,  0.3853,  0.6745,  1.0364,  1.6449};
    std::vector<PriorSample> prior;
    for (double z : kZ) prior.push_back({std::exp(z * (z < 0 ? lo : hi)), 0.2});
    r = std::make_unique<GittinsRanker>(prior);
  }
  return *r;
}

void SchedmatePolicy::EnsureEstimate(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) < jobs_.size() && jobs_[v.index].estimate_us >= 0) return;
  FirstEstimate(v, now);
}

void SchedmatePolicy::FirstEstimate(const JobView& v, SimTime now) {
  if (static_cast<size_t>(v.index) >= jobs_.size()) jobs_.resize(v.index + 1);
  JobEntry& entry = jobs_[v.index];
  Duration est = Duration::Hours(1);
  int shape = kPointShape;  // else spread level below x kSpreadLevels + level above
  if (config_.estimator) {
    const DurationEstimate e = opt_.use_distribution
                                   ? config_.estimator->EstimateDistribution(*v.record, now)
                                   : config_.estimator->Estimate(*v.record, now);
    est = e.duration;
    // The predictive distribution: scale = its median, shape = how far p10 and p90 lie from it.
    if (opt_.use_distribution && e.median > Duration::Zero()) {
      est = e.median;
      const auto m = static_cast<double>(std::max(kMinEstimateUs, e.median.micros()));
      const auto lo = static_cast<double>(std::max(kMinEstimateUs / 1000, e.low.micros()));
      const auto hi = static_cast<double>(std::max(kMinEstimateUs / 1000, e.high.micros()));
      shape = SpreadLevel(std::log(m / std::min(m, lo))) * kSpreadLevels +
              SpreadLevel(std::log(std::max(m, hi) / m));
    }
  } else if (v.record->estimate) {
    est = *v.record->estimate;
  }
  entry.shape = static_cast<uint8_t>(shape);
  entry.estimate_us = std::max(kMinEstimateUs, est.micros());
  entry.priority = entry.estimate_us / 1000 * v.gpus();
  index_of_.emplace(v.record, v.index);
}

double SchedmatePolicy::RankSeconds(JobIndex j, int64_t attained_us) {
  JobEntry& c = jobs_[j];
  GittinsRanker& ranker = RankerOf(j);
  if (c.version == ranker.version() && attained_us >= c.lo_us && attained_us < c.hi_us) {
    return c.rank_s;
  }
  const auto est = static_cast<double>(c.estimate_us);
  double lo = 0, hi = 0;
  const double rank = ranker.Rank(static_cast<double>(attained_us) / est, &lo, &hi);
  c.version = ranker.version();
  // Integer bounds strictly inside the ratio interval, so a cached answer is always exact.
  c.lo_us = static_cast<int64_t>(std::ceil(lo * est));
  c.hi_us = static_cast<int64_t>(std::floor(hi * est));
  c.rank_s = rank * est / 1e6;
  return c.rank_s;
}

double SchedmatePolicy::RankOrEtaSeconds(const JobView& v, SimTime now) {
  if (opt_.use_eta) {
    // The tracker knows how far the job is: its ETA is the remaining time (SRPT's rank).
    if (const std::optional<Duration> eta = v.EtaAt(now)) return std::max(1e-3, eta->seconds_f());
  }
  return RankSeconds(v.index, AttainedUs(v, now));
}

double SchedmatePolicy::RankServiceAt(const JobView& v, SimTime now) {
  EnsureEstimate(v, now);
  return RankOrEtaSeconds(v, now) * v.gpus();
}

bool SchedmatePolicy::WideVictim(const JobView& r, SimTime now, const FreeMap& free) const {
  // A job that holds more than half of the partition's nodes would wait for most of it to drain
  // at once to restart. From estimates alone a wide job is preempted at most once (ranks of wide
  // jobs are too often far off: repeated preemptions pass its nodes back and forth); with a
  // measured remaining time (tracker ETA) as often as the exchange argument says.
  if (!opt_.wide_victims ||
      2 * static_cast<int64_t>(r.status->placement.nodes.size()) > free.up_nodes()) {
    return false;
  }
  return r.status->preemptions == 0 || (opt_.use_eta && r.EtaAt(now).has_value());
}

double SchedmatePolicy::CostSeconds(int32_t gpus) const {
  return (gpus > opt_.large_above_gpus ? opt_.preemption_cost_large : opt_.preemption_cost)
      .seconds_f();
}

int64_t SchedmatePolicy::AttainedUs(const JobView& v, SimTime now) {
  int64_t us = v.status->attained_gpu_us;
  if (v.status->state == RunState::kRunning && now > v.status->updated) {
    us += static_cast<int64_t>(v.status->gpus) * (now - v.status->updated).micros();
  }
  return us / std::max<int32_t>(1, v.status->gpus);
}

std::optional<Placement> SchedmatePolicy::PlaceAvoidingFailed(const SchedulingInput& in,
                                                              int32_t gpus, FreeMap& free) {
  if (!in.partition.recently_failed_nodes.empty()) {
    FreeMap& avoid = avoid_;
    avoid = free;
    for (int32_t node : in.partition.recently_failed_nodes) {
      const int32_t f = avoid.Free(node);
      if (f > 0) avoid.Take(node, f);
    }
    if (auto pl = Place(config_.placement, gpus, avoid)) {
      for (const auto& s : pl->nodes) free.Take(s.node, s.gpus);
      return pl;
    }
  }
  return Place(config_.placement, gpus, free);
}

void SchedmatePolicy::RefreshGuests(const SchedulingInput& in) {
  if (in.first_call || in.delta == nullptr) {
    guests_.clear();
    for (const JobView& v : in.running) {
      if (v.status->placement.share_with != kNoJob) guests_.push_back(v);
    }
  }
  std::erase_if(guests_, [](const JobView& v) {
    return v.status->state != RunState::kRunning || v.status->placement.share_with == kNoJob;
  });
  std::sort(guests_.begin(), guests_.end(), [](const JobView& a, const JobView& b) {
    return a.status->run_seq < b.status->run_seq;
  });
}

Decisions SchedmatePolicy::Schedule(const SchedulingInput& in) {
  Decisions d;
  index_.Update(in);
  int64_t wanted = 0;
  for (const JobView& v : in.pending) wanted += v.gpus();
  const bool contention = wanted > in.partition.free->total_free();
  // The free map this call places on: the backend's, copied into a reused buffer only once a
  // placement may change it (about half the calls see no pending job and place nothing).
  FreeMap& free = free_;
  bool free_copied = false;
  auto own_free = [&] {
    if (!free_copied) free = *in.partition.free;
    free_copied = true;
  };
  if (!in.pending.empty()) own_free();

  RefreshGuests(in);

  // Un-pack co-located jobs that would gain more than the move costs, while nobody waits.
  if (opt_.unpack && !contention) {
    for (const JobView& v : guests_) {
      if (v.status->placement.share_with == kNoJob || v.status->rate >= 1.0) continue;
      const double saved_s = RankServiceAt(v, in.now) / v.gpus() * (1.0 / v.status->rate - 1.0);
      if (saved_s <= CostSeconds(v.gpus())) continue;
      own_free();
      if (auto pl = PlaceAvoidingFailed(in, v.gpus(), free)) {
        d.preempt.push_back(
            {v.index, "schedmate: un-pack, running alone saves more than the move"});
        d.start.push_back({v.index, std::move(*pl)});
      }
    }
  }

  // Partners are only looked for under contention: build the candidate list only then (it is
  // a pass over every running job).
  PartnerCandidates partners(contention ? in.running : std::span<const JobView>{});
  auto priority_of = [this](JobIndex j) {
    return static_cast<size_t>(j) < jobs_.size() ? jobs_[j].priority : int64_t{-1};
  };
  VictimQueue victims;
  bool victims_built = false;
  WideScratch wide_scratch;
  std::vector<JobIndex> taken;           // running jobs given a co-runner in this call
  std::vector<JobIndex> evicted;         // running jobs preempted in this call
  std::map<int32_t, double> no_room_at;  // GPUs -> lowest rank service that found no room
  int skipped = 0;
  double rank = 0;            // the current blocked job's Gittins rank (s)
  int64_t blocked_ahead = 0;  // GPUs of the jobs passed over so far
  FreedByRank natural;        // running jobs holding GPUs, by rank

  index_.ForEach([&](const JobView& v, bool* erase) {
    if (contention && v.gpus() <= in.partition.gpus_per_node && !partners.empty()) {
      const JobIndex partner =
          partners.Take(v, jobs_[v.index].priority, priority_of, cache_, opt_.packing);
      // A partner preempted earlier in this call is gone (Take consumed it): place alone.
      if (partner != kNoJob && !Contains(evicted, partner)) {
        Placement pl;
        pl.share_with = partner;
        taken.push_back(partner);
        guests_.push_back(v);
        d.start.push_back({v.index, std::move(pl)});
        *erase = true;
        return true;
      }
    }
    if (auto pl = PlaceAvoidingFailed(in, v.gpus(), free)) {
      d.start.push_back({v.index, std::move(*pl)});
      *erase = true;
      return true;
    }
    if (!opt_.preempt || !contention) {
      return (free.total_free() > 0 || (contention && !partners.empty())) &&
             ++skipped <= kScanDepth;
    }

    // Blocked: look for running jobs whose preemption shortens the average JCT.
    if (!victims_built) {
      victims_built = true;
      victims.Reserve(in.running.size());
      natural.Reserve(in.running.size());
      for (const JobView& r : in.running) {
        const JobStatus& s = *r.status;
        if (s.placement.share_with != kNoJob) continue;  // a guest holds no GPUs
        const double r_rank = RankServiceAt(r, in.now) / r.gpus();
        natural.Add(r_rank, r.gpus());
        if (s.shared_with != kNoJob) continue;  // owners of shared GPUs stay
        if (s.placement.nodes.size() != 1 && !WideVictim(r, in.now, free)) continue;
        victims.Add(&r, r_rank - CostSeconds(r.gpus()), CostSeconds(r.gpus()));
      }
      natural.Build();
    }
    rank = RankServiceAt(v, in.now) / v.gpus();
    // Without preemption the job starts once running jobs have freed the GPUs it and the blocked
    // jobs ahead of it need; ranks stand in for the remaining times. Preempting saves at most
    // that wait and costs at least rank + the smaller preemption cost: skip the search when it
    // cannot pay.
    const int64_t need = blocked_ahead + v.gpus() - free.total_free();
    const double wait = natural.WaitFor(need);
    const bool may_pay = wait > rank + opt_.preemption_cost.seconds_f();
    // A size that found no room for a smaller rank needs no victims.
    const auto no_room = no_room_at.find(v.gpus());
    const bool no_room_yet = no_room != no_room_at.end() && rank >= no_room->second;
    if (may_pay && !no_room_yet && victims.TopGain() > rank &&
        free.total_free() + victims.GpusFromFirstUnused(rank) >= v.gpus()) {
      std::vector<size_t> chosen =
          ChooseVictims(v.gpus(), rank, wait, free, victims, taken, wide_scratch);
      if (!chosen.empty()) {
        FreeMap& trial = trial_;
        trial = free;
        for (size_t i : chosen) Release(victims[i].view->status->placement, trial);
        if (auto pl = PlaceAvoidingFailed(in, v.gpus(), trial)) {
          std::swap(free, trial);
          for (size_t i : chosen) {
            victims.MarkUsed(i);
            evicted.push_back(victims[i].view->index);
            d.preempt.push_back(
                {victims[i].view->index, "schedmate: a job of lower Gittins rank waits"});
          }
          no_room_at.clear();
          d.start.push_back({v.index, std::move(*pl)});
          *erase = true;
          return true;
        }
      }
      // A job of this size with a larger rank would find no better victims (the eligible set
      // only shrinks as the rank grows, and the free map only shrinks until the next
      // preemption): skip the search for it.
      auto [it, inserted] = no_room_at.emplace(v.gpus(), rank);
      if (!inserted) it->second = std::min(it->second, rank);
    }
    blocked_ahead += v.gpus();
    // Go on while something could still start: free GPUs, a partner, or a victim that outranks
    // this job (jobs further down have larger rank services at queue entry); at most
    // kScanDepth jobs past the first that did not start.
    return (free.total_free() > 0 || !partners.empty() || victims.TopGain() > rank) &&
           ++skipped <= kScanDepth;
  });
  return d;
}

}  // namespace schedmate::policy
