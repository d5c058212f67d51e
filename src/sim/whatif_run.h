#pragma once
// One what-if run, shared by `schedmate whatif` (cli/whatif_command.cc) and `POST /v1/whatif`
// (api/): the site (its Slurm configuration, its cluster, its history), a scenario (nodes added
// or removed, load scaled, another policy, slurm.conf settings, seeds), and the run that replays
// the history on both and reports baseline vs scenario metrics (whatif.h) with their spread.
//
// Rules: the baseline is one run of the history as it is (seed `seed`); the scenario is one run
// when the load is unchanged, else `seeds` runs on histories resampled at the load (seeds seed,
// seed+1, ...), averaged by MeanWhatIfMetrics. Durations are capped at the jobs' limits.
// Bounds (WhatIfLimits): the history keeps its latest jobs (by submit time, ties in file order)
// so that no run simulates more than max_jobs jobs, at most max_seeds seeds, and a cancel flag
// checked before each simulation (kDeadlineExceeded once set).

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "policy/slurm_config.h"
#include "sim/whatif.h"

namespace schedmate::sim {

// "4x8", "4x8:gpu" (count x GPUs per node [: partition]) or, for removals, "2" / "2:gpu".
struct NodeChange {
  int32_t count = 0;
  int32_t gpus = 0;  // 0 for removals
  std::string vc;    // "" = the only partition
};
// nullopt unless 1..1,000,000 nodes and (with_size) 1..kMaxGpusPerNode GPUs per node.
std::optional<NodeChange> ParseNodeChange(std::string_view text, bool with_size);
// What ParseNodeChange expects, for error messages.
std::string_view NodeChangeSyntax(bool with_size);

// The site: its Slurm configuration, its cluster and its history (file order kept).
struct WhatIfSite {
  policy::SlurmConfig config;
  ClusterSpec cluster;
  JobTable history;
  std::vector<std::string> notes;  // what was assumed or left out, for people
};

// The site's Slurm configuration from its slurm.conf (unmodelled keys noted) and, with
// `take_cluster`, its cluster (nodes with Gres=gpu:N or gres.conf beside it): heterogeneous nodes
// become nodes of the largest size holding the same GPU total (noted). kInvalidArgument naming
// the file when (take_cluster) no node has GPUs or there are no NodeName lines.
Status LoadSiteFromSlurmConf(const std::string& path, bool take_cluster, WhatIfSite& site);

// The site's cluster from the GPUs of its nodes (what Slurm shows now), by the same rule; nodes
// without GPUs are left out. kInvalidArgument naming `source` when no node has GPUs.
Status SetSiteClusterFromNodes(const std::vector<int32_t>& node_gpus, const std::string& source,
                               WhatIfSite& site);

// Checks and prepares `site.history` for replay: a format with run times, at least 2 jobs,
// skipped rows noted, durations capped at limits (noted). kInvalidArgument naming the source.
Status PrepareWhatIfHistory(WhatIfSite& site);

// A history from stored job records (the service's store): sorted by submit time (stable),
// format sacct (records carry run times), `source` names it in errors.
JobTable HistoryFromRecords(std::vector<JobRecord> records, std::string source);

struct WhatIfScenario {
  std::string baseline_policy = "slurm";
  std::string policy;                                     // scenario's; "" = the baseline's
  std::vector<std::string> add_nodes;                     // NodeChange texts with size
  std::vector<std::string> remove_nodes;                  // NodeChange texts without size
  double load = 1.0;                                      // offered load factor, 0.01..100
  std::vector<std::pair<std::string, std::string>> sets;  // slurm.conf KEY, VALUE
  int64_t seeds = 3;                                      // runs when the load changes, >= 1
  uint64_t seed = 1;
};

struct WhatIfLimits {
  int64_t max_jobs = 0;   // jobs per simulated run (0 = no bound)
  int64_t max_seeds = 0;  // 0 = no bound
  // Set by another thread to stop the run before its next simulation; may be null.
  const std::atomic<bool>* cancel = nullptr;
  bool progress = false;  // stderr progress bars
};

// A scenario applied to a site, ready to run.
struct WhatIfSetup {
  ClusterSpec cluster;
  policy::SlurmConfig config;
  std::string baseline_policy;
  std::string scenario_policy;
  std::vector<std::string> changes;  // "add-nodes 4x8", "set bf_window=2880", ...
};

// kInvalidArgument for a change that does not apply (unknown policy, bad node text, a VC that does
// not exist, every node removed, an unknown setting, load or seeds out of range, more seeds than
// limits.max_seeds). `field` (may be null) receives the scenario field at fault: "policy",
// "baseline_policy", "add_nodes", "remove_nodes", "set", "load" or "seeds".
Result<WhatIfSetup> SetUpWhatIf(const WhatIfSite& site, const WhatIfScenario& scenario,
                                const WhatIfLimits& limits, std::string* field);

struct WhatIfRunResult {
  WhatIfMetrics metrics;
  std::vector<double> queue_s;  // finished jobs' waits (for the CDF plot)
  double seconds = 0;           // wall time of the simulation
};

// One replay of `table` on `cluster` under `policy` (configured by `slurm`), seeded; errors are
// the simulator's with `label` in front, kDeadlineExceeded when limits.cancel is set.
Result<WhatIfRunResult> ReplayOnce(const JobTable& table, const ClusterSpec& cluster,
                                   const std::string& policy, const policy::SlurmConfig& slurm,
                                   uint64_t seed, const std::string& label,
                                   const WhatIfLimits& limits);

struct WhatIfReport {
  WhatIfSetup setup;
  WhatIfRunResult baseline;
  WhatIfMetrics scenario;           // mean over the scenario runs
  std::vector<WhatIfMetrics> runs;  // one per seed
  std::vector<uint64_t> seeds;
  std::vector<double> first_queue_s;  // the first scenario run's waits
  double scenario_max_seconds = 0;
  int64_t history_jobs = 0;  // jobs replayed by the baseline
  std::optional<ObservedWaits> observed;
  std::vector<std::string> notes;
};

// Runs the baseline and the scenario. Errors: the simulator's (naming "baseline"/"scenario"),
// the load resampler's, kDeadlineExceeded once limits.cancel is set.
Result<WhatIfReport> RunWhatIf(const WhatIfSite& site, const WhatIfSetup& setup,
                               const WhatIfScenario& scenario, const WhatIfLimits& limits);

// {"observed", "baseline", "scenario", "spread", "changes", "policy", "cluster", "history_jobs",
//  "notes", "timing_s"}: what `schedmate whatif --json` prints and POST /v1/whatif answers.
nlohmann::json WhatIfReportToJson(const WhatIfReport& report, const WhatIfSite& site);

}  // namespace schedmate::sim
