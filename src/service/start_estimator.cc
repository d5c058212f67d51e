#include "service/start_estimator.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>

#include "core/clock.h"
#include "core/job.h"
#include "policy/placer.h"
#include "policy/policy_registry.h"
#include "policy/slurm_policy.h"
#include "sim/simulator.h"

namespace schedmate::service {
namespace {

using policy::JobIndex;
using policy::kNoJob;

// A node that holds fewer GPUs than the partition's largest keeps the rest taken this long.
constexpr int kWorkerNice = 10;  // the background fast-forward's thread
constexpr Duration kFillerRun = Duration::Hours(24 * 365 * 10);

bool IsHeld(const std::string& reason) {
  return reason.rfind("JobHeld", 0) == 0 || reason == "job_requeued_in_held_state" ||
         reason == "Dependency" || reason == "DependencyNeverSatisfied" ||
         reason == "PartitionDown" || reason == "PartitionInactive";
}

// The snapshot as a trace, a one-partition cluster and the jobs running at its start.
struct Snapshot {
  std::vector<std::string> names;          // available nodes, by name (= partition node index)
  std::map<std::string, int32_t> node_of;  // name -> index
  int32_t max_gpus = 0;
  JobTable table;
  sim::SimOptions options;
};

JobRecord Row(const std::string& id, SimTime submit, Duration duration, int64_t gpus,
              std::optional<Duration> limit) {
  JobRecord r;
  r.id = id;
  r.submit = submit;
  r.duration = std::max(duration, Duration::Micros(1));
  r.gpus = GpuAmount::Whole(gpus);
  r.time_limit = limit;
  r.state = JobState::kCompleted;
  return r;
}

void AddNodes(Snapshot& s, SimTime now, const std::vector<NodeCapacity>& nodes) {
  std::vector<NodeCapacity> sorted = nodes;
  std::sort(sorted.begin(), sorted.end(),
            [](const NodeCapacity& a, const NodeCapacity& b) { return a.name < b.name; });
  for (const auto& n : sorted) {
    if (!n.available || s.node_of.count(n.name) > 0) continue;
    s.node_of[n.name] = static_cast<int32_t>(s.names.size());
    s.names.push_back(n.name);
    s.max_gpus = std::max(s.max_gpus, std::max(0, n.gpus_total));
  }
  for (const auto& n : sorted) {
    auto it = s.node_of.find(n.name);
    if (it == s.node_of.end() || !n.available || n.gpus_total >= s.max_gpus) continue;
    const int32_t missing = s.max_gpus - std::max(0, n.gpus_total);
    s.options.running_at_start.push_back(
        {static_cast<JobIndex>(s.table.jobs.size()), now, {{it->second, missing}}});
    s.table.jobs.push_back(Row("~filler-" + n.name, now, kFillerRun, missing, std::nullopt));
  }
}

void AddRunning(Snapshot& s, SimTime now, Duration overrun,
                const std::vector<RunningJobLoad>& running) {
  for (const auto& r : running) {
    SimTime end = r.start + r.predicted;
    if (end < now + overrun) end = now + overrun;
    if (r.time_limit && r.start + *r.time_limit < end) {
      end = std::max(now + Duration::Seconds(1), r.start + *r.time_limit);
    }
    std::vector<policy::NodeShare> shares;
    int64_t gpus = 0;
    for (const auto& node : r.nodes) {
      auto it = s.node_of.find(node);
      if (it == s.node_of.end() || r.gpus_per_node <= 0) continue;  // a drained node frees nothing
      shares.push_back({it->second, r.gpus_per_node});
      gpus += r.gpus_per_node;
    }
    if (gpus == 0) continue;
    s.options.running_at_start.push_back(
        {static_cast<JobIndex>(s.table.jobs.size()), r.start, std::move(shares)});
    s.table.jobs.push_back(Row(r.job_id, now, end - now, gpus, r.time_limit));
  }
}

// Why `job` gets no time before the fast-forward, or "" when it takes part.
std::string NoTimeNote(const PendingJobRequest& job, const Snapshot& s) {
  if (IsHeld(job.reason)) return "held: starts only after " + job.reason + " clears";
  const int32_t want_nodes = std::max(1, job.nodes);
  if (job.gpus_per_node > s.max_gpus || want_nodes > static_cast<int32_t>(s.names.size())) {
    return fmt::format(
        "never fits: asks {} node(s) x {} GPU(s); {} available node(s) with at most {} GPU(s)",
        want_nodes, job.gpus_per_node, s.names.size(), s.max_gpus);
  }
  int32_t allowed = 0;
  for (const auto& name : s.names) {
    if (std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(), name) ==
        job.excluded_nodes.end()) {
      ++allowed;
    }
  }
  if (allowed < want_nodes) {
    std::string list;
    for (const auto& n : job.excluded_nodes) list += (list.empty() ? "" : ",") + n;
    return "never fits on the available nodes outside its ExcNodeList (" + list + ")";
  }
  return "";
}

std::string StartNote(SimTime start, SimTime now, SimTime earliest) {
  if (start == now) return "fits now; waiting for Slurm's next scheduling pass";
  if (start == earliest) {
    return fmt::format("eligible in {} (Slurm's BeginTime, e.g. a requeue's backoff)",
                       FormatDuration(start - now));
  }
  return fmt::format("after {} as running and earlier jobs end (predicted)",
                     FormatDuration(start - now));
}

}  // namespace

std::vector<StartEstimate> StartTimeEstimator::Estimate(
    SimTime now, const std::vector<NodeCapacity>& nodes, const std::vector<RunningJobLoad>& running,
    std::vector<PendingJobRequest> pending) const {
  std::stable_sort(pending.begin(), pending.end(),
                   [](const PendingJobRequest& a, const PendingJobRequest& b) {
                     if (a.priority != b.priority) return a.priority > b.priority;
                     if (a.submit != b.submit) return a.submit < b.submit;
                     if (a.job_id.size() != b.job_id.size())
                       return a.job_id.size() < b.job_id.size();
                     return a.job_id < b.job_id;
                   });
  Snapshot s;
  AddNodes(s, now, nodes);
  AddRunning(s, now, options_.overrun, running);
  policy::SlurmConfig slurm = options_.slurm;
  std::vector<StartEstimate> out(pending.size());
  std::vector<JobIndex> row(pending.size(), kNoJob);
  for (size_t i = 0; i < pending.size(); ++i) {
    const PendingJobRequest& job = pending[i];
    out[i].job_id = job.job_id;
    out[i].reason = job.reason;
    out[i].note = NoTimeNote(job, s);
    if (!out[i].note.empty()) continue;
    const SimTime earliest = job.not_before && *job.not_before > now ? *job.not_before : now;
    const int64_t gpus = static_cast<int64_t>(std::max(1, job.nodes)) * job.gpus_per_node;
    if (gpus <= 0) {  // no GPUs: nothing here holds it back
      out[i].start = earliest;
      out[i].note = StartNote(earliest, now, earliest);
      continue;
    }
    // Unique ids inside the fast-forward: Slurm's priority orders; ties keep this order.
    const std::string id = fmt::format("~{}~{}", i, job.job_id);
    slurm.given_priority[id] = static_cast<int64_t>(pending.size() - i);
    for (const auto& name : job.excluded_nodes) {
      if (auto it = s.node_of.find(name); it != s.node_of.end()) {
        slurm.excluded_nodes[id].push_back(it->second);
      }
    }
    row[i] = static_cast<JobIndex>(s.table.jobs.size());
    s.table.jobs.push_back(
        Row(id, earliest, std::max(job.predicted, Duration::Seconds(1)), gpus, job.time_limit));
  }
  if (std::none_of(row.begin(), row.end(), [](JobIndex j) { return j != kNoJob; })) return out;

  ClusterSpec cluster;
  cluster.vcs.push_back(VcSpec{});
  cluster.vcs[0].nodes = static_cast<int32_t>(s.names.size());
  cluster.vcs[0].gpus_per_node = s.max_gpus;
  s.options.record_first_nodes = true;
  policy::PolicyConfig pc;
  pc.placement = policy::PlacementKind::kConsolidate;
  pc.slurm = &slurm;
  auto result = sim::Simulate(
      s.table, cluster,
      [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
        return std::make_unique<policy::SlurmPolicy>(pc, slurm);
      },
      s.options);
  for (size_t i = 0; i < pending.size(); ++i) {
    if (row[i] == kNoJob) continue;
    if (!result.ok()) {
      out[i].note = "no estimate: the fast-forward failed: " + result.status().message();
      continue;
    }
    const sim::JobOutcome& o = result->jobs[static_cast<size_t>(row[i])];
    if (o.first_start == SimTime::Max() || o.first_start - now > kEstimateHorizon) {
      out[i].note = "never fits: not started within the fast-forward";
      continue;
    }
    out[i].start = o.first_start;
    for (int32_t n : o.first_nodes) out[i].nodes.push_back(s.names[static_cast<size_t>(n)]);
    out[i].note = StartNote(o.first_start, now, s.table.jobs[static_cast<size_t>(row[i])].submit);
  }
  return out;
}

StartEstimateRunner::StartEstimateRunner(StartEstimatorOptions options)
    : estimator_(std::move(options)) {}

StartEstimateRunner::~StartEstimateRunner() {
  if (worker_.valid()) worker_.wait();
}

std::vector<StartEstimate> StartEstimateRunner::Run(StartEstimateInputs in) {
  using SteadyClock = std::chrono::steady_clock;
  auto estimate = [this](StartEstimateInputs inputs) {
    Stopwatch watch;
    Outcome o;
    o.estimates =
        estimator_.Estimate(inputs.now, inputs.nodes, inputs.running, std::move(inputs.pending));
    o.seconds = watch.ElapsedSeconds();
    return o;
  };
  background_ = worker_.valid() || in.pending.size() > kSyncStartEstimatePending ||
                last_seconds_ > kSyncStartEstimateBudget;
  if (!background_) {
    Outcome o = estimate(std::move(in));
    last_seconds_ = o.seconds;
    return std::move(o.estimates);
  }
  std::vector<StartEstimate> out;
  if (worker_.valid() && worker_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    Outcome o = worker_.get();
    last_seconds_ = o.seconds;
    not_before_ = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                           std::chrono::duration<double>(o.seconds));
    out = std::move(o.estimates);
  }
  if (!worker_.valid() && SteadyClock::now() >= not_before_) {
    worker_ = std::async(
        std::launch::async,
        [estimate](StartEstimateInputs inputs) {
          // Background work: the pass and the API's workers come first (Linux: per thread).
          (void)setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kWorkerNice);
          return estimate(std::move(inputs));
        },
        std::move(in));
  }
  return out;
}

}  // namespace schedmate::service
