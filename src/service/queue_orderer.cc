#include "service/queue_orderer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "core/job.h"
#include "policy/free_map.h"
#include "policy/policy_registry.h"
#include "policy/schedmate_policy.h"
#include "policy/scheduling_policy.h"

namespace schedmate::service {

std::string_view RankReasonName(RankReason r) {
  switch (r) {
    case RankReason::kAged:
      return "aged";
    case RankReason::kStartsNow:
      return "starts_now";
    case RankReason::kPolicyOrder:
      return "policy_order";
  }
  return "policy_order";
}

namespace {

// Indices (into `values`) of a longest strictly decreasing subsequence among `eligible` ones.
// Patience sorting on the negated values, O(n log n); ties broken towards earlier positions.
std::vector<size_t> LongestDecreasing(std::span<const int64_t> values,
                                      std::span<const bool> eligible) {
  std::vector<int64_t> tails;  // tails[k]: smallest -value ending an increasing run of k+1
  std::vector<size_t> tail_at;
  std::vector<ptrdiff_t> prev(values.size(), -1);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!eligible[i]) continue;
    const int64_t v = -values[i];
    auto it = std::lower_bound(tails.begin(), tails.end(), v);
    const size_t k = static_cast<size_t>(it - tails.begin());
    if (k > 0) prev[i] = static_cast<ptrdiff_t>(tail_at[k - 1]);
    if (it == tails.end()) {
      tails.push_back(v);
      tail_at.push_back(i);
    } else {
      *it = v;
      tail_at[k] = i;
    }
  }
  std::vector<size_t> out;
  if (tail_at.empty()) return out;
  for (ptrdiff_t i = static_cast<ptrdiff_t>(tail_at.back()); i >= 0; i = prev[i]) {
    out.push_back(static_cast<size_t>(i));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// Every job renumbered around the band's middle, `gap` apart (less when the band is too narrow;
// values are clamped to the band, so beyond its width neighbours share a value).
std::vector<int64_t> Renumber(size_t n, const OrderOptions& o) {
  const int64_t span = o.priority_max - o.priority_min;
  const int64_t g =
      std::max<int64_t>(1, std::min<int64_t>(o.gap, span / std::max<int64_t>(1, n + 1)));
  const int64_t mid = o.priority_min + span / 2;
  const int64_t top = std::min(o.priority_max, mid + g * static_cast<int64_t>(n) / 2);
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = std::max(o.priority_min, top - g * static_cast<int64_t>(i));
  }
  return out;
}

}  // namespace

std::vector<int64_t> AssignPriorities(std::span<const int64_t> current, std::span<const bool> ours,
                                      const OrderOptions& o, bool* renumbered) {
  const size_t n = current.size();
  if (renumbered != nullptr) *renumbered = false;
  std::vector<bool> eligible(n);
  for (size_t i = 0; i < n; ++i) {
    eligible[i] = ours[i] && current[i] >= o.priority_min && current[i] <= o.priority_max;
  }
  // std::vector<bool> has no contiguous storage: copy into a span-able buffer.
  std::unique_ptr<bool[]> flags(new bool[n == 0 ? 1 : n]);
  for (size_t i = 0; i < n; ++i) flags[i] = eligible[i];
  const std::vector<size_t> kept =
      LongestDecreasing(current, std::span<const bool>(flags.get(), n));
  auto renumber = [&] {
    if (renumbered != nullptr) *renumbered = true;
    return Renumber(n, o);
  };
  if (kept.empty()) return renumber();
  std::vector<int64_t> out(current.begin(), current.end());
  // The runs of jobs between kept neighbours (and before the first / after the last).
  size_t k = 0;  // next kept position
  size_t i = 0;
  while (i < n) {
    if (k < kept.size() && kept[k] == i) {
      ++i;
      ++k;
      continue;
    }
    const size_t run_end = k < kept.size() ? kept[k] : n;  // exclusive
    const size_t len = run_end - i;
    const bool has_prev = i > 0;  // kept[k-1] == i-1
    const bool has_next = k < kept.size();
    // Values must lie strictly between hi (previous kept) and lo (next kept), inside the band.
    const int64_t hi = has_prev ? current[i - 1] : o.priority_max + 1;
    const int64_t lo = has_next ? current[run_end] : o.priority_min - 1;
    if (hi - lo - 1 < static_cast<int64_t>(len)) return renumber();
    const auto ilen = static_cast<int64_t>(len);
    for (int64_t r = 0; r < ilen; ++r) {
      int64_t v;
      if (!has_prev && lo + o.gap * ilen < hi) {
        v = lo + o.gap * (ilen - r);  // above the first kept job, gap apart
      } else if (!has_next && hi - o.gap * ilen > lo) {
        v = hi - o.gap * (r + 1);  // below the last kept job, gap apart
      } else {
        v = hi - (hi - lo) * (r + 1) / (ilen + 1);  // spread evenly in between
      }
      out[i + static_cast<size_t>(r)] = v;
    }
    i = run_end;
  }
  return out;
}

Result<QueueOrderer> QueueOrderer::Create(OrderOptions options) {
  auto names = policy::DefaultPolicyNames();
  if (std::find(names.begin(), names.end(), options.policy) == names.end()) {
    return Status::InvalidArgument(fmt::format("unknown ordering policy '{}' (known: {})",
                                               options.policy, fmt::join(names, ", ")));
  }
  if (options.priority_min < 1 || options.priority_max > 4294967293 ||
      options.priority_max - options.priority_min < 2) {
    return Status::InvalidArgument(
        fmt::format("priority band {}..{} must lie within 1..4294967293 and hold at least 3 values",
                    options.priority_min, options.priority_max));
  }
  if (options.gap < 1) return Status::InvalidArgument("priority gap must be at least 1");
  if (options.max_changes < 0) return Status::InvalidArgument("max_changes must be >= 0");
  return QueueOrderer(std::move(options));
}

namespace {

struct PartitionJobs {
  std::vector<const OrderJob*> jobs;
  int32_t gpus_per_node = 1;
  std::vector<const OrderNode*> nodes;
};

std::unique_ptr<policy::SchedulingPolicy> MakePolicy(const std::string& name,
                                                     const policy::PolicyConfig& config) {
  if (name == "schedmate") {
    policy::SchedmateOptions o;
    o.preempt = false;  // the companion never touches running jobs
    o.unpack = false;
    return std::make_unique<policy::SchedmatePolicy>(config, o);
  }
  policy::PolicyRegistry registry;
  if (!policy::RegisterBuiltinPolicies(registry).ok()) return nullptr;
  auto p = registry.Create(name, config);
  return p.ok() ? std::move(*p) : nullptr;
}

// The jobs the policy starts, in start order, for one call on `free`. Starts that would share a
// running job's GPUs are left out (Slurm does not share GPUs between jobs).
Result<std::vector<policy::JobIndex>> Starts(const std::string& name,
                                             const std::vector<JobRecord>& records,
                                             std::vector<policy::JobStatus>& status,
                                             const policy::FreeMap& free, int32_t gpus_per_node,
                                             SimTime now) {
  policy::PolicyConfig config;
  auto p = MakePolicy(name, config);
  if (p == nullptr) return Status::Internal("cannot create policy " + name);
  std::vector<policy::JobView> pending;
  for (size_t j = 0; j < records.size(); ++j) {
    pending.push_back({static_cast<policy::JobIndex>(j), &records[j], &status[j]});
  }
  policy::PartitionView view;
  view.name = "live";
  view.gpus_per_node = gpus_per_node;
  view.total_gpus = free.total_up_gpus();
  view.free = &free;
  policy::SchedulingInput in{now, view, pending, {}, nullptr, /*first_call=*/true};
  policy::Decisions d = p->Schedule(in);
  std::vector<policy::JobIndex> out;
  for (const auto& s : d.start) {
    if (s.placement.share_with != policy::kNoJob) continue;
    if (s.job >= 0 && static_cast<size_t>(s.job) < records.size()) out.push_back(s.job);
  }
  return out;
}

}  // namespace

namespace {

// Pending jobs by partition, each with the nodes that take its jobs.
std::map<std::string, PartitionJobs> GroupByPartition(const OrderInput& input) {
  std::map<std::string, PartitionJobs> parts;
  for (const OrderJob& j : input.pending) parts[j.partition].jobs.push_back(&j);
  for (auto& [name, part] : parts) {
    for (const OrderNode& n : input.nodes) {
      bool in_part =
          n.partitions.empty() || name.empty() ||
          std::find(n.partitions.begin(), n.partitions.end(), name) != n.partitions.end();
      if (!in_part) continue;
      part.nodes.push_back(&n);
      part.gpus_per_node = std::max(part.gpus_per_node, n.gpus_total);
    }
  }
  return parts;
}

// One partition's pending jobs as the policy sees them (pending since submit, the prediction as
// duration and estimate), and how many nodes they would need all at once.
struct PolicyQueue {
  std::vector<JobRecord> records;
  std::vector<policy::JobStatus> status;
  int64_t nodes_needed = 0;
};

PolicyQueue MakePolicyQueue(const PartitionJobs& part, const std::string& name, SimTime now) {
  const size_t n = part.jobs.size();
  PolicyQueue q;
  q.records.resize(n);
  q.status.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const OrderJob& j = *part.jobs[i];
    JobRecord& r = q.records[i];
    r.id = j.id;
    r.user = j.user;
    r.vc = name;
    const int32_t gpus = std::max(1, j.gpus);
    r.gpus = GpuAmount::Whole(gpus);
    r.nodes = j.nodes;
    r.submit = j.submit;
    r.duration = std::max(j.predicted, Duration::Seconds(1));
    r.estimate = r.duration;
    policy::JobStatus& s = q.status[i];
    s.state = policy::RunState::kPending;
    s.gpus = gpus;
    s.queue_seq = static_cast<int64_t>(i) + 1;
    s.enqueued = j.submit;
    s.updated = now;
    s.remaining = r.duration;
    q.nodes_needed += (gpus + part.gpus_per_node - 1) / part.gpus_per_node;
  }
  return q;
}

// The partition as it is: free GPUs on nodes that take jobs.
policy::FreeMap RealFreeMap(const PartitionJobs& part) {
  policy::FreeMap real(static_cast<int32_t>(part.nodes.size()), part.gpus_per_node);
  for (size_t k = 0; k < part.nodes.size(); ++k) {
    const OrderNode& node = *part.nodes[k];
    const auto idx = static_cast<int32_t>(k);
    int32_t missing = part.gpus_per_node - std::max(0, node.gpus_total);  // smaller nodes
    int32_t used = std::clamp(node.gpus_used, 0, node.gpus_total) + missing;
    if (!node.available) {
      real.SetDown(idx);
    } else if (used > 0) {
      real.Take(idx, std::min(used, part.gpus_per_node));
    }
  }
  return real;
}

// A partition's ranking: indices into part.jobs, best first, and why each sits there.
struct PartitionRanking {
  std::vector<size_t> order;
  std::vector<RankReason> why;
};

// 1. aged jobs (waited half the bound), longest waiting first; 2. what the policy starts now on
// the real free GPUs; 3. the policy's queue order on an empty partition large enough for all;
// 4. jobs the policy never starts, in submit order.
Result<PartitionRanking> RankPartition(const PartitionJobs& part, PolicyQueue& q,
                                       const OrderOptions& o, SimTime now) {
  const size_t n = part.jobs.size();
  PartitionRanking out;
  out.why.assign(n, RankReason::kPolicyOrder);
  std::vector<bool> placed(n, false);
  auto place = [&](size_t i, std::optional<RankReason> why) {
    if (placed[i]) return;
    out.order.push_back(i);
    placed[i] = true;
    if (why) out.why[i] = *why;
  };
  std::vector<size_t> aged;
  for (size_t i = 0; i < n; ++i) {
    if (now - part.jobs[i]->submit >= o.max_wait / 2) aged.push_back(i);
  }
  std::stable_sort(aged.begin(), aged.end(),
                   [&](size_t a, size_t b) { return part.jobs[a]->submit < part.jobs[b]->submit; });
  for (size_t i : aged) place(i, RankReason::kAged);
  if (!part.nodes.empty()) {  // aged jobs hold the GPUs they would take first
    SM_ASSIGN_OR_RETURN(auto starts, Starts(o.policy, q.records, q.status, RealFreeMap(part),
                                            part.gpus_per_node, now));
    for (auto j : starts) place(static_cast<size_t>(j), RankReason::kStartsNow);
  }
  policy::FreeMap ample(static_cast<int32_t>(q.nodes_needed + 1), part.gpus_per_node);
  SM_ASSIGN_OR_RETURN(auto queue,
                      Starts(o.policy, q.records, q.status, ample, part.gpus_per_node, now));
  for (auto j : queue) place(static_cast<size_t>(j), std::nullopt);
  for (size_t i = 0; i < n; ++i) place(i, std::nullopt);
  return out;
}

// "rank 2/7 in partition gpu: sjf starts it now on the free GPUs (predicted 600s)".
std::string ChangeReason(const RankedJob& rj, size_t n, const OrderJob& j, const OrderOptions& o) {
  std::string because;
  switch (rj.reason) {
    case RankReason::kAged:
      because = fmt::format("waited {}s, over half of the {}s bound", rj.waited.seconds(),
                            o.max_wait.seconds());
      break;
    case RankReason::kStartsNow:
      because = fmt::format("{} starts it now on the free GPUs (predicted {}s)", o.policy,
                            j.predicted.seconds());
      break;
    case RankReason::kPolicyOrder:
      because = fmt::format("{} queue order (predicted {}s, {} GPU(s))", o.policy,
                            j.predicted.seconds(), j.gpus);
      break;
  }
  return fmt::format("rank {}/{} in partition {}: {}", rj.rank + 1, n,
                     rj.partition.empty() ? "(default)" : rj.partition, because);
}

}  // namespace

Result<OrderPlan> QueueOrderer::Plan(const OrderInput& input) const {
  const OrderOptions& o = options_;
  OrderPlan plan;
  plan.policy = o.policy;
  std::map<std::string, PartitionJobs> parts = GroupByPartition(input);
  std::vector<PriorityChange> all_changes;
  for (auto& [name, part] : parts) {
    // Deterministic input order: submit time, then id (numerically when both are numbers).
    std::stable_sort(part.jobs.begin(), part.jobs.end(), [](const OrderJob* a, const OrderJob* b) {
      if (a->submit != b->submit) return a->submit < b->submit;
      if (a->id.size() != b->id.size()) return a->id.size() < b->id.size();
      return a->id < b->id;
    });
    const size_t n = part.jobs.size();
    PolicyQueue queue = MakePolicyQueue(part, name, input.now);
    SM_ASSIGN_OR_RETURN(PartitionRanking ranking, RankPartition(part, queue, o, input.now));
    std::vector<int64_t> current(n);
    std::unique_ptr<bool[]> ours(new bool[n == 0 ? 1 : n]);
    for (size_t r = 0; r < n; ++r) {
      current[r] = part.jobs[ranking.order[r]]->priority;
      ours[r] = part.jobs[ranking.order[r]]->ours;
    }
    bool renumbered = false;
    std::vector<int64_t> target =
        AssignPriorities(current, std::span<const bool>(ours.get(), n), o, &renumbered);
    if (renumbered) ++plan.renumbered_partitions;
    for (size_t r = 0; r < n; ++r) {
      const OrderJob& j = *part.jobs[ranking.order[r]];
      RankedJob rj;
      rj.job_id = j.id;
      rj.partition = name;
      rj.rank = static_cast<int32_t>(r);
      rj.reason = ranking.why[ranking.order[r]];
      rj.current = j.priority;
      rj.target = target[r];
      rj.waited = input.now - j.submit;
      rj.predicted = j.predicted;
      if (target[r] != j.priority || !j.ours) {
        all_changes.push_back(
            PriorityChange{j.id, j.priority, target[r], rj.rank, ChangeReason(rj, n, j, o)});
      }
      plan.ranking.push_back(std::move(rj));
    }
  }
  // Top ranks first across partitions; ties by partition order (stable).
  std::stable_sort(
      all_changes.begin(), all_changes.end(),
      [](const PriorityChange& a, const PriorityChange& b) { return a.rank < b.rank; });
  const auto cap = static_cast<size_t>(o.max_changes);
  if (all_changes.size() > cap) {
    plan.deferred = static_cast<int64_t>(all_changes.size() - cap);
    all_changes.resize(cap);
  }
  plan.changes = std::move(all_changes);
  return plan;
}

}  // namespace schedmate::service
