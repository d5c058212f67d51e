#include "sim/simulator.h"

// DESIGN notes on skipping steps in Lucid-compatible mode.
// Lucid runs its scheduling loop every simulated second (Tiresias: every 60th second). We call
// the policy only at a step where something happened since the previous call (arrival, finish,
// node event, a queue-threshold crossing the policy asked to be woken for) or where the previous
// call changed something. This is exact because a step that changed nothing leaves the next
// step's input identical, except that running jobs' remaining times shrink (SRTF) and attained
// services grow (Tiresias):
//  - FIFO/SJF/QSSF orders do not depend on time; the head that did not fit still does not fit.
//  - SRTF: shrinking remaining times only move running jobs ahead of pending ones. Swapping a
//    pending job p and a running job r that is selected either way leaves the selected set and
//    the quota after both unchanged (r fits before p iff both or only r fitted after p), so the
//    greedy selection is the same and the selected pending jobs fail placement again.
//  - Tiresias: order changes only when a running job crosses the threshold; the policy asks to
//    be woken then.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <queue>

#include "core/check.h"
#include "core/progress.h"
#include "core/rng.h"
#include "policy/placer.h"

namespace schedmate::sim {
namespace {

using policy::FreeMap;
using policy::JobIndex;
using policy::JobStatus;
using policy::JobView;
using policy::kNoJob;
using policy::RunState;

enum class EventKind : uint8_t { kFinish, kFailure, kRepair, kWake };

struct Event {
  SimTime time;
  int64_t seq = 0;
  EventKind kind = EventKind::kWake;
  int32_t a = 0;        // job (finish) or partition
  int32_t b = 0;        // node
  int64_t version = 0;  // finish: must match the job's version
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

// Jobs in the order they entered a list, each with the sequence number it entered under. An
// entry stops being current when its job leaves the list (or leaves and enters again, under a
// new number); such entries are dropped lazily by Keep(), which preserves the order of the rest.
template <typename T>
struct SequencedList {
  std::vector<T> items;
  std::vector<int64_t> seqs;  // seqs[i]: the sequence number items[i] entered under
  bool stale = false;         // some entries may no longer be current

  void Push(T item, int64_t seq) {
    items.push_back(item);
    seqs.push_back(seq);
  }
  // Keeps the entries for which current(item, seq) holds, in order.
  template <typename Current>
  void Keep(Current current) {
    size_t w = 0;
    for (size_t r = 0; r < items.size(); ++r) {
      if (current(items[r], seqs[r])) {
        items[w] = items[r];
        seqs[w] = seqs[r];
        ++w;
      }
    }
    items.resize(w);
    seqs.resize(w);
    stale = false;
  }
  void Clear() {
    items.clear();
    seqs.clear();
    stale = false;
  }
};

struct Partition {
  std::string name;
  int32_t gpus_per_node = 8;
  int32_t nodes = 0;
  FreeMap free;
  std::unique_ptr<policy::SchedulingPolicy> policy;
  policy::PolicyTraits traits;
  Duration tick;
  SequencedList<JobView> pending;   // by queue_seq
  SequencedList<JobView> running;   // by run_seq
  SequencedList<JobIndex> entered;  // entered pending since the last policy call, by queue_seq
  bool dirty = false;
  bool called = false;
  SimTime scheduled_wake = SimTime::Max();
  std::vector<int32_t> recently_failed;
  int64_t pending_count = 0;
  int64_t running_count = 0;
};

// A job to arrive, with its submit time (the arrival order's key, kept beside the index).
struct Arrival {
  SimTime submit;
  JobIndex job = kNoJob;
};

SimTime AlignUp(SimTime t, Duration tick) {
  if (tick.micros() <= 0) return t;
  const int64_t q = tick.micros();
  int64_t us = t.micros();
  int64_t r = us % q;
  if (r < 0) r += q;
  return r == 0 ? t : SimTime::FromMicros(us - r + q);
}

// The partition index of each job as Run() assigns it (-1: skipped), in job order.
std::vector<int32_t> PartitionsOf(const JobTable& table, const ClusterSpec& cluster) {
  std::vector<int32_t> out(table.jobs.size(), -1);
  for (size_t j = 0; j < table.jobs.size(); ++j) {
    const JobRecord& r = table.jobs[j];
    if (r.gpus.milli() <= 0) continue;
    if (cluster.vcs.size() == 1) {
      out[j] = 0;
      continue;
    }
    for (size_t i = 0; i < cluster.vcs.size(); ++i) {
      if (cluster.vcs[i].name == r.vc) {
        out[j] = static_cast<int32_t>(i);
        break;
      }
    }
  }
  return out;
}

class Engine {
 public:
  Engine(const JobTable& table, const SimOptions& options)
      : table_(table), options_(options), rng_(options.seed) {}

  Result<SimResult> Run(const ClusterSpec& cluster, const PolicyMaker& make_policy);

 private:
  void Push(SimTime t, EventKind kind, int32_t a, int32_t b = 0, int64_t version = 0) {
    events_.push(Event{t, ++event_seq_, kind, a, b, version});
  }
  void ScheduleWake(Partition& p, SimTime t) {
    if (p.scheduled_wake != SimTime::Max() && p.scheduled_wake >= now_ && p.scheduled_wake <= t)
      return;
    p.scheduled_wake = t;
    Push(t, EventKind::kWake, static_cast<int32_t>(&p - parts_.data()));
  }
  void Progress(JobIndex j, SimTime t);
  void ScheduleFinish(JobIndex j);
  void Enqueue(JobIndex j, SimTime t);
  void ReleaseRunning(JobIndex j, SimTime t);
  void SetRate(JobIndex j, double rate, SimTime t);
  void Finish(JobIndex j, SimTime t);
  void Kill(JobIndex j, SimTime t);
  Status ApplyDecisions(Partition& p, const policy::Decisions& d, SimTime t);
  Status CallPolicy(Partition& p, SimTime t);
  Status StartSnapshotJobs();
  void Compact(Partition& p);
  // Run()'s parts: partitions and their policies; every job's status (arrival order out);
  // the event-limit guard; whether nothing can change any more; the events due at t (finishes
  // in job order); one node failure or repair; one arrival; one time-series sample.
  Status SetUpPartitions(const ClusterSpec& cluster, const PolicyMaker& make_policy);
  std::vector<Arrival> SetUpJobs(const ClusterSpec& cluster);
  Status LimitReached(SimTime t, int64_t live) const;
  bool Stuck() const;
  void PopEventsAt(SimTime t, std::vector<JobIndex>& finishing, std::vector<Event>& node_events);
  void ApplyNodeEvent(const Event& e, SimTime t);
  void Arrive(JobIndex j, SimTime t);
  void Sample(SimTime t);
  void AddBusy(int64_t gpus) { busy_gpus_ += gpus; }
  void Integrate(SimTime t) {
    if (t > last_integrate_) {
      busy_gpu_us_ += static_cast<long double>(busy_gpus_) *
                      static_cast<long double>((t - last_integrate_).micros());
      last_integrate_ = t;
    }
  }

  const JobTable& table_;
  const SimOptions& options_;
  Rng rng_;
  policy::ColocationModel default_model_;
  const policy::ColocationModel* model_ = nullptr;
  std::vector<Partition> parts_;
  std::vector<JobStatus> status_;
  std::vector<int64_t> version_;
  std::vector<Duration> lag_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  int64_t event_seq_ = 0;
  int64_t max_events_ = 0;
  int64_t queue_seq_ = 0;
  int64_t run_seq_ = 0;
  // Per partition: the queue (run) numbers of the pending (running) list entries whose job has
  // left that state since the last Compact.
  std::vector<std::vector<int64_t>> gone_pending_, gone_running_;
  SimTime now_;
  int64_t busy_gpus_ = 0;
  long double busy_gpu_us_ = 0;
  SimTime last_integrate_;
  Duration sample_;      // time-series sampling period
  SimTime next_sample_;  // next sample due
  SimResult result_;
  int64_t finished_ = 0;
};

void Engine::Progress(JobIndex j, SimTime t) {
  JobStatus& s = status_[j];
  if (s.state == RunState::kRunning && t > s.updated) {
    const int64_t dt = (t - s.updated).micros();
    const int64_t done =
        s.rate == 1.0 ? dt : static_cast<int64_t>(std::llround(s.rate * static_cast<double>(dt)));
    s.remaining = std::max(Duration::Zero(), s.remaining - Duration::Micros(done));
    s.attained_gpu_us += static_cast<int64_t>(s.gpus) * dt;
  }
  s.updated = t;
}

void Engine::ScheduleFinish(JobIndex j) {
  JobStatus& s = status_[j];
  ++version_[j];
  int64_t left = s.remaining.micros();
  if (s.rate != 1.0) left = static_cast<int64_t>(std::ceil(static_cast<double>(left) / s.rate));
  Push(s.updated + Duration::Micros(left) + s.finish_lag, EventKind::kFinish, j, 0, version_[j]);
}

void Engine::Enqueue(JobIndex j, SimTime t) {
  JobStatus& s = status_[j];
  Partition& p = parts_[s.partition];
  s.state = RunState::kPending;
  s.enqueued = t;
  s.queue_seq = ++queue_seq_;
  p.pending.Push(JobView{j, &table_.jobs[j], &s}, s.queue_seq);
  p.entered.Push(j, s.queue_seq);
  ++p.pending_count;
  p.dirty = true;
}

// Takes job j off its GPUs (progress must be up to date). A co-runner keeps the GPUs and speeds up.
void Engine::ReleaseRunning(JobIndex j, SimTime t) {
  JobStatus& s = status_[j];
  Partition& p = parts_[s.partition];
  const JobIndex partner = s.shared_with;
  if (partner != kNoJob) {
    JobStatus& o = status_[partner];
    o.shared_with = kNoJob;
    if (s.placement.share_with == kNoJob) {
      o.placement.share_with = kNoJob;  // the co-runner now owns the GPUs
    }
    Progress(partner, t);
    o.rate = 1.0;
    ScheduleFinish(partner);
  } else if (s.placement.share_with == kNoJob) {
    policy::Release(s.placement, p.free);
    AddBusy(-s.placement.total_gpus());
  }
  s.shared_with = kNoJob;
  s.placement = {};
  s.state = RunState::kPending;  // caller sets the final state
  ++version_[j];
  gone_running_[s.partition].push_back(s.run_seq);
  p.running.stale = true;
  --p.running_count;
  p.dirty = true;
}

void Engine::Finish(JobIndex j, SimTime t) {
  ReleaseRunning(j, t);
  JobStatus& s = status_[j];
  s.state = RunState::kFinished;
  s.finish = t;
  s.remaining = Duration::Zero();
  JobOutcome& o = result_.jobs[j];
  o.finish = t;
  o.queued = s.queued;
  o.first_start = s.first_start;
  o.preemptions = s.preemptions;
  o.failure_restarts = s.failure_restarts;
  result_.last_finish = std::max(result_.last_finish, t);
  ++finished_;
  if (options_.estimator) options_.estimator->Observe(table_.jobs[j], t);
  for (auto& p : parts_) p.policy->OnJobFinished(table_.jobs[j], t);
}

void Engine::Kill(JobIndex j, SimTime t) {
  Progress(j, t);
  JobStatus& s = status_[j];
  const Duration total = table_.jobs[j].duration;
  const Duration ckpt = options_.failures.checkpoint_interval;
  if (ckpt.micros() > 0) {
    const Duration done = std::max(Duration::Zero(), total - s.remaining);
    const Duration lost = Duration::Micros(done.micros() % ckpt.micros());
    s.remaining = s.remaining + lost + options_.preemption_cost.For(s.gpus);
  } else {
    s.remaining = total;
  }
  ReleaseRunning(j, t);
  ++s.failure_restarts;
  Enqueue(j, t);
}

// Drops from `list` the entries whose sequence number is in `gone`, keeping the order of the
// others (what Keep() does with the jobs' states, without reading them), and clears `gone`. The
// list's numbers ascend, so each gone entry is found by a binary search and only the blocks
// between them, from the first gone entry on, move: short jobs leave near the end of the
// running list, so a compaction rarely touches its head.
void DropGone(SequencedList<JobView>& list, std::vector<int64_t>& gone) {
  if (gone.empty()) return;
  std::sort(gone.begin(), gone.end());
  std::vector<int64_t>& seqs = list.seqs;
  std::vector<JobView>& items = list.items;
  const auto at = [](auto& v, size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  size_t w =
      static_cast<size_t>(std::lower_bound(seqs.begin(), seqs.end(), gone.front()) - seqs.begin());
  size_t r = w;  // entries [r, end) are still to be kept or dropped; [0, w) are kept
  const auto keep_until = [&](size_t end) {
    if (w != r) {
      std::move(at(items, r), at(items, end), at(items, w));
      std::move(at(seqs, r), at(seqs, end), at(seqs, w));
    }
    w += end - r;
    r = end;
  };
  for (int64_t g : gone) {
    keep_until(static_cast<size_t>(std::lower_bound(at(seqs, r), seqs.end(), g) - seqs.begin()));
    if (r < seqs.size() && seqs[r] == g) ++r;
  }
  keep_until(seqs.size());
  items.resize(w);
  seqs.resize(w);
  gone.clear();
}

void Engine::Compact(Partition& p) {
  // An entry is current while its job is still pending (running) under the queue (run) number
  // it entered with; it stops being current when the job leaves that state, which records the
  // number in gone_pending_ (gone_running_).
  const size_t i = static_cast<size_t>(&p - parts_.data());
  if (p.pending.stale) {
    DropGone(p.pending, gone_pending_[i]);
    p.pending.stale = false;
  }
  if (p.running.stale) {
    DropGone(p.running, gone_running_[i]);
    p.running.stale = false;
  }
}

Status Engine::ApplyDecisions(Partition& p, const policy::Decisions& d, SimTime t) {
  const std::string_view name = p.policy->Name();
  auto bad = [&](JobIndex j, std::string_view why) {
    return Status::Internal(
        fmt::format("policy {} at t={}s: job {} ({}): {}", name, t.seconds_f(), j,
                    j >= 0 && j < static_cast<JobIndex>(table_.jobs.size()) ? table_.jobs[j].id
                                                                            : std::string("?"),
                    why));
  };
  auto valid = [&](JobIndex j) {
    return j >= 0 && j < static_cast<JobIndex>(status_.size()) &&
           status_[j].partition == static_cast<int32_t>(&p - parts_.data());
  };
  for (const auto& pr : d.preempt) {
    const JobIndex j = pr.job;
    if (!valid(j) || status_[j].state != RunState::kRunning) return bad(j, "preempt: not running");
    Progress(j, t);
    JobStatus& s = status_[j];
    s.remaining += options_.preemption_cost.For(s.gpus);
    ++s.preemptions;
    ReleaseRunning(j, t);
    Enqueue(j, t);
  }
  for (const auto& st : d.start) {
    const JobIndex j = st.job;
    if (!valid(j) || status_[j].state != RunState::kPending) return bad(j, "start: not pending");
    JobStatus& s = status_[j];
    const auto& pl = st.placement;
    if (pl.share_with != kNoJob) {
      const JobIndex k = pl.share_with;
      if (!valid(k) || status_[k].state != RunState::kRunning || status_[k].shared_with != kNoJob ||
          status_[k].gpus != s.gpus) {
        return bad(j, "start: bad co-location partner");
      }
      Progress(k, t);
      const auto rates = model_->Rates(table_.jobs[j], table_.jobs[k]);
      s.placement = pl;
      s.placement.nodes = status_[k].placement.nodes;
      s.shared_with = k;
      status_[k].shared_with = j;
      status_[k].rate = std::clamp(rates.b, 0.01, 1.0);
      ScheduleFinish(k);
      s.rate = std::clamp(rates.a, 0.01, 1.0);
    } else {
      if (pl.total_gpus() != s.gpus) return bad(j, "start: placement size differs from request");
      for (const auto& ns : pl.nodes) {
        if (ns.node < 0 || ns.node >= p.nodes || ns.gpus <= 0 || p.free.Free(ns.node) < ns.gpus)
          return bad(j, "start: placement does not fit");
      }
      for (const auto& ns : pl.nodes) p.free.Take(ns.node, ns.gpus);
      AddBusy(s.gpus);
      s.placement = pl;
      s.rate = 1.0;
    }
    s.queued += t - s.enqueued;
    if (s.first_start == SimTime::Max()) s.first_start = t;
    s.last_start = t;
    if (options_.record_first_nodes && result_.jobs[j].first_nodes.empty()) {
      for (const auto& ns : s.placement.nodes) result_.jobs[j].first_nodes.push_back(ns.node);
    }
    s.state = RunState::kRunning;
    s.run_seq = ++run_seq_;
    s.updated = t;
    s.finish_lag = lag_[j];
    p.running.Push(JobView{j, &table_.jobs[j], &s}, s.run_seq);
    --p.pending_count;
    ++p.running_count;
    gone_pending_[s.partition].push_back(s.queue_seq);
    p.pending.stale = true;
    ScheduleFinish(j);
  }
  for (const auto& rj : d.reject) {
    const JobIndex j = rj.job;
    if (rj.reason == policy::RejectReason::kNotNow) continue;
    if (!valid(j) || status_[j].state != RunState::kPending) return bad(j, "reject: not pending");
    status_[j].state = RunState::kRejected;
    result_.jobs[j].rejected = true;
    ++result_.rejected;
    --p.pending_count;
    gone_pending_[status_[j].partition].push_back(status_[j].queue_seq);
    p.pending.stale = true;
  }
  return Status::Ok();
}

// SimOptions::running_at_start: these jobs hold their GPUs from their submit time (the snapshot)
// and finish when their remaining duration has run; their arrival is then skipped.
Status Engine::StartSnapshotJobs() {
  for (const RunningAtStart& r : options_.running_at_start) {
    const JobIndex j = r.job;
    if (j < 0 || j >= static_cast<JobIndex>(status_.size()) || result_.jobs[j].partition < 0 ||
        status_[j].state != RunState::kNotArrived) {
      return Status::InvalidArgument(fmt::format("running at start: job {} is not a new job", j));
    }
    JobStatus& s = status_[j];
    Partition& p = parts_[s.partition];
    policy::Placement pl{r.nodes, kNoJob};
    if (pl.total_gpus() != s.gpus) {
      return Status::InvalidArgument(
          fmt::format("running at start: job {} holds {} GPUs but asks {}", table_.jobs[j].id,
                      pl.total_gpus(), s.gpus));
    }
    for (const auto& ns : pl.nodes) {
      if (ns.node < 0 || ns.node >= p.nodes || ns.gpus <= 0 || p.free.Free(ns.node) < ns.gpus) {
        return Status::InvalidArgument(fmt::format(
            "running at start: job {} does not fit on node {}", table_.jobs[j].id, ns.node));
      }
    }
    for (const auto& ns : pl.nodes) p.free.Take(ns.node, ns.gpus);
    AddBusy(s.gpus);
    s.placement = std::move(pl);
    s.first_start = s.last_start = r.started;
    s.state = RunState::kRunning;
    s.run_seq = ++run_seq_;
    s.updated = table_.jobs[j].submit;
    p.running.Push(JobView{j, &table_.jobs[j], &s}, s.run_seq);
    ++p.running_count;
    p.dirty = true;
    if (options_.record_first_nodes) {
      for (const auto& ns : s.placement.nodes) result_.jobs[j].first_nodes.push_back(ns.node);
    }
    ScheduleFinish(j);
  }
  return Status::Ok();
}

Status Engine::CallPolicy(Partition& p, SimTime t) {
  Compact(p);
  policy::PartitionView view;
  view.name = p.name;
  view.index = static_cast<int32_t>(&p - parts_.data());
  view.gpus_per_node = p.gpus_per_node;
  view.total_gpus = p.free.total_up_gpus();
  view.free = &p.free;
  view.recently_failed_nodes = p.recently_failed;
  // Keep only entries still pending under the same queue entry: they are then exactly the tail
  // of the pending span, in order (jobs preempted and restarted in one call drop out).
  p.entered.Keep([this](JobIndex j, int64_t seq) {
    const JobStatus& s = status_[j];
    return s.state == RunState::kPending && s.queue_seq == seq;
  });
  policy::InputDelta delta{p.entered.items};
  policy::SchedulingInput input{t, view, p.pending.items, p.running.items, &delta, !p.called};
  policy::Decisions d = p.policy->Schedule(input);
  p.called = true;
  p.entered.Clear();
  p.dirty = false;
  ++result_.scheduling_calls;
  SM_RETURN_IF_ERROR(ApplyDecisions(p, d, t));
  Compact(p);
  const bool changed = !d.preempt.empty() || !d.start.empty() ||
                       std::any_of(d.reject.begin(), d.reject.end(), [](const auto& r) {
                         return r.reason == policy::RejectReason::kInfeasible;
                       });
  if (p.tick.micros() > 0) {
    if (changed) ScheduleWake(p, t + p.tick);
    if (d.wake_at && *d.wake_at > t) ScheduleWake(p, AlignUp(*d.wake_at, p.tick));
  } else if (d.wake_at && *d.wake_at > t) {
    ScheduleWake(p, *d.wake_at);
  }
  return Status::Ok();
}

Status Engine::SetUpPartitions(const ClusterSpec& cluster, const PolicyMaker& make_policy) {
  parts_.resize(cluster.vcs.size());
  gone_pending_.assign(parts_.size(), {});
  gone_running_.assign(parts_.size(), {});
  for (size_t i = 0; i < cluster.vcs.size(); ++i) {
    const VcSpec& vc = cluster.vcs[i];
    Partition& p = parts_[i];
    p.name = vc.name;
    p.gpus_per_node = vc.gpus_per_node;
    p.nodes = vc.nodes;
    p.free = FreeMap(vc.nodes, vc.gpus_per_node);
    SM_ASSIGN_OR_RETURN(p.policy, make_policy());
    p.traits = p.policy->Traits();
    p.tick = p.traits.interval;
    if (options_.lucid_compat) p.tick = std::max(p.tick, Duration::Seconds(1));
    result_.partitions.push_back(vc.name);
    result_.total_gpus += static_cast<int64_t>(vc.nodes) * vc.gpus_per_node;
  }
  result_.policy = parts_.empty() ? "" : std::string(parts_[0].policy->Name());
  return Status::Ok();
}

std::vector<Arrival> Engine::SetUpJobs(const ClusterSpec& cluster) {
  const size_t n = table_.jobs.size();
  // The modelled tracker ETA: one log-normal noise factor per job, drawn in job order from its
  // own stream (so turning it on changes nothing else).
  Rng eta_rng(options_.seed ^ 0x9e3779b97f4a7c15ULL);
  const std::vector<int32_t> partition_of = PartitionsOf(table_, cluster);
  std::vector<Arrival> arrivals;
  arrivals.reserve(n);
  for (size_t j = 0; j < n; ++j) {
    const JobRecord& r = table_.jobs[j];
    JobOutcome& o = result_.jobs[j];
    o.submit = r.submit;
    JobStatus& s = status_[j];
    if (options_.eta.enabled) {
      const double z = std::sqrt(-2.0 * std::log1p(-eta_rng.Uniform())) *
                       std::cos(2 * std::numbers::pi * eta_rng.Uniform());
      s.eta_noise = std::exp(options_.eta.sigma * z);
      s.eta_from_remaining = Duration::Micros(
          std::llround(static_cast<double>(std::max(Duration::Zero(), r.duration).micros()) *
                       (1.0 - options_.eta.after_fraction)));
    }
    if (r.gpus.milli() <= 0) {
      ++result_.skipped_no_gpu;
      continue;
    }
    const int32_t part = partition_of[j];
    if (part < 0) {
      ++result_.skipped_unknown_vc;
      continue;
    }
    o.partition = part;
    s.partition = part;
    s.gpus = static_cast<int32_t>(r.gpus.ceil_whole());
    s.remaining = std::max(Duration::Zero(), r.duration);
    s.updated = r.submit;
    if (options_.lucid_compat && parts_[part].traits.preemptive) lag_[j] = Duration::Seconds(1);
    arrivals.push_back({r.submit, static_cast<JobIndex>(j)});
  }
  // Arrival order: stable by submit time (file order among equal times); most traces already
  // are in that order.
  const auto by_submit = [](const Arrival& a, const Arrival& b) { return a.submit < b.submit; };
  if (!std::is_sorted(arrivals.begin(), arrivals.end(), by_submit)) {
    std::stable_sort(arrivals.begin(), arrivals.end(), by_submit);
  }
  return arrivals;
}

Status Engine::LimitReached(SimTime t, int64_t live) const {
  if (event_seq_ <= max_events_ && t <= kMaxSimTime) return Status::Ok();
  const std::string what =
      event_seq_ > max_events_
          ? fmt::format("more than {} events were queued (the event limit)", max_events_)
          : fmt::format("simulated time passed {:.0f} years", kMaxSimTime.seconds_f() / 3.15576e7);
  return Status::ResourceExhausted(fmt::format(
      "simulation stopped: {}; at simulated time {:.0f} s, {} of {} jobs had finished, {} node "
      "failures so far",
      what, (t - result_.first_submit).seconds_f(), finished_ + result_.rejected, live,
      result_.node_failures));
}

bool Engine::Stuck() const {
  for (const Partition& p : parts_) {
    if (p.running_count > 0 || p.dirty || p.scheduled_wake != SimTime::Max() ||
        p.free.up_nodes() != p.nodes) {
      return false;
    }
  }
  return true;
}

void Engine::PopEventsAt(SimTime t, std::vector<JobIndex>& finishing,
                         std::vector<Event>& node_events) {
  finishing.clear();
  node_events.clear();
  while (!events_.empty() && events_.top().time == t) {
    Event e = events_.top();
    events_.pop();
    switch (e.kind) {
      case EventKind::kFinish:
        if (version_[e.a] == e.version && status_[e.a].state == RunState::kRunning)
          finishing.push_back(e.a);
        break;
      case EventKind::kFailure:
      case EventKind::kRepair:
        node_events.push_back(e);
        break;
      case EventKind::kWake: {
        Partition& p = parts_[e.a];
        if (p.scheduled_wake == t) p.scheduled_wake = SimTime::Max();
        p.dirty = true;
        break;
      }
    }
  }
  std::sort(finishing.begin(), finishing.end());
}

void Engine::ApplyNodeEvent(const Event& e, SimTime t) {
  Partition& p = parts_[e.a];
  if (e.kind != EventKind::kFailure) {
    p.free.SetUp(e.b);
    p.dirty = true;
    const double mtbf = static_cast<double>(options_.failures.mtbf.micros());
    Push(t + Duration::Micros(std::max<int64_t>(1, static_cast<int64_t>(rng_.Exponential(mtbf)))),
         EventKind::kFailure, e.a, e.b);
    return;
  }
  if (!p.free.IsUp(e.b)) return;
  ++result_.node_failures;
  std::vector<JobIndex> victims;
  for (size_t r = 0; r < p.running.items.size(); ++r) {
    const JobStatus& s = *p.running.items[r].status;
    if (s.state != RunState::kRunning || s.run_seq != p.running.seqs[r]) continue;
    for (const auto& ns : s.placement.nodes) {
      if (ns.node == e.b) {
        victims.push_back(p.running.items[r].index);
        break;
      }
    }
  }
  std::sort(victims.begin(), victims.end());
  for (JobIndex j : victims) {
    if (status_[j].state == RunState::kRunning) Kill(j, t);
  }
  Compact(p);
  p.free.SetDown(e.b);
  p.recently_failed.push_back(e.b);
  if (p.recently_failed.size() > 16) p.recently_failed.erase(p.recently_failed.begin());
  p.dirty = true;
  const double mttr = static_cast<double>(options_.failures.mttr.micros());
  Push(t + Duration::Micros(std::max<int64_t>(1, static_cast<int64_t>(rng_.Exponential(mttr)))),
       EventKind::kRepair, e.a, e.b);
}

void Engine::Arrive(JobIndex j, SimTime t) {
  JobStatus& s = status_[j];
  const Partition& p = parts_[s.partition];
  if (s.state == RunState::kRunning) return;  // running at start (a snapshot)
  if (static_cast<int64_t>(s.gpus) > static_cast<int64_t>(p.nodes) * p.gpus_per_node) {
    s.state = RunState::kRejected;
    result_.jobs[j].rejected = true;
    ++result_.rejected;
    return;
  }
  Enqueue(j, t);
}

void Engine::Sample(SimTime t) {
  if (t < next_sample_) return;
  TimePoint tp;
  tp.time = t;
  for (const Partition& p : parts_) {
    tp.pending_jobs += p.pending_count;
    tp.running_jobs += p.running_count;
    tp.up_gpus += p.free.total_up_gpus();
  }
  tp.busy_gpus = busy_gpus_;
  result_.series.push_back(tp);
  if (result_.series.size() >= kMaxSeriesPoints) {
    // Bounded memory on long runs: keep every other sample and sample half as often.
    size_t w = 0;
    for (size_t r = 0; r < result_.series.size(); r += 2) result_.series[w++] = result_.series[r];
    result_.series.resize(w);
    sample_ = sample_ * 2;
  }
  next_sample_ = t + sample_;
}

Result<SimResult> Engine::Run(const ClusterSpec& cluster, const PolicyMaker& make_policy) {
  SM_RETURN_IF_ERROR(CheckSimConfig(cluster, options_));
  SM_RETURN_IF_ERROR(CheckFailureFeasibility(table_, cluster, options_));
  max_events_ =
      options_.max_events > 0 ? options_.max_events : DefaultMaxEvents(table_, cluster, options_);
  model_ = options_.colocation ? options_.colocation : &default_model_;
  const size_t n = table_.jobs.size();
  status_.assign(n, JobStatus{});
  version_.assign(n, 0);
  lag_.assign(n, Duration::Zero());
  result_.jobs.assign(n, JobOutcome{});
  result_.seed = options_.seed;
  SM_RETURN_IF_ERROR(SetUpPartitions(cluster, make_policy));
  const std::vector<Arrival> arrivals = SetUpJobs(cluster);
  if (arrivals.empty()) return std::move(result_);
  result_.first_submit = arrivals.front().submit;
  result_.last_finish = result_.first_submit;
  last_integrate_ = result_.first_submit;
  SM_RETURN_IF_ERROR(StartSnapshotJobs());

  if (options_.failures.enabled) {
    const double mtbf = static_cast<double>(options_.failures.mtbf.micros());
    for (size_t i = 0; i < parts_.size(); ++i) {
      for (int32_t node = 0; node < parts_[i].nodes; ++node) {
        Push(result_.first_submit + Duration::Micros(static_cast<int64_t>(rng_.Exponential(mtbf))),
             EventKind::kFailure, static_cast<int32_t>(i), node);
      }
    }
  }
  sample_ = options_.sample_interval;
  if (sample_.micros() <= 0) {
    const Duration span = arrivals.back().submit - result_.first_submit;
    sample_ = std::max(Duration::Seconds(60), span / 1000);
  }
  next_sample_ = result_.first_submit;

  ProgressBar bar(options_.progress_label, static_cast<int64_t>(arrivals.size()),
                  options_.progress);
  const auto live = static_cast<int64_t>(arrivals.size());  // jobs to finish or reject
  size_t next_arrival = 0;
  std::vector<JobIndex> finishing;
  std::vector<Event> node_events;
  int64_t loops = 0;
  while (true) {
    SimTime t = SimTime::Max();
    if (next_arrival < arrivals.size()) t = arrivals[next_arrival].submit;
    if (!events_.empty()) t = std::min(t, events_.top().time);
    if (t == SimTime::Max()) break;
    // The guards: a run that would not end stops here, saying which limit it reached.
    SM_RETURN_IF_ERROR(LimitReached(t, live));
    if (next_arrival >= arrivals.size()) {
      // Every job done: stop (node failure events alone would run forever).
      if (finished_ + result_.rejected >= live) break;
      // Jobs left pending, nothing running, every node up, no call due: nothing can change.
      if (Stuck()) break;
    }
    now_ = t;
    Integrate(t);
    PopEventsAt(t, finishing, node_events);
    for (JobIndex j : finishing) {
      // A job can be finished earlier in this batch only through its partner; re-check.
      if (status_[j].state != RunState::kRunning) continue;
      Progress(j, t);
      Finish(j, t);
    }
    for (const Event& e : node_events) ApplyNodeEvent(e, t);
    while (next_arrival < arrivals.size() && arrivals[next_arrival].submit == t) {
      Arrive(arrivals[next_arrival++].job, t);
    }
    for (Partition& p : parts_) {
      if (!p.dirty) continue;
      if (p.tick.micros() > 0 && AlignUp(t, p.tick) != t) {
        ScheduleWake(p, AlignUp(t, p.tick));
        continue;
      }
      SM_RETURN_IF_ERROR(CallPolicy(p, t));
    }
    Sample(t);
    if ((++loops & 4095) == 0) bar.Update(finished_ + result_.rejected);
  }
  bar.Finish();
  for (size_t j = 0; j < n; ++j) {
    const RunState st = status_[j].state;
    if (result_.jobs[j].partition >= 0 && (st == RunState::kPending || st == RunState::kRunning))
      ++result_.unfinished;
  }
  result_.busy_gpu_seconds = static_cast<double>(busy_gpu_us_ / 1e6L);
  result_.events = event_seq_;
  return std::move(result_);
}

}  // namespace

Status CheckSimConfig(const ClusterSpec& cluster, const SimOptions& options) {
  int64_t gpus = 0;
  for (const VcSpec& vc : cluster.vcs) {
    const std::string name = vc.name.empty() ? std::string("the cluster") : "VC " + vc.name;
    if (vc.nodes < 0) {
      return Status::InvalidArgument(fmt::format("{}: negative node count {}", name, vc.nodes));
    }
    if (vc.gpus_per_node <= 0 || vc.gpus_per_node > kMaxGpusPerNode) {
      return Status::InvalidArgument(fmt::format("{}: {} GPUs per node is out of range (1..{})",
                                                 name, vc.gpus_per_node, kMaxGpusPerNode));
    }
    gpus += static_cast<int64_t>(vc.nodes) * vc.gpus_per_node;
    if (gpus > kMaxClusterGpus) {
      return Status::InvalidArgument(fmt::format(
          "{}: the cluster would have more than {} GPUs, the most the simulator accepts", name,
          kMaxClusterGpus));
    }
  }
  if (cluster.vcs.empty() || gpus <= 0) return Status::InvalidArgument("the cluster has no GPUs");
  if (options.eta.enabled &&
      (!(options.eta.sigma >= 0) || !std::isfinite(options.eta.sigma) ||
       !(options.eta.after_fraction >= 0 && options.eta.after_fraction <= 1))) {
    return Status::InvalidArgument(
        fmt::format("ETA model: sigma {} must be finite and >= 0, after-fraction {} in [0, 1]",
                    options.eta.sigma, options.eta.after_fraction));
  }
  if (options.failures.enabled) {
    int64_t nodes = 0;
    for (const VcSpec& vc : cluster.vcs) nodes += vc.nodes;
    if (nodes > kMaxFailureNodes) {
      return Status::InvalidArgument(fmt::format(
          "node failures: the cluster has {} nodes, more than the {} failure injection supports "
          "(each failure reschedules its partition, so the cost grows with the square of the "
          "nodes)",
          nodes, kMaxFailureNodes));
    }
    const FailureOptions& f = options.failures;
    if (f.mtbf <= Duration::Zero() || f.mtbf.is_infinite()) {
      return Status::InvalidArgument(fmt::format(
          "node failures: MTBF must be positive and finite, got {} us", f.mtbf.micros()));
    }
    if (f.mttr < Duration::Zero() || f.mttr.is_infinite()) {
      return Status::InvalidArgument(
          fmt::format("node failures: MTTR must be >= 0 and finite, got {} us", f.mttr.micros()));
    }
    if (f.checkpoint_interval < Duration::Zero() || f.checkpoint_interval.is_infinite()) {
      return Status::InvalidArgument(
          fmt::format("node failures: checkpoint interval must be >= 0 and finite, got {} us",
                      f.checkpoint_interval.micros()));
    }
  }
  return Status::Ok();
}

Status CheckFailureFeasibility(const JobTable& table, const ClusterSpec& cluster,
                               const SimOptions& options) {
  if (!options.failures.enabled) return Status::Ok();
  const FailureOptions& f = options.failures;
  const double mtbf_s = f.mtbf.seconds_f();
  const bool checkpoints = f.checkpoint_interval > Duration::Zero();
  const std::vector<int32_t> part = PartitionsOf(table, cluster);
  // The job with the largest need (n x stretch, in MTBFs) decides.
  double worst = 0;  // n * stretch_s
  size_t worst_job = 0;
  int64_t worst_nodes = 0;
  Duration worst_segment, worst_restore;
  for (size_t j = 0; j < table.jobs.size(); ++j) {
    if (part[j] < 0) continue;
    const VcSpec& vc = cluster.vcs[static_cast<size_t>(part[j])];
    const JobRecord& r = table.jobs[j];
    const int64_t gpus = r.gpus.ceil_whole();
    if (gpus > static_cast<int64_t>(vc.nodes) * vc.gpus_per_node) continue;  // rejected on arrival
    const int64_t nodes = (gpus + vc.gpus_per_node - 1) / vc.gpus_per_node;
    const Duration segment = checkpoints ? std::min(r.duration, f.checkpoint_interval) : r.duration;
    const Duration restore =
        checkpoints ? options.preemption_cost.For(static_cast<int32_t>(gpus)) : Duration::Zero();
    const double need = static_cast<double>(nodes) * (segment + restore).seconds_f();
    if (need > worst) {
      worst = need;
      worst_job = j;
      worst_nodes = nodes;
      worst_segment = segment;
      worst_restore = restore;
    }
  }
  const double uptime_s = mtbf_s / static_cast<double>(std::max<int64_t>(1, worst_nodes));
  const double stretch_s = (worst_segment + worst_restore).seconds_f();
  const JobRecord& r = table.jobs[worst_job];
  if (!checkpoints && stretch_s > kMaxRunPerUptime * uptime_s) {
    return Status::InvalidArgument(fmt::format(
        "node failures: job {} would not be expected to finish: it spans {} node(s) with an MTBF "
        "of {} s each, so it runs {:.6g} s on average between failures, and without checkpoints "
        "it must run its whole {} s in one go (the rule: a job's run may be at most {} x its mean "
        "time between failures, about e^{} attempts; it is {:.3g} x). Use a longer MTBF or "
        "--checkpoint-interval",
        r.id, worst_nodes, mtbf_s, uptime_s, stretch_s, kMaxRunPerUptime, kMaxRunPerUptime,
        stretch_s / uptime_s));
  }
  if (checkpoints && uptime_s < kMinUptimePerStretch * stretch_s) {
    return Status::InvalidArgument(fmt::format(
        "node failures: job {} would not be expected to finish: it spans {} node(s) with an MTBF "
        "of {} s each, so it runs {:.6g} s on average between failures, but each restart costs "
        "{} s of restore and loses up to {} s since its last checkpoint (the rule: the mean time "
        "between failures must be at least {} x checkpoint interval plus restore cost, here "
        "{:.6g} s). Use a longer MTBF or a shorter checkpoint interval",
        r.id, worst_nodes, mtbf_s, uptime_s, worst_restore.seconds_f(), worst_segment.seconds_f(),
        kMinUptimePerStretch, kMinUptimePerStretch * stretch_s));
  }
  return Status::Ok();
}

int64_t DefaultMaxEvents(const JobTable& table, const ClusterSpec& cluster,
                         const SimOptions& options) {
  double events =
      static_cast<double>(kDefaultEventsBase) +
      static_cast<double>(kDefaultEventsPerJob) * static_cast<double>(table.jobs.size());
  if (options.failures.enabled && options.failures.mtbf > Duration::Zero()) {
    int64_t nodes = 0, gpus = 0;
    for (const VcSpec& vc : cluster.vcs) {
      nodes += vc.nodes;
      gpus += static_cast<int64_t>(vc.nodes) * vc.gpus_per_node;
    }
    SimTime first = SimTime::Max(), last = SimTime::Zero();
    double longest_s = 0, gpu_seconds = 0;
    for (const JobRecord& r : table.jobs) {
      first = std::min(first, r.submit);
      last = std::max(last, r.submit);
      longest_s = std::max(longest_s, r.duration.seconds_f());
      gpu_seconds += r.gpus.as_double() * r.duration.seconds_f();
    }
    const double span_s = table.jobs.empty() ? 0 : (last - first).seconds_f();
    const double horizon_s =
        4 * (span_s + longest_s + gpu_seconds / std::max<double>(1, static_cast<double>(gpus)));
    // Each node fails and is repaired about once per MTBF + MTTR.
    const double cycle_s =
        options.failures.mtbf.seconds_f() + std::max(0.0, options.failures.mttr.seconds_f());
    events += 2 * 2 * static_cast<double>(nodes) * (1 + horizon_s / cycle_s);
  }
  return static_cast<int64_t>(std::min(events, 1e18));
}

Result<SimResult> Simulate(const JobTable& jobs, const ClusterSpec& cluster,
                           const PolicyMaker& make_policy, const SimOptions& options) {
  Engine engine(jobs, options);
  return engine.Run(cluster, make_policy);
}

}  // namespace schedmate::sim
