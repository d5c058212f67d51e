#pragma once
// QueueOrderer: live snapshot -> scheduling policy -> ranking -> bounded priority plan. The
// `order` mode of `schedmate serve` (service_config.h `scheduling.*`) calls it once per pass and
// hands the plan to the companion, which records and applies it with `scontrol update
// Priority=`. Nothing here talks to Slurm: the input is a value snapshot, the output is data.
//
// Ranking, per partition (Slurm compares priorities across the jobs that compete for the same
// nodes; each partition is ranked on its own):
//  1. Aged jobs first: a job that has waited at least half of `max_wait` goes to the front, the
//     longest waiting first, so that Slurm starts it (or, with time limits, reserves for it)
//     before the bound; the ranking never lets the policy keep it behind newer jobs.
//  2. Jobs the policy would start now on the partition's free GPUs, in the order it starts them
//     (its backfill choices: a short job that fits beats a wide one that does not).
//  3. The rest in the policy's queue order: the order in which it would start them on an empty
//     partition large enough for all of them.
// The policy is the simulator's own (src/policy, by registry name), driven through the same
// SchedulingInput a simulation builds: JobRecord::estimate and ::duration are the advisor's
// prediction (so `sjf` is SJF by prediction), attained service is zero for a pending job. It is
// never asked to preempt: `schedmate` runs without preemption and un-packing, and a policy's
// Preempt decisions and GPU-sharing starts are ignored (the companion never touches running
// jobs). A fresh policy instance per pass keeps passes independent (no learned state).
//
// Priorities (Slurm runs the higher value first): schedmate keeps the jobs it manages inside a
// band [priority_min, priority_max] and changes as few of them as it can per pass. The jobs whose
// current priority is one schedmate set and that already appear in decreasing order along the
// ranking (a longest such subsequence) keep their values; the others get values in the gaps
// between them (`gap` apart where there is room, else spread evenly); only when a gap is too
// small is the whole partition renumbered around the band's middle. Changes are listed in rank
// order and at most `max_changes` are returned (the top of the queue first); the rest wait for
// the next pass (`deferred`).
//
// Thread-safety: Plan() is const and keeps no state; one orderer may be shared.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"

namespace schedmate::service {

struct OrderOptions {
  std::string policy = "schedmate";  // a name from policy::DefaultPolicyNames()
  int max_changes = 20;              // priority changes per pass (all partitions)
  Duration max_wait = Duration::Hours(6);
  int64_t priority_min = 4294901761;  // above priority/basic's numbering (0xffff0000 down)
  int64_t priority_max = 4294967293;  // below Slurm's NO_VAL/INFINITE
  int64_t gap = 16;                   // spacing between neighbours when there is room
};

// A node as the orderer needs it.
struct OrderNode {
  std::string name;
  std::vector<std::string> partitions;  // empty = every partition
  int32_t gpus_total = 0;
  int32_t gpus_used = 0;
  bool available = true;  // up and not drained
};

// A pending job schedmate may reorder (the caller has already left out held jobs and jobs
// whose user set --nice/--priority).
struct OrderJob {
  std::string id;
  std::string user;
  std::string partition;
  int32_t nodes = 1;
  int32_t gpus_per_node = 0;
  int32_t gpus = 0;  // total
  SimTime submit;
  Duration predicted;    // the advisor's point estimate (the caller's fallback when none)
  int64_t priority = 0;  // what Slurm shows now
  bool ours = false;     // `priority` is a value schedmate set (and nobody changed since)
};

struct OrderInput {
  SimTime now;
  std::span<const OrderNode> nodes;
  std::span<const OrderJob> pending;
};

// Why a job sits where it does in the ranking.
enum class RankReason { kAged, kStartsNow, kPolicyOrder };
std::string_view RankReasonName(RankReason r);  // "aged", "starts_now", "policy_order"

struct RankedJob {
  std::string job_id;
  std::string partition;
  int32_t rank = 0;  // 0 = first, per partition
  RankReason reason = RankReason::kPolicyOrder;
  int64_t current = 0;  // priority now
  int64_t target = 0;   // priority the plan wants
  Duration waited;
  Duration predicted;
};

struct PriorityChange {
  std::string job_id;
  int64_t from = 0;
  int64_t to = 0;
  int32_t rank = 0;
  std::string reason;  // for the action log: "rank 1/7 by schedmate (starts now ...)"
};

struct OrderPlan {
  std::string policy;
  std::vector<RankedJob> ranking;       // by partition, then rank
  std::vector<PriorityChange> changes;  // at most max_changes, top ranks first
  int64_t deferred = 0;                 // changes left for later passes by the cap
  int64_t renumbered_partitions = 0;    // partitions whose band had to be renumbered
};

// One partition's targets: the band rules described above, given the current priorities along
// the ranking and which of them schedmate set. Exposed for tests.
std::vector<int64_t> AssignPriorities(std::span<const int64_t> current, std::span<const bool> ours,
                                      const OrderOptions& options, bool* renumbered = nullptr);

class QueueOrderer {
 public:
  // kInvalidArgument for an unknown policy or an empty/inverted band.
  static Result<QueueOrderer> Create(OrderOptions options);

  Result<OrderPlan> Plan(const OrderInput& input) const;
  const OrderOptions& options() const { return options_; }

 private:
  explicit QueueOrderer(OrderOptions options) : options_(std::move(options)) {}
  OrderOptions options_;
};

}  // namespace schedmate::service
