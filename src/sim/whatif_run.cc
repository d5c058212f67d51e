#include "sim/whatif_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/strings.h"
#include "policy/policy_registry.h"
#include "sim/sim_json.h"
#include "sim/simulator.h"
#include "trace/trace_generator.h"
#include "trace/trace_reader.h"

namespace schedmate::sim {
namespace {

constexpr int64_t kMaxWhatIfSeeds = 100;

Status Cancelled(const WhatIfLimits& limits) {
  if (limits.cancel != nullptr && limits.cancel->load()) {
    return Status::DeadlineExceeded("what-if run stopped: it took longer than allowed");
  }
  return Status::Ok();
}

}  // namespace

Result<WhatIfRunResult> ReplayOnce(const JobTable& table, const ClusterSpec& cluster,
                                   const std::string& policy, const policy::SlurmConfig& slurm,
                                   uint64_t seed, const std::string& label,
                                   const WhatIfLimits& limits) {
  SM_RETURN_IF_ERROR(Cancelled(limits));
  policy::PolicyRegistry registry;
  SM_RETURN_IF_ERROR(policy::RegisterBuiltinPolicies(registry));
  policy::PolicyConfig pc;
  pc.slurm = &slurm;
  PolicyMaker maker = [&]() { return registry.Create(policy, pc); };
  SimOptions options;
  options.seed = seed;
  options.progress = limits.progress;
  options.progress_label = label;
  const auto t0 = std::chrono::steady_clock::now();
  auto result = Simulate(table, cluster, maker, options);
  if (!result.ok()) {
    return Status(result.status().code(), label + ": " + result.status().message());
  }
  WhatIfRunResult run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.metrics = MeasureWhatIf(table, *result);
  for (const auto& o : result->jobs) {
    if (o.partition >= 0 && o.finished()) run.queue_s.push_back(o.queued.seconds_f());
  }
  return run;
}

namespace {

// Keeps the latest `keep` jobs by submit time (ties: the later row), in file order.
void KeepLatest(JobTable& table, size_t keep) {
  if (table.jobs.size() <= keep) return;
  std::vector<size_t> idx(table.jobs.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return table.jobs[a].submit < table.jobs[b].submit; });
  std::vector<size_t> kept(idx.end() - static_cast<std::ptrdiff_t>(keep), idx.end());
  std::sort(kept.begin(), kept.end());
  std::vector<JobRecord> jobs;
  jobs.reserve(keep);
  for (size_t i : kept) jobs.push_back(std::move(table.jobs[i]));
  table.jobs = std::move(jobs);
}

// One pool holding the GPU total in nodes of the largest size (a partition has one node size).
void SetPool(int32_t nodes, int32_t max_gpus, int64_t total_gpus, bool heterogeneous,
             WhatIfSite& site) {
  VcSpec v;
  v.gpus_per_node = max_gpus;
  v.nodes = nodes;
  if (heterogeneous) {
    v.nodes = static_cast<int32_t>((total_gpus + max_gpus - 1) / max_gpus);
    site.notes.push_back(fmt::format("nodes differ in GPUs: modelled as {} nodes of {} GPUs",
                                     v.nodes, v.gpus_per_node));
  }
  site.cluster.vcs = {v};
}

Status Bad(std::string* field, const char* name, std::string message) {
  if (field != nullptr) *field = name;
  return Status::InvalidArgument(std::move(message));
}

}  // namespace

std::optional<NodeChange> ParseNodeChange(std::string_view text, bool with_size) {
  NodeChange s;
  std::string_view t = Trim(text);
  if (size_t colon = t.find(':'); colon != std::string_view::npos) {
    s.vc = std::string(Trim(t.substr(colon + 1)));
    if (s.vc.empty()) return std::nullopt;
    t = t.substr(0, colon);
  }
  std::string_view count = t, gpus;
  if (with_size) {
    size_t x = t.find_first_of("xX");
    if (x == std::string_view::npos) return std::nullopt;
    count = t.substr(0, x);
    gpus = t.substr(x + 1);
  }
  auto c = ParseInt(Trim(count));
  if (!c || *c <= 0 || *c > 1'000'000) return std::nullopt;
  s.count = static_cast<int32_t>(*c);
  if (with_size) {
    auto g = ParseInt(Trim(gpus));
    if (!g || *g <= 0 || *g > kMaxGpusPerNode) return std::nullopt;
    s.gpus = static_cast<int32_t>(*g);
  }
  return s;
}

std::string_view NodeChangeSyntax(bool with_size) {
  return with_size ? "expected NODESxGPUS[:PARTITION], e.g. 4x8, with 1..1000000 nodes and "
                     "1..1024 GPUs per node"
                   : "expected NODES[:PARTITION], e.g. 2, with 1..1000000 nodes";
}

Status LoadSiteFromSlurmConf(const std::string& path, bool take_cluster, WhatIfSite& site) {
  SM_ASSIGN_OR_RETURN(auto conf, policy::ReadSlurmConf(path));
  site.config = conf.config;
  for (const auto& k : site.config.unmodelled) site.notes.push_back("not modelled: " + k);
  if (!take_cluster) return Status::Ok();
  if (conf.nodes.nodes <= 0) {
    return Status::InvalidArgument(path + ": no NodeName lines: give --nodes or --vc-config");
  }
  if (conf.nodes.gpus_per_node <= 0) {
    return Status::InvalidArgument(path + ": no node has GPUs (Gres=gpu:N or gres.conf)");
  }
  SetPool(conf.nodes.nodes, conf.nodes.gpus_per_node, conf.nodes.total_gpus,
          conf.nodes.heterogeneous, site);
  return CheckSimConfig(site.cluster, SimOptions{});
}

Status SetSiteClusterFromNodes(const std::vector<int32_t>& node_gpus, const std::string& source,
                               WhatIfSite& site) {
  int32_t nodes = 0, max_gpus = 0, min_gpus = 0;
  int64_t total = 0;
  for (int32_t g : node_gpus) {
    if (g <= 0) continue;
    min_gpus = nodes == 0 ? g : std::min(min_gpus, g);
    max_gpus = std::max(max_gpus, g);
    total += g;
    ++nodes;
  }
  if (nodes == 0) return Status::InvalidArgument(source + ": no node has GPUs");
  SetPool(nodes, max_gpus, total, min_gpus != max_gpus, site);
  return CheckSimConfig(site.cluster, SimOptions{});
}

Status PrepareWhatIfHistory(WhatIfSite& site) {
  JobTable& history = site.history;
  if (!trace::FormatHasDurations(history.format)) {
    return Status::InvalidArgument(fmt::format("{}: {} traces carry no run times", history.source,
                                               TraceFormatName(history.format)));
  }
  if (history.jobs.size() < 2) {
    return Status::InvalidArgument(fmt::format("{}: {} usable jobs; a what-if needs at least 2",
                                               history.source, history.jobs.size()));
  }
  if (history.rows_skipped > 0) {
    site.notes.push_back(
        fmt::format("skipped {} rows of {} (malformed, unfinished or never started)",
                    history.rows_skipped, history.source));
  }
  if (int64_t capped = CapDurationsAtLimits(history); capped > 0) {
    site.notes.push_back(
        fmt::format("{} jobs ran past their limit in the export; capped at it", capped));
  }
  return Status::Ok();
}

JobTable HistoryFromRecords(std::vector<JobRecord> records, std::string source) {
  JobTable t;
  t.source = std::move(source);
  t.format = TraceFormat::kSacct;
  std::stable_sort(records.begin(), records.end(),
                   [](const JobRecord& a, const JobRecord& b) { return a.submit < b.submit; });
  t.rows_read = static_cast<int64_t>(records.size());
  t.jobs = std::move(records);
  return t;
}

Result<WhatIfSetup> SetUpWhatIf(const WhatIfSite& site, const WhatIfScenario& s,
                                const WhatIfLimits& limits, std::string* field) {
  policy::PolicyRegistry registry;
  SM_RETURN_IF_ERROR(policy::RegisterBuiltinPolicies(registry));
  WhatIfSetup out;
  out.baseline_policy = s.baseline_policy;
  out.scenario_policy = s.policy.empty() ? s.baseline_policy : s.policy;
  const auto known = fmt::format("{}", fmt::join(registry.Names(), ", "));
  if (!registry.Contains(s.baseline_policy)) {
    return Bad(field, "baseline_policy",
               fmt::format("unknown policy '{}' (known: {})", s.baseline_policy, known));
  }
  if (!registry.Contains(out.scenario_policy)) {
    return Bad(field, "policy",
               fmt::format("unknown policy '{}' (known: {})", out.scenario_policy, known));
  }
  if (!(s.load >= 0.01 && s.load <= 100)) {
    return Bad(field, "load", fmt::format("{} is outside 0.01..100", s.load));
  }
  const int64_t max_seeds = limits.max_seeds > 0 ? limits.max_seeds : kMaxWhatIfSeeds;
  if (s.seeds < 1 || s.seeds > max_seeds) {
    return Bad(field, "seeds", fmt::format("{} is outside 1..{}", s.seeds, max_seeds));
  }
  out.cluster = site.cluster;
  out.config = site.config;
  for (const auto& text : s.add_nodes) {
    auto spec = ParseNodeChange(text, /*with_size=*/true);
    if (!spec) return Bad(field, "add_nodes", text + ": " + std::string(NodeChangeSyntax(true)));
    if (Status st = AddNodes(out.cluster, spec->count, spec->gpus, spec->vc); !st.ok()) {
      return Bad(field, "add_nodes", text + ": " + st.message());
    }
    out.changes.push_back("add-nodes " + text);
  }
  for (const auto& text : s.remove_nodes) {
    auto spec = ParseNodeChange(text, /*with_size=*/false);
    if (!spec) {
      return Bad(field, "remove_nodes", text + ": " + std::string(NodeChangeSyntax(false)));
    }
    if (Status st = RemoveNodes(out.cluster, spec->count, spec->vc); !st.ok()) {
      return Bad(field, "remove_nodes", text + ": " + st.message());
    }
    out.changes.push_back("remove-nodes " + text);
  }
  if (Status st = CheckSimConfig(out.cluster, SimOptions{}); !st.ok()) {
    return Bad(field, s.add_nodes.empty() ? "remove_nodes" : "add_nodes",
               "scenario cluster: " + st.message());
  }
  for (const auto& [key, value] : s.sets) {
    const std::string kv = key + "=" + value;
    if (Status st = policy::ApplySlurmSetting(out.config, key, value); !st.ok()) {
      return Bad(field, "set", kv + ": " + st.message());
    }
    out.changes.push_back("set " + kv);
  }
  if (!s.policy.empty()) out.changes.push_back("policy " + s.policy);
  if (s.load != 1.0) out.changes.push_back(fmt::format("load x{}", s.load));
  return out;
}

Result<WhatIfReport> RunWhatIf(const WhatIfSite& site, const WhatIfSetup& setup,
                               const WhatIfScenario& s, const WhatIfLimits& limits) {
  WhatIfReport report;
  report.setup = setup;
  report.notes = site.notes;
  const bool random = s.load != 1.0;
  JobTable history = site.history;
  if (limits.max_jobs > 0) {
    // Each run simulates at most max_jobs jobs: a resampled history has load x its jobs.
    const auto keep = static_cast<size_t>(std::max<int64_t>(
        2, static_cast<int64_t>(static_cast<double>(limits.max_jobs) / std::max(1.0, s.load))));
    if (history.jobs.size() > keep) {
      report.notes.push_back(fmt::format("replayed the latest {} of {} jobs (at most {} per run)",
                                         keep, history.jobs.size(), limits.max_jobs));
      KeepLatest(history, keep);
    }
  }
  report.history_jobs = static_cast<int64_t>(history.jobs.size());
  SM_ASSIGN_OR_RETURN(report.baseline, ReplayOnce(history, site.cluster, setup.baseline_policy,
                                                  site.config, s.seed, "baseline", limits));
  const int64_t n_seeds = random ? s.seeds : 1;
  for (int64_t i = 0; i < n_seeds; ++i) {
    const uint64_t seed = s.seed + static_cast<uint64_t>(i);
    report.seeds.push_back(seed);
    JobTable resampled;
    if (random) {
      trace::GenerateOptions g;
      g.seed = seed;
      g.load_factor = s.load;
      // L times the jobs with gaps divided by L: the same span at L times the offered load.
      g.jobs =
          std::max<int64_t>(2, std::llround(static_cast<double>(history.jobs.size()) * s.load));
      SM_ASSIGN_OR_RETURN(auto gen, trace::GenerateTrace(history, g));
      resampled = std::move(gen.table);
    }
    SM_ASSIGN_OR_RETURN(WhatIfRunResult r,
                        ReplayOnce(random ? resampled : history, setup.cluster,
                                   setup.scenario_policy, setup.config, seed, "scenario", limits));
    report.scenario_max_seconds = std::max(report.scenario_max_seconds, r.seconds);
    if (i == 0) report.first_queue_s = std::move(r.queue_s);
    report.runs.push_back(std::move(r.metrics));
  }
  report.scenario = MeanWhatIfMetrics(report.runs);
  // What the site's Slurm really did, when the history records it (sacct Start - Eligible).
  report.observed = MeasureObservedWaits(history);
  return report;
}

nlohmann::json WhatIfReportToJson(const WhatIfReport& r, const WhatIfSite& site) {
  return {
      {"observed", ObservedWaitsToJson(r.observed)},
      {"baseline", WhatIfMetricsToJson(r.baseline.metrics)},
      {"scenario", WhatIfMetricsToJson(r.scenario)},
      {"spread", WhatIfSpreadToJson(r.runs, r.seeds)},
      {"changes", r.setup.changes},
      {"policy", {{"baseline", r.setup.baseline_policy}, {"scenario", r.setup.scenario_policy}}},
      {"cluster",
       {{"baseline_gpus", site.cluster.total_gpus()},
        {"scenario_gpus", r.setup.cluster.total_gpus()}}},
      {"history_jobs", r.history_jobs},
      {"notes", r.notes},
      {"timing_s", {{"baseline", r.baseline.seconds}, {"scenario_max", r.scenario_max_seconds}}}};
}

}  // namespace schedmate::sim
