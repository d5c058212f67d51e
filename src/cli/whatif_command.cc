// `schedmate whatif`: replays the site's own history (a sacct export or any trace) on the site's
// scheduler (the `slurm` policy configured from its slurm.conf) and on a changed scenario (nodes
// added or removed, load scaled, another policy, other priority weights or backfill settings),
// and prints both sets of metrics with their spread over seeds.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "core/strings.h"
#include "plot/svg_plot.h"
#include "policy/policy_registry.h"
#include "policy/slurm_config.h"
#include "sim/metrics.h"
#include "sim/sim_json.h"
#include "sim/simulator.h"
#include "sim/whatif.h"
#include "trace/cluster_config.h"
#include "trace/trace_generator.h"
#include "trace/trace_reader.h"

namespace schedmate::cli {
namespace {

struct NodeSpec {
  int32_t count = 0;
  int32_t gpus = 0;  // 0: the partition's own node size
  std::string vc;
};

struct WhatIfArgs {
  TraceFlags trace;  // --trace, --format, --skip-malformed
  std::string vc_config;
  std::string slurm_conf;
  int64_t gpus_per_node = 8;
  int64_t nodes = 0;
  std::string baseline_policy = "slurm";
  std::string policy;  // scenario; "" = the baseline's
  std::vector<std::string> add_nodes;
  std::vector<std::string> remove_nodes;
  double load = 1.0;
  std::vector<std::string> sets;
  int64_t seeds = 3;
  uint64_t seed = 1;
  bool json = false;
  std::string plot;
};

// "4x8", "4x8:gpu" (count x GPUs per node [: partition]) or, for removals, "2" / "2:gpu".
std::optional<NodeSpec> ParseNodeSpec(const std::string& text, bool with_size) {
  NodeSpec s;
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
    if (!g || *g <= 0 || *g > sim::kMaxGpusPerNode) return std::nullopt;
    s.gpus = static_cast<int32_t>(*g);
  }
  return s;
}

CLI::Validator NodeSpecValidator(bool with_size) {
  return CLI::Validator(
      [with_size](std::string& input) -> std::string {
        if (ParseNodeSpec(input, with_size)) return "";
        return with_size ? "expected NODESxGPUS[:PARTITION], e.g. 4x8, with 1..1000000 nodes and "
                           "1..1024 GPUs per node"
                         : "expected NODES[:PARTITION], e.g. 2, with 1..1000000 nodes";
      },
      with_size ? "NODESxGPUS[:PART]" : "NODES[:PART]");
}

CLI::Validator KeyValueValidator() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        size_t eq = input.find('=');
        if (eq == std::string::npos || eq == 0) return "expected KEY=VALUE";
        return "";
      },
      "KEY=VALUE");
}

struct Run {
  sim::WhatIfMetrics metrics;
  std::vector<double> queue_s;  // finished jobs' waits, for the plot
  double seconds = 0;           // wall time of the simulation
};

Run Simulate(const JobTable& table, const ClusterSpec& cluster, const std::string& policy,
             const policy::SlurmConfig& slurm, uint64_t seed, const std::string& label) {
  policy::PolicyRegistry registry;
  if (Status st = policy::RegisterBuiltinPolicies(registry); !st.ok()) Fail(st);
  policy::PolicyConfig pc;
  pc.slurm = &slurm;
  sim::PolicyMaker maker = [&]() { return registry.Create(policy, pc); };
  sim::SimOptions options;
  options.seed = seed;
  options.progress_label = label;
  const auto t0 = std::chrono::steady_clock::now();
  auto result = sim::Simulate(table, cluster, maker, options);
  if (!result.ok()) {
    Fail(Status(result.status().code(), label + ": " + result.status().message()));
  }
  Run run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.metrics = sim::MeasureWhatIf(table, *result);
  for (const auto& o : result->jobs) {
    if (o.partition >= 0 && o.finished()) run.queue_s.push_back(o.queued.seconds_f());
  }
  return run;
}

void PrintText(const sim::WhatIfMetrics& base, const sim::WhatIfMetrics& scen,
               const nlohmann::json& spread, const std::vector<std::string>& changes) {
  std::cout << "scenario: "
            << (changes.empty() ? "(no change)" : fmt::format("{}", fmt::join(changes, ", ")))
            << "\n\n";
  std::cout << fmt::format("{:<14}{:>12}{:>12}{:>12}{:>12}{:>8}\n", "", "avg queue s",
                           "p95 queue s", "avg JCT s", "util", "jobs");
  auto row = [](const char* name, const sim::WhatIfMetrics& m) {
    std::cout << fmt::format("{:<14}{:>12.1f}{:>12.1f}{:>12.1f}{:>12.3f}{:>8}\n", name,
                             m.avg_queue_s, m.p95_queue_s, m.avg_jct_s, m.utilisation, m.jobs);
  };
  row("baseline", base);
  row("scenario", scen);
  if (spread["runs"].get<size_t>() > 1) {
    std::cout << fmt::format("{:<14}{:>12}\n", "spread",
                             fmt::format("+/-{:.1f}", spread["avg_queue_s"]["stdev"].get<double>()))
              << fmt::format("  (stdev of avg queue over {} seeds)\n",
                             spread["runs"].get<size_t>());
  }
  std::cout << "\nper partition (avg queue s: baseline -> scenario)\n";
  for (const auto& p : base.per_partition) {
    double after = NAN;
    for (const auto& q : scen.per_partition) {
      if (q.name == p.name) after = q.avg_queue_s;
    }
    std::cout << fmt::format("  {:<12}{:>12.1f} -> {:.1f}\n", p.name.empty() ? "(none)" : p.name,
                             p.avg_queue_s, after);
  }
}

// The site: its Slurm configuration, its cluster and its history (durations capped at limits).
struct Site {
  policy::SlurmConfig config;
  ClusterSpec cluster;
  JobTable history;
  std::vector<std::string> notes;
};

// Reads the site; a bad file ends the command with exit 1, bad flags with exit 2.
Site LoadSite(const WhatIfArgs& a) {
  Site out;
  policy::SlurmConfig& site = out.config;
  ClusterSpec& cluster = out.cluster;
  std::vector<std::string>& notes = out.notes;
  if (a.vc_config.empty() && a.slurm_conf.empty() && a.nodes == 0) {
    FailUsage("give the cluster: --slurm-conf FILE, --vc-config FILE or --nodes N");
  }

  // --- the site: slurm.conf (its errors are the file's: exit 1), cluster -----------------------
  if (!a.slurm_conf.empty()) {
    auto conf = policy::ReadSlurmConf(a.slurm_conf);
    if (!conf.ok()) Fail(conf.status());
    site = conf->config;
    for (const auto& k : site.unmodelled) notes.push_back("not modelled: " + k);
    if (conf->nodes.nodes > 0 && a.vc_config.empty() && a.nodes == 0) {
      if (conf->nodes.gpus_per_node <= 0) {
        Fail(
            Status::InvalidArgument(a.slurm_conf + ": no node has GPUs (Gres=gpu:N or gres.conf)"));
      }
      VcSpec v;
      v.gpus_per_node = conf->nodes.gpus_per_node;
      v.nodes = conf->nodes.nodes;
      if (conf->nodes.heterogeneous) {
        // One node size per partition: keep the GPU total with nodes of the largest size.
        v.nodes =
            static_cast<int32_t>((conf->nodes.total_gpus + v.gpus_per_node - 1) / v.gpus_per_node);
        notes.push_back(fmt::format("nodes differ in GPUs: modelled as {} nodes of {} GPUs",
                                    v.nodes, v.gpus_per_node));
      }
      cluster.vcs.push_back(v);
    }
  }
  if (!a.vc_config.empty()) {
    auto c = trace::ReadVcConfig(a.vc_config, static_cast<int32_t>(a.gpus_per_node));
    if (!c.ok()) Fail(c.status());
    cluster = std::move(c).value();
  } else if (a.nodes > 0) {
    cluster.vcs = {
        VcSpec{"", static_cast<int32_t>(a.nodes), static_cast<int32_t>(a.gpus_per_node), 0}};
  }
  if (cluster.vcs.empty()) {
    Fail(
        Status::InvalidArgument(a.slurm_conf + ": no NodeName lines: give --nodes or --vc-config"));
  }
  if (Status st = sim::CheckSimConfig(cluster, sim::SimOptions{}); !st.ok()) Fail(st);

  // --- the history -----------------------------------------------------------------------------
  trace::TraceReadOptions ro;
  ro.format = ParsedTraceFormat(a.trace);
  ro.skip_malformed = a.trace.skip_malformed;
  auto table_or = trace::ReadTrace(a.trace.path, ro);
  if (!table_or.ok()) Fail(table_or.status());
  JobTable& history = out.history;
  history = std::move(table_or).value();
  if (!trace::FormatHasDurations(history.format)) {
    Fail(Status::InvalidArgument(fmt::format("{}: {} traces carry no run times", a.trace.path,
                                             TraceFormatName(history.format))));
  }
  if (history.jobs.size() < 2) {
    Fail(Status::InvalidArgument(fmt::format("{}: {} usable jobs; a what-if needs at least 2",
                                             a.trace.path, history.jobs.size())));
  }
  if (history.rows_skipped > 0) {
    notes.push_back(fmt::format("skipped {} rows of {} (malformed, unfinished or never started)",
                                history.rows_skipped, a.trace.path));
  }
  if (int64_t capped = sim::CapDurationsAtLimits(history); capped > 0) {
    notes.push_back(
        fmt::format("{} jobs ran past their limit in the export; capped at it", capped));
  }
  return out;
}

void RunWhatIf(const WhatIfArgs& a) {
  policy::PolicyRegistry registry;
  if (Status st = policy::RegisterBuiltinPolicies(registry); !st.ok()) Fail(st);
  const std::string scenario_policy = a.policy.empty() ? a.baseline_policy : a.policy;
  for (const auto& p : {a.baseline_policy, scenario_policy}) {
    if (!registry.Contains(p)) {
      FailUsage(
          fmt::format("unknown policy '{}' (known: {})", p, fmt::join(registry.Names(), ", ")));
    }
  }
  Site loaded = LoadSite(a);
  const policy::SlurmConfig& site = loaded.config;
  const ClusterSpec& cluster = loaded.cluster;
  const JobTable& history = loaded.history;
  std::vector<std::string>& notes = loaded.notes;
  // --- the scenario ----------------------------------------------------------------------------
  policy::SlurmConfig changed = site;
  ClusterSpec scenario_cluster = cluster;
  std::vector<std::string> changes;
  for (const auto& s : a.add_nodes) {
    auto spec = ParseNodeSpec(s, /*with_size=*/true);
    if (Status st = sim::AddNodes(scenario_cluster, spec->count, spec->gpus, spec->vc); !st.ok()) {
      FailUsage("--add-nodes " + s + ": " + st.message());
    }
    changes.push_back("add-nodes " + s);
  }
  for (const auto& s : a.remove_nodes) {
    auto spec = ParseNodeSpec(s, /*with_size=*/false);
    if (Status st = sim::RemoveNodes(scenario_cluster, spec->count, spec->vc); !st.ok()) {
      FailUsage("--remove-nodes " + s + ": " + st.message());
    }
    changes.push_back("remove-nodes " + s);
  }
  if (Status st = sim::CheckSimConfig(scenario_cluster, sim::SimOptions{}); !st.ok()) {
    FailUsage("scenario cluster: " + st.message());
  }
  for (const auto& s : a.sets) {
    const size_t eq = s.find('=');
    if (Status st = policy::ApplySlurmSetting(changed, s.substr(0, eq), s.substr(eq + 1));
        !st.ok()) {
      FailUsage("--set " + s + ": " + st.message());
    }
    changes.push_back("set " + s);
  }
  if (!a.policy.empty()) changes.push_back("policy " + a.policy);
  if (a.load != 1.0) changes.push_back(fmt::format("load x{}", a.load));

  // --- runs ------------------------------------------------------------------------------------
  const Run baseline = Simulate(history, cluster, a.baseline_policy, site, a.seed, "baseline");
  std::vector<uint64_t> seeds;
  std::vector<sim::WhatIfMetrics> runs;
  std::vector<double> seconds{baseline.seconds};
  std::vector<double> first_queue;
  const bool random = a.load != 1.0;
  const int64_t n_seeds = random ? a.seeds : 1;
  for (int64_t i = 0; i < n_seeds; ++i) {
    const uint64_t seed = a.seed + static_cast<uint64_t>(i);
    seeds.push_back(seed);
    JobTable table = history;
    if (random) {
      trace::GenerateOptions g;
      g.seed = seed;
      g.load_factor = a.load;
      // L times the jobs with gaps divided by L: the same span at L times the offered load.
      g.jobs =
          std::max<int64_t>(2, std::llround(static_cast<double>(history.jobs.size()) * a.load));
      auto gen = trace::GenerateTrace(history, g);
      if (!gen.ok()) Fail(gen.status());
      table = std::move(gen->table);
    }
    Run r = Simulate(table, scenario_cluster, scenario_policy, changed, seed, "scenario");
    seconds.push_back(r.seconds);
    if (i == 0) first_queue = r.queue_s;
    runs.push_back(std::move(r.metrics));
  }
  const sim::WhatIfMetrics scenario = sim::MeanWhatIfMetrics(runs);
  const nlohmann::json spread = sim::WhatIfSpreadToJson(runs, seeds);

  if (!a.plot.empty()) {
    plot::Figure fig;
    fig.title = "what if: " + (changes.empty() ? std::string("no change")
                                               : fmt::format("{}", fmt::join(changes, ", ")));
    plot::Chart cdf{
        "Queue wait CDF", "queue wait (s)", "fraction of jobs", /*log_x=*/true, false, {}};
    cdf.series.push_back(plot::CdfSeries("baseline", baseline.queue_s));
    cdf.series.push_back(plot::CdfSeries(
        random ? fmt::format("scenario (seed {})", seeds[0]) : "scenario", first_queue));
    fig.charts.push_back(std::move(cdf));
    if (Status st = plot::WriteFigure(fig, a.plot); !st.ok()) Fail(st);
  }
  // What the site's Slurm really did, when the history records it (sacct Start - Eligible).
  const nlohmann::json observed = sim::ObservedWaitsToJson(sim::MeasureObservedWaits(history));
  if (a.json) {
    nlohmann::json out = {
        {"observed", observed},
        {"baseline", sim::WhatIfMetricsToJson(baseline.metrics)},
        {"scenario", sim::WhatIfMetricsToJson(scenario)},
        {"spread", spread},
        {"changes", changes},
        {"policy", {{"baseline", a.baseline_policy}, {"scenario", scenario_policy}}},
        {"cluster",
         {{"baseline_gpus", cluster.total_gpus()},
          {"scenario_gpus", scenario_cluster.total_gpus()}}},
        {"notes", notes},
        {"timing_s",
         {{"baseline", seconds[0]},
          {"scenario_max", *std::max_element(seconds.begin() + 1, seconds.end())}}}};
    PrintJson(out);
    return;
  }
  for (const auto& n : notes) std::cerr << "schedmate: note: " << n << "\n";
  PrintText(baseline.metrics, scenario, spread, changes);
  if (!observed.is_null()) {
    std::cout << fmt::format(
        "\nobserved in the history: avg queue {:.1f} s, p95 {:.1f} s ({} jobs)\n",
        observed["avg_queue_s"].get<double>(), observed["p95_queue_s"].get<double>(),
        observed["jobs"].get<size_t>());
  }
  if (!a.plot.empty()) std::cout << "\nplot written to " << a.plot << "\n";
}

// --- tune --------------------------------------------------------------------------------------

struct TuneArgs {
  WhatIfArgs site;  // the history and the site: trace, format, slurm.conf / vc-config / nodes
  std::vector<std::string> grid;
  double train_fraction = 0.7;
  std::string objective = "avg_queue_s";
  bool json = false;
};

// Slurm's weights and backfill window around typical values; the site's own setting is always
// candidate 0, so "change nothing" can win.
const std::vector<std::string> kDefaultGrid = {
    "PriorityWeightAge=0,1000,10000", "PriorityWeightFairshare=0,1000,10000",
    "PriorityWeightJobSize=0,1000", "bf_window=1440,2880"};
constexpr size_t kMaxCandidates = 1000;

double Objective(const sim::WhatIfMetrics& m, const std::string& name) {
  if (name == "p95_queue_s") return m.p95_queue_s;
  if (name == "avg_jct_s") return m.avg_jct_s;
  return m.avg_queue_s;
}

// Jobs submitted before `cut` (train) and from it on (validation), file order kept.
std::pair<JobTable, JobTable> SplitAt(const JobTable& t, SimTime cut) {
  JobTable train, validation;
  train.format = validation.format = t.format;
  for (const auto& j : t.jobs) (j.submit < cut ? train : validation).jobs.push_back(j);
  return {std::move(train), std::move(validation)};
}

void RunTune(const TuneArgs& a) {
  // The grid first: a bad --grid is the flags' fault whatever the files hold.
  struct Axis {
    std::string key;
    std::vector<std::string> values;
  };
  std::vector<Axis> axes;
  size_t candidates = 1;
  for (const auto& g : a.grid.empty() ? kDefaultGrid : a.grid) {
    const size_t eq = g.find('=');
    Axis axis{std::string(Trim(g.substr(0, eq))), {}};
    const std::string list = g.substr(eq + 1);  // Split's views point into it
    for (auto v : Split(list, ',')) {
      std::string value(Trim(v));
      if (value.empty()) continue;
      policy::SlurmConfig probe;
      if (Status st = policy::ApplySlurmSetting(probe, axis.key, value); !st.ok()) {
        FailUsage("--grid " + g + ": " + st.message());
      }
      axis.values.push_back(value);
    }
    if (axis.values.empty()) FailUsage("--grid " + g + ": no values");
    candidates *= axis.values.size();
    if (candidates > kMaxCandidates) {
      FailUsage(fmt::format("--grid: more than {} candidates", kMaxCandidates));
    }
    axes.push_back(std::move(axis));
  }
  Site site = LoadSite(a.site);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& j : site.history.jobs) {
    lo = std::min(lo, j.submit.micros());
    hi = std::max(hi, j.submit.micros());
  }
  const SimTime cut = SimTime::FromMicros(
      lo + static_cast<int64_t>(static_cast<double>(hi - lo) * a.train_fraction));
  auto [train, validation] = SplitAt(site.history, cut);
  if (train.jobs.size() < 2 || validation.jobs.size() < 2) {
    Fail(Status::InvalidArgument(fmt::format(
        "{}: splitting at {:.0f} s leaves {} training and {} validation jobs; need 2 each",
        a.site.trace.path, cut.seconds_f(), train.jobs.size(), validation.jobs.size())));
  }
  // Grid search on the training period.
  const Run train_base = Simulate(train, site.cluster, "slurm", site.config, 1, "train baseline");
  double best = Objective(train_base.metrics, a.objective);
  policy::SlurmConfig best_config = site.config;
  nlohmann::json best_values = nlohmann::json::object();
  for (size_t c = 0; c < candidates; ++c) {
    size_t rest = c;
    policy::SlurmConfig config = site.config;
    nlohmann::json values = nlohmann::json::object();
    for (size_t i = axes.size(); i-- > 0;) {
      const std::string& v = axes[i].values[rest % axes[i].values.size()];
      rest /= axes[i].values.size();
      (void)policy::ApplySlurmSetting(config, axes[i].key, v);  // checked above
      values[axes[i].key] = v;
    }
    const Run r = Simulate(train, site.cluster, "slurm", config, 1, "candidate");
    const double obj = Objective(r.metrics, a.objective);
    if (obj < best) {  // strictly better: ties keep the site's setting or the earlier candidate
      best = obj;
      best_config = config;
      best_values = values;
    }
  }
  // Validation on the later period: the site's setting vs the recommendation.
  const Run val_base = Simulate(validation, site.cluster, "slurm", site.config, 1, "validation");
  const Run val_best = Simulate(validation, site.cluster, "slurm", best_config, 1, "validation");
  const double vb = Objective(val_base.metrics, a.objective);
  const double vp = Objective(val_best.metrics, a.objective);
  const double improvement = vb > 0 ? 100.0 * (vb - vp) / vb : 0.0;
  nlohmann::json out = {{"recommended", best_values},
                        {"baseline", sim::WhatIfMetricsToJson(val_base.metrics)},
                        {"predicted", sim::WhatIfMetricsToJson(val_best.metrics)},
                        {"validation",
                         {{"objective", a.objective},
                          {"split_at_s", cut.seconds_f()},
                          {"train_jobs", train.jobs.size()},
                          {"validation_jobs", validation.jobs.size()},
                          {"candidates", candidates},
                          {"train_baseline", Objective(train_base.metrics, a.objective)},
                          {"train_best", best},
                          {"validation_baseline", vb},
                          {"validation_predicted", vp},
                          {"improvement_pct", improvement},
                          {"holds", vp <= vb}}},
                        {"slurm_conf_lines", policy::SlurmConfLines(best_config)},
                        {"notes", site.notes}};
  if (a.json) {
    PrintJson(out);
    return;
  }
  for (const auto& n : site.notes) std::cerr << "schedmate: note: " << n << "\n";
  std::cout << fmt::format("{} candidates on {} training jobs; validated on {} later jobs\n",
                           candidates, train.jobs.size(), validation.jobs.size());
  std::cout << fmt::format("{}: site {:.1f} -> recommended {:.1f} on validation ({:+.1f}%)\n",
                           a.objective, vb, vp, -improvement);
  std::cout << (best_values.empty() ? "recommended: keep the site's settings\n"
                                    : "recommended slurm.conf lines:\n");
  if (!best_values.empty()) {
    for (const auto& l : policy::SlurmConfLines(best_config)) std::cout << "  " << l << "\n";
  }
}

void AddSiteOptions(CLI::App* cmd, WhatIfArgs* args) {
  AddTraceFlags(cmd, args->trace, TraceArg::kOption,
                "job history: sacct -P / sacct --json export or a trace");
  cmd->add_option("--slurm-conf", args->slurm_conf,
                  "the site's slurm.conf (priority weights, scheduler, nodes; gres.conf beside it)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--vc-config", args->vc_config, "Lucid-style VC config instead of the nodes")
      ->check(CLI::ExistingFile);
  cmd->add_option("--nodes", args->nodes, "a single pool of this many nodes instead")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000}));
  cmd->add_option("--gpus-per-node", args->gpus_per_node, "GPUs per node with --nodes/--vc-config")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{sim::kMaxGpusPerNode}));
}

}  // namespace

void RegisterWhatIfCommand(CLI::App& app) {
  auto args = std::make_shared<WhatIfArgs>();
  auto* cmd = app.add_subcommand(
      "whatif",
      "replay the site's history (sacct export or trace) on its own Slurm configuration and on a "
      "changed scenario: nodes, load, policy, priority weights, backfill settings");
  AddSiteOptions(cmd, args.get());
  cmd->add_option("--baseline-policy", args->baseline_policy, "the site's policy")
      ->capture_default_str();
  cmd->add_option("--policy", args->policy,
                  "scenario: run this policy instead (default: the site's)");
  cmd->add_option("--add-nodes", args->add_nodes, "scenario: add NODESxGPUS[:PARTITION], e.g. 4x8")
      ->check(NodeSpecValidator(/*with_size=*/true));
  cmd->add_option("--remove-nodes", args->remove_nodes, "scenario: remove NODES[:PARTITION]")
      ->check(NodeSpecValidator(/*with_size=*/false));
  cmd->add_option("--load", args->load,
                  "scenario: offered load factor (arrivals resampled from the history, seeded)")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 100));
  cmd->add_option("--set", args->sets,
                  "scenario: a slurm.conf setting, e.g. PriorityWeightAge=1000, bf_window=2880, "
                  "SchedulerType=sched/builtin, qos.high=100")
      ->check(KeyValueValidator());
  cmd->add_option("--seeds", args->seeds, "runs per randomised scenario (spread over seeds)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{100}));
  cmd->add_option("--seed", args->seed, "first seed")->capture_default_str();
  AddJsonFlag(cmd, args->json, "print one JSON object");
  AddPlotFlag(cmd, args->plot, "the queue-wait CDFs");
  cmd->callback([args]() { RunWhatIf(*args); });

  auto targs = std::make_shared<TuneArgs>();
  auto* tune = app.add_subcommand(
      "tune",
      "search Slurm priority weights and backfill settings on the first part of the history, "
      "validate on the rest, print slurm.conf lines");
  AddSiteOptions(tune, &targs->site);
  tune->add_option("--grid", targs->grid,
                   fmt::format("KEY=v1,v2,... to search (repeatable; default: {})",
                               fmt::join(kDefaultGrid, " ")))
      ->check(KeyValueValidator());
  tune->add_option("--train-fraction", targs->train_fraction,
                   "share of the history's time span used to choose; the rest validates")
      ->capture_default_str()
      ->check(FiniteRange(0.1, 0.9));
  tune->add_option("--objective", targs->objective, "metric to minimise")
      ->capture_default_str()
      ->check(CLI::IsMember({"avg_queue_s", "p95_queue_s", "avg_jct_s"}));
  AddJsonFlag(tune, targs->json, "print one JSON object");
  tune->callback([targs]() { RunTune(*targs); });
}

}  // namespace schedmate::cli
