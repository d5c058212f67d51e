// `schedmate whatif`: replays the site's own history (a sacct export or any trace) on the site's
// scheduler (the `slurm` policy configured from its slurm.conf) and on a changed scenario (nodes
// added or removed, load scaled, another policy, other priority weights or backfill settings),
// and prints both sets of metrics with their spread over seeds. The run itself is
// sim/whatif_run.h's, the same one POST /v1/whatif serves: this file reads flags and files and
// prints.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "core/strings.h"
#include "plot/svg_plot.h"
#include "policy/slurm_config.h"
#include "sim/sim_json.h"
#include "sim/simulator.h"
#include "sim/whatif.h"
#include "sim/whatif_run.h"
#include "trace/cluster_config.h"
#include "trace/trace_reader.h"

namespace schedmate::cli {
namespace {

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

CLI::Validator NodeSpecValidator(bool with_size) {
  return CLI::Validator(
      [with_size](std::string& input) -> std::string {
        if (sim::ParseNodeChange(input, with_size)) return "";
        return std::string(sim::NodeChangeSyntax(with_size));
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

// One replay for `tune`; a failed run ends the command (exit 1).
sim::WhatIfRunResult Simulate(const JobTable& table, const ClusterSpec& cluster,
                              const std::string& policy, const policy::SlurmConfig& slurm,
                              uint64_t seed, const std::string& label) {
  auto run = sim::ReplayOnce(table, cluster, policy, slurm, seed, label, {});
  if (!run.ok()) Fail(run.status());
  return std::move(run).value();
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

using Site = sim::WhatIfSite;

// Reads the site; a bad file ends the command with exit 1, bad flags with exit 2.
Site LoadSite(const WhatIfArgs& a) {
  Site out;
  if (a.vc_config.empty() && a.slurm_conf.empty() && a.nodes == 0) {
    FailUsage("give the cluster: --slurm-conf FILE, --vc-config FILE or --nodes N");
  }
  // The site: slurm.conf (its errors are the file's: exit 1), the cluster.
  if (!a.slurm_conf.empty()) {
    const bool take_cluster = a.vc_config.empty() && a.nodes == 0;
    if (Status st = sim::LoadSiteFromSlurmConf(a.slurm_conf, take_cluster, out); !st.ok()) Fail(st);
  }
  if (!a.vc_config.empty()) {
    auto c = trace::ReadVcConfig(a.vc_config, static_cast<int32_t>(a.gpus_per_node));
    if (!c.ok()) Fail(c.status());
    out.cluster = std::move(c).value();
  } else if (a.nodes > 0) {
    out.cluster.vcs = {
        VcSpec{"", static_cast<int32_t>(a.nodes), static_cast<int32_t>(a.gpus_per_node), 0}};
  }
  if (Status st = sim::CheckSimConfig(out.cluster, sim::SimOptions{}); !st.ok()) Fail(st);
  // The history.
  trace::TraceReadOptions ro;
  ro.format = ParsedTraceFormat(a.trace);
  ro.skip_malformed = a.trace.skip_malformed;
  auto table_or = trace::ReadTrace(a.trace.path, ro);
  if (!table_or.ok()) Fail(table_or.status());
  out.history = std::move(table_or).value();
  out.history.source = a.trace.path;
  if (Status st = sim::PrepareWhatIfHistory(out); !st.ok()) Fail(st);
  return out;
}

// The scenario's field as its flag: add_nodes -> --add-nodes.
std::string FlagName(std::string field) {
  std::replace(field.begin(), field.end(), '_', '-');
  return "--" + field;
}

void RunWhatIf(const WhatIfArgs& a) {
  sim::WhatIfScenario scenario;
  scenario.baseline_policy = a.baseline_policy;
  scenario.policy = a.policy;
  scenario.add_nodes = a.add_nodes;
  scenario.remove_nodes = a.remove_nodes;
  scenario.load = a.load;
  for (const auto& s : a.sets) {
    const size_t eq = s.find('=');  // checked by KeyValueValidator
    scenario.sets.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  scenario.seeds = a.seeds;
  scenario.seed = a.seed;
  const Site site = LoadSite(a);
  std::string field;
  auto setup = sim::SetUpWhatIf(site, scenario, {}, &field);
  if (!setup.ok()) FailUsage(FlagName(field) + " " + setup.status().message());
  auto report_or = sim::RunWhatIf(site, *setup, scenario, {});
  if (!report_or.ok()) Fail(report_or.status());
  const sim::WhatIfReport& report = *report_or;
  const std::vector<std::string>& changes = report.setup.changes;
  if (!a.plot.empty()) {
    plot::Figure fig;
    fig.title = "what if: " + (changes.empty() ? std::string("no change")
                                               : fmt::format("{}", fmt::join(changes, ", ")));
    plot::Chart cdf{
        "Queue wait CDF", "queue wait (s)", "fraction of jobs", /*log_x=*/true, false, {}};
    cdf.series.push_back(plot::CdfSeries("baseline", report.baseline.queue_s));
    cdf.series.push_back(plot::CdfSeries(
        a.load != 1.0 ? fmt::format("scenario (seed {})", report.seeds[0]) : "scenario",
        report.first_queue_s));
    fig.charts.push_back(std::move(cdf));
    if (Status st = plot::WriteFigure(fig, a.plot); !st.ok()) Fail(st);
  }
  if (a.json) {
    PrintJson(sim::WhatIfReportToJson(report, site));
    return;
  }
  for (const auto& n : report.notes) std::cerr << "schedmate: note: " << n << "\n";
  PrintText(report.baseline.metrics, report.scenario,
            sim::WhatIfSpreadToJson(report.runs, report.seeds), changes);
  if (report.observed) {
    std::cout << fmt::format(
        "\nobserved in the history: avg queue {:.1f} s, p95 {:.1f} s ({} jobs)\n",
        report.observed->avg_queue_s, report.observed->p95_queue_s, report.observed->jobs);
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
  const sim::WhatIfRunResult train_base =
      Simulate(train, site.cluster, "slurm", site.config, 1, "train baseline");
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
    const sim::WhatIfRunResult r = Simulate(train, site.cluster, "slurm", config, 1, "candidate");
    const double obj = Objective(r.metrics, a.objective);
    if (obj < best) {  // strictly better: ties keep the site's setting or the earlier candidate
      best = obj;
      best_config = config;
      best_values = values;
    }
  }
  // Validation on the later period: the site's setting vs the recommendation.
  const sim::WhatIfRunResult val_base =
      Simulate(validation, site.cluster, "slurm", site.config, 1, "validation");
  const sim::WhatIfRunResult val_best =
      Simulate(validation, site.cluster, "slurm", best_config, 1, "validation");
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
