#pragma once
// The scheduling-policy extension point: a read-only snapshot goes in, decisions come out.
//
// A policy decides; the backend (sim::Simulator, or the live Slurm companion) acts. A policy never
// mutates cluster or job state: everything it sees through SchedulingInput is const and valid only
// during the Schedule() call. Policies may keep private caches (e.g. an ordered index of pending
// jobs) that they update from SchedulingInput::delta; with delta == nullptr they must rebuild from
// the spans, so a backend that cannot produce deltas still works.
//
// Job identity: a JobIndex is the job's position in the JobTable the backend was given.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/sim_time.h"
#include "policy/free_map.h"

namespace schedmate::policy {

using JobIndex = int32_t;
inline constexpr JobIndex kNoJob = -1;

// GPUs of one node given to a job.
struct NodeShare {
  int32_t node = 0;  // index of the node inside its partition
  int32_t gpus = 0;  // whole GPUs
  bool operator==(const NodeShare&) const = default;
};

// Where a job runs. `share_with` != kNoJob: the job co-locates on exactly the GPUs of that running
// job (GPU sharing, two jobs per GPU at most) and `nodes` repeats the partner's nodes.
struct Placement {
  std::vector<NodeShare> nodes;
  JobIndex share_with = kNoJob;
  int32_t total_gpus() const {
    int32_t n = 0;
    for (const auto& s : nodes) n += s.gpus;
    return n;
  }
};

enum class RunState : uint8_t { kNotArrived, kPending, kRunning, kFinished, kRejected };

// The backend's live record of one job. Policies read it through JobView.
// Layout: the fields a policy reads about every running job on each call (state, size,
// co-runner, placement, progress, ETA) come first and the record starts on a cache line, so
// they sit on two lines; the bookkeeping read rarely follows.
struct alignas(64) JobStatus {
  RunState state = RunState::kNotArrived;
  int32_t gpus = 0;  // whole GPUs the job occupies when running (ceil of JobRecord::gpus)
  JobIndex shared_with = kNoJob;  // current co-runner, if any
  int32_t preemptions = 0;
  int64_t run_seq = 0;  // increases each time a job starts (or restarts)
  Placement placement;  // valid while running
  // Remaining work in solo-run time, as of `updated`; while running it falls at `rate`.
  Duration remaining;
  SimTime updated;
  double rate = 1.0;  // progress per unit of time (1 alone, < 1 slowed by a co-runner)
  // Attained service in GPU-microseconds (GPUs x time run) as of `updated`.
  int64_t attained_gpu_us = 0;
  // A tracker's remaining-time estimate (ETA) read from the job's log, when the backend has one.
  // The simulator models it (SimOptions::eta): once the remaining solo work is at most
  // `eta_from_remaining`, the ETA is the true remaining work x `eta_noise` (> 0; 0: no ETA).
  double eta_noise = 0;
  Duration eta_from_remaining;
  int32_t partition = 0;
  int32_t failure_restarts = 0;
  int64_t queue_seq = 0;  // increases each time a job (re)enters the pending list
  SimTime enqueued;       // when the job last entered the pending list
  SimTime first_start = SimTime::Max();
  SimTime last_start = SimTime::Max();
  SimTime finish = SimTime::Max();
  Duration queued;  // total time spent pending so far (closed periods only)
  // Lucid-compatible step semantics: a countdown job is noticed finished one step late.
  Duration finish_lag;
};

// A pending or running job as a policy sees it.
struct JobView {
  JobIndex index = kNoJob;
  const JobRecord* record = nullptr;
  const JobStatus* status = nullptr;

  // Remaining solo-run work at `now` (never negative).
  Duration RemainingAt(SimTime now) const;
  // The tracker's ETA (remaining solo-run time) at `now`, if the job's log gives one yet.
  std::optional<Duration> EtaAt(SimTime now) const;
  // Attained GPU-service at `now`, in GPU-seconds (whole seconds, truncated).
  int64_t AttainedGpuSecondsAt(SimTime now) const;
  int32_t gpus() const { return status->gpus; }
};

// One partition (virtual cluster) as a policy sees it.
struct PartitionView {
  std::string_view name;
  int32_t index = 0;
  int32_t gpus_per_node = 8;
  int64_t total_gpus = 0;         // GPUs on nodes that are up
  const FreeMap* free = nullptr;  // free whole GPUs per node; down nodes count as full
  // Node indices that failed within the recent past (most recent last); may be empty.
  std::span<const int32_t> recently_failed_nodes;
};

// Changes since this policy's previous Schedule() call for the same partition. Lets policies keep
// ordered indexes without rescanning. Every job listed is in the snapshot's pending span.
struct InputDelta {
  std::span<const JobIndex> entered_pending;  // arrived, preempted or restarted after a failure
};

struct SchedulingInput {
  SimTime now;
  const PartitionView& partition;
  std::span<const JobView> pending;   // in list order: the order jobs entered the pending list
  std::span<const JobView> running;   // in list order: the order jobs (last) started
  const InputDelta* delta = nullptr;  // may be null: then rebuild from the spans
  // True on the very first call for this partition (caches must start empty).
  bool first_call = false;
};

struct StartDecision {
  JobIndex job = kNoJob;
  Placement placement;
};
struct PreemptDecision {
  JobIndex job = kNoJob;
  std::string_view reason;  // a static string, e.g. "srtf: shorter remaining time waiting"
};
enum class RejectReason : uint8_t {
  kNotNow,      // retryable: the job stays pending (informational)
  kInfeasible,  // never fits (e.g. more GPUs than the partition has): the job is dropped
};
struct RejectDecision {
  JobIndex job = kNoJob;
  RejectReason reason = RejectReason::kNotNow;
};

// Applied by the backend in this order: preemptions, then starts (in vector order), then rejects.
// A start's placement must fit the free GPUs left after the preemptions and the earlier starts.
struct Decisions {
  std::vector<PreemptDecision> preempt;
  std::vector<StartDecision> start;
  std::vector<RejectDecision> reject;
  // Ask to be called again at this time even if nothing else happens (e.g. a Tiresias job will
  // cross a queue threshold then). The backend may round it up to its scheduling tick.
  std::optional<SimTime> wake_at;
  bool empty() const { return preempt.empty() && start.empty() && reject.empty(); }
};

// What a policy tells the backend about how it wants to be driven.
struct PolicyTraits {
  // Scheduling interval: 0 = call after every event batch; > 0 = call only at multiples of it
  // (Tiresias' 60 s, as in Lucid and Pollux).
  Duration interval;
  // True when the policy may preempt; Lucid-compatible runs count such a job's finish one step
  // late (Lucid's remaining-time countdown notices a finished job at the next step).
  bool preemptive = false;
};

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  // Stable name used in configs, logs and result files, e.g. "tiresias".
  virtual std::string_view Name() const = 0;
  virtual PolicyTraits Traits() const { return {}; }
  // Same input (and same seed, for randomised policies) must give the same Decisions.
  virtual Decisions Schedule(const SchedulingInput& input) = 0;
  // Called by the backend when a job finishes, in finish order (ties: trace order). Policies that
  // learn online (estimators) hook in here. Default: nothing.
  virtual void OnJobFinished(const JobRecord& /*job*/, SimTime /*finish*/) {}
};

}  // namespace schedmate::policy
