#pragma once
// Simulator: a discrete-event replay of a job trace on a cluster of virtual clusters (partitions)
// under a SchedulingPolicy. The policy decides (policy/scheduling_policy.h); the simulator acts.
//
// Model
//  - Each VC of the ClusterSpec is a separate partition with its own nodes and its own policy
//    instance (as in Lucid). A job runs in the partition named by JobRecord::vc; with a single
//    unnamed VC every job runs there. Jobs with no GPUs or an unknown VC are skipped and counted.
//    A job asking for more GPUs than its partition has is rejected as infeasible on arrival.
//  - Jobs need whole GPUs (fractional requests are rounded up) on one or more nodes.
//  - Work: a job needs JobRecord::duration of solo run time. Alone it progresses at rate 1; two
//    jobs sharing GPUs progress at the rates given by the ColocationModel.
//  - Preemption costs PreemptionCost (checkpoint + restore) of extra work for the victim.
//  - Node failures (optional): each up node fails after Exp(mtbf), is repaired after Exp(mttr),
//    all drawn from one Rng seeded with SimOptions::seed in event order. Jobs with GPUs on a
//    failed node are killed and re-queued: from their last checkpoint when checkpoint_interval
//    > 0 (losing the work since, plus the restore cost), otherwise from the start.
//    Configurations in which some job is not expected to finish are refused up front, see
//    CheckFailureFeasibility().
//
// Limits. A run never runs away: clusters above kMaxClusterGpus GPUs (or kMaxGpusPerNode per node)
// are refused, and a run stops with kResourceExhausted, naming the limit, once it has queued
// SimOptions::max_events events or simulated time passes kMaxSimTime.
//
// Event order (the tie rules). Time is int64 microseconds. At each instant t the simulator
//  1. finishes the jobs whose finish time is t, in job-table order;
//  2. applies node failures and repairs due at t, in the order they were scheduled;
//  3. admits the jobs submitted at t, in file order (arrivals sort stably by submit time);
//  4. calls the policy of every partition that changed since its last call (or asked to be woken),
//     in VC-config order, and applies its decisions (preemptions, then starts, then rejects).
//  With a scheduling interval (the policy's, or 1 s in Lucid-compatible mode) step 4 happens only
//  at multiples of the interval; a partition that changed in between is called at the next one,
//  and a call that changed something is followed by a call one interval later.
//
// Lucid-compatible mode (lucid_compat) reproduces Lucid's simulator (S-Lab-System-Group/Lucid,
// simulation/) step for step without running a step per second: time advances in 1 s steps,
// a preemptive policy's job is noticed finished one step after its remaining time reaches zero
// (Lucid counts remaining time down and checks it before decrementing), and a preempted job
// loses nothing but pays PreemptionCost (Lucid: 40 s, 60 s above 8 GPUs). Steps where nothing
// could change are skipped; see DESIGN notes in simulator.cc for why that is exact.
//
// Determinism: same inputs, options and seed give the same SimResult, byte for byte.
// Thread-safety: Simulate() shares no state between calls.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/duration_estimator.h"
#include "core/job.h"
#include "core/result.h"
#include "core/sim_time.h"
#include "policy/colocation_model.h"
#include "policy/scheduling_policy.h"

namespace schedmate::sim {

// Largest cluster (all partitions) and node the simulator accepts: node indices and GPU counts
// stay far inside int32, and the per-node state (free maps, failure events) stays small.
inline constexpr int64_t kMaxClusterGpus = int64_t{1} << 20;  // 1,048,576
inline constexpr int32_t kMaxGpusPerNode = 1024;
// Largest cluster, in nodes, with node failures: every failure and repair reschedules its
// partition (a policy call over all its nodes), so the cost grows with the square of the nodes.
inline constexpr int64_t kMaxFailureNodes = 4096;
// Simulated time after which a run stops (about 146,000 years): event times stay in int64.
inline constexpr SimTime kMaxSimTime = SimTime::FromMicros(int64_t{1} << 62);
// Memory: SimResult::series keeps fewer samples than this (when full, every other sample is
// dropped and the period doubles); the event queue holds at most about max_events events, since
// every queued event counts against the limit.
inline constexpr size_t kMaxSeriesPoints = size_t{1} << 20;
// Node failures (see CheckFailureFeasibility): without checkpoints a job's run may be at most
// kMaxRunPerUptime times its mean failure-free time; with checkpoints that time must be at least
// kMinUptimePerStretch times its checkpoint interval plus restore cost.
inline constexpr double kMaxRunPerUptime = 4.0;
inline constexpr double kMinUptimePerStretch = 2.0;

// Extra work a preempted (or failure-restarted, when checkpointing) job must redo.
struct PreemptionCost {
  Duration small = Duration::Seconds(40);  // jobs with <= large_above_gpus GPUs
  Duration large = Duration::Seconds(60);
  int32_t large_above_gpus = 8;
  Duration For(int32_t gpus) const { return gpus > large_above_gpus ? large : small; }
};

struct FailureOptions {
  bool enabled = false;
  Duration mtbf = Duration::Hours(24 * 30);  // per node; > 0 when enabled
  Duration mttr = Duration::Hours(2);        // >= 0; repairs take at least 1 us
  // 0: a killed job restarts from scratch; > 0: from its last checkpoint (taken every
  // checkpoint_interval of run time) plus the restore cost.
  Duration checkpoint_interval;
};

// A modelled tracker ETA for running jobs (issue 12): what a job's log would say about its
// remaining time. Once a job has done `after_fraction` of its true run time, its ETA is the true
// remaining solo work x N, N = exp(sigma x Z), Z standard normal, one draw per job (in job order,
// from a stream seeded by SimOptions::seed, separate from the failure stream). Policies read it
// through JobView::EtaAt; off by default.
struct EtaOptions {
  bool enabled = false;
  double sigma = 0.3;           // >= 0; 0: exact
  double after_fraction = 0.1;  // in [0, 1]
};

// A job already running when a run starts: fast-forwarding a live cluster's snapshot (the
// companion's start estimates). `job` is a row of the table whose submit time is the snapshot
// time and whose duration is what remains of its run; it holds `nodes` of its partition from the
// start and is never enqueued. `started` is when it really started: what policies see as its
// start (Slurm's backfill plans it to end at started + its time limit).
struct RunningAtStart {
  policy::JobIndex job = policy::kNoJob;
  SimTime started;
  std::vector<policy::NodeShare> nodes;
};

struct SimOptions {
  bool lucid_compat = false;
  PreemptionCost preemption_cost;
  FailureOptions failures;
  EtaOptions eta;
  uint64_t seed = 1;
  // Co-location slowdown model; null: a utilisation-only ColocationModel.
  const policy::ColocationModel* colocation = nullptr;
  // Told about every finished job (online learning); may be null. Not owned.
  DurationEstimator* estimator = nullptr;
  // Draw a progress bar on stderr (callers pass ProgressBar::StderrIsInteractive()).
  bool progress = false;
  std::string progress_label = "simulate";
  // Time-series sampling period for plots; 0 = about 1000 samples over the submit span.
  Duration sample_interval;
  // Stop with kResourceExhausted once this many events (finishes, node failures and repairs,
  // policy wake-ups) have been queued; 0: DefaultMaxEvents() for the trace and cluster. Bounds
  // both the run time and the event queue's memory.
  int64_t max_events = 0;
  // Jobs running at the start (see RunningAtStart); empty for trace replays.
  std::vector<RunningAtStart> running_at_start;
  // Fill JobOutcome::first_nodes (off by default: replays do not need it).
  bool record_first_nodes = false;
};

// The default event limit: kDefaultEventsBase plus kDefaultEventsPerJob per job plus, with
// failures, twice the expected node failures (and repairs) over four times a failure-free
// makespan estimate (submit span + longest job + total GPU-time / cluster GPUs). Valid runs use
// 1 to 4 events per job (Venus, Chronus, every policy, Lucid-compatible mode too); a run that keeps
// going past the limit is one in which jobs stopped making progress.
inline constexpr int64_t kDefaultEventsBase = 100'000;
inline constexpr int64_t kDefaultEventsPerJob = 50;
int64_t DefaultMaxEvents(const JobTable& jobs, const ClusterSpec& cluster,
                         const SimOptions& options);

// kInvalidArgument (naming the VC) for a cluster beyond kMaxClusterGpus or kMaxGpusPerNode, with
// negative nodes or with no GPUs; for failure options that are not finite and positive, and for
// failures on more than kMaxFailureNodes nodes.
Status CheckSimConfig(const ClusterSpec& cluster, const SimOptions& options);

// The rule for node failures. Each node fails independently at rate 1/MTBF, so a job spanning n
// nodes (at least ceil(GPUs / GPUs per node) of its partition) runs U = MTBF / n on average
// between failures. The run is refused (kInvalidArgument naming the job, n, MTBF and the numbers
// compared) when, for some job it would run:
//  - without checkpoints, its run time D > kMaxRunPerUptime * U: a killed job restarts from
//    scratch, so finishing takes e^(D/U) attempts on average (e^4, about 55, at the bound);
//  - with checkpoints every C, U < kMinUptimePerStretch * (min(C, D) + R), R the restore cost
//    (PreemptionCost for its size): each restart redoes R and loses up to C, so with less uptime
//    than that between failures the job gains little or nothing per failure.
// OK when failures are off.
Status CheckFailureFeasibility(const JobTable& jobs, const ClusterSpec& cluster,
                               const SimOptions& options);

struct JobOutcome {
  int32_t partition = -1;  // -1: skipped (no GPUs or unknown VC)
  SimTime submit;
  SimTime first_start = SimTime::Max();
  SimTime finish = SimTime::Max();
  Duration queued;  // total time pending (first wait plus waits after preemptions)
  int32_t preemptions = 0;
  int32_t failure_restarts = 0;
  bool rejected = false;             // infeasible
  std::vector<int32_t> first_nodes;  // nodes of its first start (SimOptions::record_first_nodes)
  bool finished() const { return finish != SimTime::Max(); }
  Duration jct() const { return finish - submit; }
};

struct TimePoint {
  SimTime time;
  int64_t pending_jobs = 0;
  int64_t running_jobs = 0;
  int64_t busy_gpus = 0;
  int64_t up_gpus = 0;
};

struct SimResult {
  std::string policy;
  std::vector<std::string> partitions;  // VC names, in config order
  std::vector<JobOutcome> jobs;         // one per JobTable row
  std::vector<TimePoint> series;
  int64_t skipped_no_gpu = 0;
  int64_t skipped_unknown_vc = 0;
  int64_t rejected = 0;
  int64_t unfinished = 0;  // still pending when no event was left (a policy that never starts)
  int64_t scheduling_calls = 0;
  int64_t node_failures = 0;
  int64_t events = 0;           // events queued (what SimOptions::max_events limits)
  double busy_gpu_seconds = 0;  // integral of GPUs in use over time
  int64_t total_gpus = 0;
  SimTime first_submit;
  SimTime last_finish;
  uint64_t seed = 0;
};

// Creates one policy instance per partition (called in VC-config order).
using PolicyMaker = std::function<Result<std::unique_ptr<policy::SchedulingPolicy>>()>;

// Runs the whole trace. SimOptions::running_at_start that cannot hold (an unknown or skipped job,
// a placement that does not fit or differs from the job's GPUs) is kInvalidArgument naming the
// job. kInvalidArgument for an empty or oversized cluster, bad failure options or
// a configuration CheckFailureFeasibility() refuses; kResourceExhausted when the event limit or
// kMaxSimTime is reached (names which); kInternal when the policy returns a decision that cannot
// be applied (names the policy, job and reason).
Result<SimResult> Simulate(const JobTable& jobs, const ClusterSpec& cluster,
                           const PolicyMaker& make_policy, const SimOptions& options = {});

}  // namespace schedmate::sim
