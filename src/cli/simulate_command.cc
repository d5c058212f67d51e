// `schedmate simulate`: replay a job trace under one or more scheduling policies and report JCT,
// queueing delay, makespan and GPU utilisation (overall and per VC), as a table, JSON or a plot.
// Wires trace readers, the policy and estimator registries and the simulator together.

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "advisor/history_estimator.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "core/clock.h"
#include "core/file_util.h"
#include "core/progress.h"
#include "core/strings.h"
#include "plot/svg_plot.h"
#include "policy/colocation_model.h"
#include "policy/estimator_registry.h"
#include "policy/placer.h"
#include "policy/policy_registry.h"
#include "policy/slurm_config.h"
#include "sim/metrics.h"
#include "sim/sim_json.h"
#include "sim/simulator.h"
#include "sim/whatif.h"
#include "trace/cluster_config.h"
#include "trace/estimates.h"
#include "trace/trace_reader.h"

namespace schedmate::cli {
namespace {

struct SimulateArgs {
  TraceFlags trace;  // --trace, --format, --skip-malformed
  std::string vc_config;
  std::string estimates;
  std::string estimator;
  bool lucid_compat = false;
  int64_t gpus = 0;
  int64_t nodes = 0;
  int64_t gpus_per_node = 8;
  std::string policies = "all";
  std::string placement = "consolidate";
  uint64_t seed = 1;
  bool json = false;
  std::string plot;
  std::string colocate_info;
  std::string single_data;
  std::string preemption_cost = "40,60";
  double mtbf_hours = 0;
  double eta_sigma = -1;  // < 0: no modelled tracker ETA
  double eta_after = 0.1;
  double mttr_hours = 2;
  double checkpoint_interval_s = 0;
  int64_t max_events = 0;  // 0: sim::DefaultMaxEvents
  std::string slurm_conf;  // weights and backfill settings for the slurm policy
  std::string jobs_out;    // per-job starts and finishes (CSV)
};

// Bounds of the numeric options (the cluster's are the simulator's, sim/simulator.h).
constexpr double kMaxHours = 1e6;              // --mtbf, --mttr: about 114 years
constexpr double kMaxCheckpointSeconds = 1e9;  // about 32 years
constexpr double kMaxPreemptionCostSeconds = 1e6;

bool FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string DirOf(const std::string& path) {
  const auto pos = path.rfind('/');
  return pos == std::string::npos ? std::string(".") : path.substr(0, pos);
}

// A single partition sized from the flags (checked at parse time), or derived from the trace when
// none are given (sim::SizeClusterForTrace).
ClusterSpec SingleCluster(const SimulateArgs& a, const JobTable& table) {
  ClusterSpec c;
  VcSpec vc;
  vc.gpus_per_node = static_cast<int32_t>(a.gpus_per_node);
  if (a.nodes > 0) {
    vc.nodes = static_cast<int32_t>(a.nodes);
  } else if (a.gpus > 0) {
    vc.nodes = static_cast<int32_t>((a.gpus + a.gpus_per_node - 1) / a.gpus_per_node);
    if (a.gpus % a.gpus_per_node != 0) {
      std::cerr << fmt::format("schedmate: note: --gpus {} rounded up to {} nodes of {} GPUs\n",
                               a.gpus, vc.nodes, a.gpus_per_node);
    }
  } else {
    auto sizing = sim::SizeClusterForTrace(table, vc.gpus_per_node);
    if (!sizing.ok()) Fail(sizing.status());
    vc.nodes = sizing->nodes;
    std::cerr << fmt::format(
        "schedmate: note: no --vc-config/--gpus/--nodes: simulating {} nodes x {} GPUs "
        "(largest job {} GPUs; mean demand at 80% load)\n",
        vc.nodes, vc.gpus_per_node, sizing->max_job_gpus);
  }
  c.vcs.push_back(vc);
  return c;
}

Result<std::pair<Duration, Duration>> ParseCost(const std::string& text) {
  auto parts = Split(text, ',');
  if (parts.empty() || parts.size() > 2) {
    return Status::InvalidArgument("--preemption-cost wants SMALL[,LARGE] seconds: " + text);
  }
  auto small = ParseDouble(parts[0]);
  auto large = parts.size() == 2 ? ParseDouble(parts[1]) : small;
  auto ok = [](std::optional<double> v) {
    return v && std::isfinite(*v) && *v >= 0 && *v <= kMaxPreemptionCostSeconds;
  };
  if (!ok(small) || !ok(large)) {
    return Status::InvalidArgument(
        fmt::format("--preemption-cost wants SMALL[,LARGE] seconds, each in [0, {}]: {}",
                    kMaxPreemptionCostSeconds, text));
  }
  return std::make_pair(Duration::FromSecondsF(*small), Duration::FromSecondsF(*large));
}

struct PolicyRun {
  sim::SimResult result;
  sim::Summary summary;
  double wall_s = 0;
};

void WritePlot(const std::vector<PolicyRun>& runs, const std::string& path) {
  plot::Figure fig;
  fig.title = "schedmate simulate";
  plot::Chart cdf{"JCT CDF", "JCT (s)", "fraction of jobs", /*log_x=*/true, false, {}};
  plot::Chart queue{"Pending jobs over time", "time (h)", "pending jobs", false, false, {}};
  plot::Chart util{"GPU utilisation over time", "time (h)", "busy GPUs / GPUs", false, false, {}};
  for (const auto& run : runs) {
    std::vector<double> jct;
    for (const auto& o : run.result.jobs) {
      if (o.partition >= 0 && o.finished()) jct.push_back(std::max(1.0, o.jct().seconds_f()));
    }
    cdf.series.push_back(plot::CdfSeries(run.summary.policy, std::move(jct)));
    plot::Series q{run.summary.policy, {}, {}, false};
    plot::Series u{run.summary.policy, {}, {}, false};
    for (const auto& tp : run.result.series) {
      const double h = (tp.time - run.result.first_submit).seconds_f() / 3600.0;
      q.x.push_back(h);
      q.y.push_back(static_cast<double>(tp.pending_jobs));
      u.x.push_back(h);
      u.y.push_back(tp.up_gpus > 0 ? static_cast<double>(tp.busy_gpus) / tp.up_gpus : 0);
    }
    queue.series.push_back(std::move(q));
    util.series.push_back(std::move(u));
  }
  fig.charts = {std::move(cdf), std::move(queue), std::move(util)};
  if (Status st = plot::WriteFigure(fig, path); !st.ok()) Fail(st);
}

void PrintTable(const std::string& trace, const JobTable& table,
                const std::vector<PolicyRun>& runs) {
  std::cout << fmt::format("trace: {} ({} jobs)\n\n", trace, table.jobs.size());
  std::cout << fmt::format("{:<14} {:>7} {:>11} {:>10} {:>11} {:>11} {:>11} {:>11} {:>6} {:>7}\n",
                           "policy", "jobs", "avg JCT s", "p50 s", "p95 s", "p99 s", "avg queue s",
                           "makespan s", "util", "wall s");
  for (const auto& r : runs) {
    const auto& s = r.summary;
    std::cout << fmt::format(
        "{:<14} {:>7} {:>11.0f} {:>10.0f} {:>11.0f} {:>11.0f} {:>11.0f} {:>11.0f} {:>6.3f} "
        "{:>7.3f}\n",
        s.policy, s.counts.jobs, s.avg_jct_s, s.p50_jct_s, s.p95_jct_s, s.p99_jct_s, s.avg_queue_s,
        s.makespan_s, s.gpu_utilization, r.wall_s);
    if (s.counts.rejected || s.counts.unfinished || s.counts.skipped) {
      std::cout << fmt::format("{:<14} (rejected {}, unfinished {}, skipped {})\n", "",
                               s.counts.rejected, s.counts.unfinished, s.counts.skipped);
    }
  }
  if (runs.empty() || runs[0].summary.per_vc.size() <= 1) return;
  std::cout << "\nper VC: avg JCT s / avg queue s\n";
  std::cout << fmt::format("{:<10} {:>6}", "vc", "jobs");
  for (const auto& r : runs) std::cout << fmt::format(" {:>21}", r.summary.policy);
  std::cout << "\n";
  for (size_t i = 0; i < runs[0].summary.per_vc.size(); ++i) {
    std::cout << fmt::format("{:<10} {:>6}", runs[0].summary.per_vc[i].name,
                             runs[0].summary.per_vc[i].jobs);
    for (const auto& r : runs) {
      const auto& v = r.summary.per_vc[i];
      std::cout << fmt::format(" {:>21}",
                               fmt::format("{:.0f} / {:.0f}", v.avg_jct_s, v.avg_queue_s));
    }
    std::cout << "\n";
  }
}

// The policies to run: --policy's names (checked against the registry) or the default set.
std::vector<std::string> PolicyNames(const SimulateArgs& a,
                                     const policy::PolicyRegistry& registry) {
  std::vector<std::string> names;
  if (ToLower(a.policies) == "all") return policy::DefaultPolicyNames();
  for (auto n : Split(a.policies, ',')) {
    std::string name(Trim(n));
    if (name.empty()) continue;
    if (!registry.Contains(name)) {
      FailUsage(fmt::format("unknown policy '{}' (known: {}, all)", name,
                            fmt::join(registry.Names(), ", ")));
    }
    names.push_back(name);
  }
  if (names.empty()) FailUsage("--policy is empty");
  return names;
}

// The trace with its run times, and the estimates file's values applied.
JobTable LoadTable(const SimulateArgs& a) {
  trace::TraceReadOptions ro;
  ro.format = ParsedTraceFormat(a.trace);
  ro.skip_malformed = a.trace.skip_malformed;
  const std::string& path = a.trace.path;
  auto table_or = trace::ReadTrace(path, ro);
  if (!table_or.ok()) Fail(table_or.status());
  JobTable table = std::move(table_or).value();
  if (!trace::FormatHasDurations(table.format)) {
    Fail(
        Status::InvalidArgument(fmt::format("{}: {} traces carry no run times, which the "
                                            "simulator needs",
                                            path, TraceFormatName(table.format))));
  }
  if (table.rows_skipped > 0) {
    std::cerr << fmt::format("schedmate: note: skipped {} malformed rows of {}\n",
                             table.rows_skipped, path);
  }
  if (!a.estimates.empty()) {
    auto est = trace::ReadEstimates(a.estimates);
    if (!est.ok()) Fail(est.status());
    auto stats = trace::ApplyEstimates(table, *est);
    // A `history replay` file also carries the predictive distribution's quantiles.
    auto quantiles = trace::ReadEstimateQuantiles(a.estimates);
    if (!quantiles.ok()) Fail(quantiles.status());
    trace::ApplyEstimateQuantiles(table, *quantiles);
    if (stats.missing > 0) {
      std::cerr << fmt::format("schedmate: note: {} jobs have no estimate in {}\n", stats.missing,
                               a.estimates);
    }
  }
  return table;
}

// The VC config's partitions, else one partition from the flags or the trace.
ClusterSpec LoadCluster(const SimulateArgs& a, const JobTable& table) {
  ClusterSpec cluster;
  if (!a.vc_config.empty()) {
    auto c = trace::ReadVcConfig(a.vc_config, static_cast<int32_t>(a.gpus_per_node));
    if (!c.ok()) Fail(c.status());
    cluster = std::move(c).value();
  } else {
    cluster = SingleCluster(a, table);
  }
  if (cluster.total_gpus() <= 0) Fail(Status::InvalidArgument("the cluster has no GPUs"));
  return cluster;
}

// One CSV row per trace job and run (`--jobs-out`): when the simulator started and finished it,
// in seconds of the trace's clock (empty when it never started or finished). Rows follow the
// trace, run after run.
void WriteJobsOut(const std::string& path, const JobTable& table,
                  const std::vector<PolicyRun>& runs) {
  std::string csv = "policy,index,id,submit_s,start_s,finish_s,queued_s,nodes\n";
  auto seconds = [](SimTime t) {
    return t == SimTime::Max() ? std::string() : fmt::format("{:.6f}", t.seconds_f());
  };
  for (const auto& r : runs) {
    for (size_t i = 0; i < r.result.jobs.size() && i < table.jobs.size(); ++i) {
      const sim::JobOutcome& o = r.result.jobs[i];
      csv += fmt::format("{},{},{},{},{},{},{:.6f},{}\n", r.summary.policy, i, table.jobs[i].id,
                         seconds(o.submit), seconds(o.first_start), seconds(o.finish),
                         o.queued.seconds_f(), fmt::join(o.first_nodes, " "));
    }
  }
  if (Status st = WriteStringToFile(path, csv); !st.ok()) Fail(st);
}

// Options shared by every run; the cluster and failure options are checked once, up front: the
// cluster alone is the VC config's fault (exit 1) or the flags' (exit 2); the failure options on
// it are the flags' (exit 2).
sim::SimOptions BaseOptions(const SimulateArgs& a, const JobTable& table,
                            const ClusterSpec& cluster, std::pair<Duration, Duration> cost) {
  sim::SimOptions base;
  base.lucid_compat = a.lucid_compat;
  base.preemption_cost.small = cost.first;
  base.preemption_cost.large = cost.second;
  base.seed = a.seed;
  base.max_events = a.max_events;
  base.record_first_nodes = !a.jobs_out.empty();
  if (a.eta_sigma >= 0) {
    base.eta.enabled = true;
    base.eta.sigma = a.eta_sigma;
    base.eta.after_fraction = a.eta_after;
  }
  if (a.mtbf_hours > 0) {
    base.failures.enabled = true;
    base.failures.mtbf = Duration::FromSecondsF(a.mtbf_hours * 3600);
    base.failures.mttr = Duration::FromSecondsF(std::max(1.0, a.mttr_hours * 3600));
    base.failures.checkpoint_interval = Duration::FromSecondsF(a.checkpoint_interval_s);
  }
  if (Status st = sim::CheckSimConfig(cluster, sim::SimOptions{}); !st.ok()) {
    if (a.vc_config.empty()) FailUsage(st.message());
    Fail(Status::InvalidArgument(a.vc_config + ": " + st.message()));
  }
  if (Status st = sim::CheckSimConfig(cluster, base); !st.ok()) {
    FailUsage(fmt::format("--mtbf {} h: {}", a.mtbf_hours, st.message()));
  }
  if (Status st = sim::CheckFailureFeasibility(table, cluster, base); !st.ok()) {
    FailUsage(fmt::format("--mtbf {} h: {}", a.mtbf_hours, st.message()));
  }
  return base;
}

// Co-location measurements: explicit files, else beside the VC config (Lucid's lucid_aux/).
std::optional<policy::ColocationModel> LoadColocation(const SimulateArgs& a) {
  std::string colo = a.colocate_info, single = a.single_data;
  if (colo.empty() && single.empty() && !a.vc_config.empty()) {
    const std::string dir = DirOf(a.vc_config);
    if (FileExists(dir + "/colocate_info.csv") && FileExists(dir + "/single_data.csv")) {
      colo = dir + "/colocate_info.csv";
      single = dir + "/single_data.csv";
    }
  }
  if (colo.empty()) return std::nullopt;
  auto m = policy::ColocationModel::Load(colo, single);
  if (!m.ok()) Fail(m.status());
  return std::move(m).value();
}

// Which estimator each policy runs with: --estimator when given; for the schedmate policy the
// advisor's learned online estimator; otherwise the file column when present, else user-mean.
struct EstimatorChoice {
  std::string flag;  // --estimator ("" when not given)
  std::string base;  // every policy's but schedmate's when --estimator is not given
  std::string For(const std::string& policy_name) const {
    if (flag.empty() && policy_name == "schedmate" &&
        policy::DefaultEstimatorRegistry().Contains("advisor")) {
      return "advisor";
    }
    return base;
  }
};

EstimatorChoice ChooseEstimators(const SimulateArgs& a, const JobTable& table) {
  bool any_estimate = false;
  for (const auto& j : table.jobs) any_estimate = any_estimate || j.estimate.has_value();
  return {a.estimator, !a.estimator.empty() ? a.estimator : (any_estimate ? "file" : "user-mean")};
}

// Everything one policy's run needs besides its name.
struct RunContext {
  const SimulateArgs& args;
  const JobTable& table;
  const ClusterSpec& cluster;
  const sim::SimOptions& base;
  const policy::PolicyRegistry& registry;
  const EstimatorChoice& estimators;
  const policy::ColocationModel* colocation;
  const policy::SlurmConfig* slurm;
  policy::PlacementKind placement;
};

PolicyRun RunPolicy(const RunContext& c, const std::string& name) {
  auto est = policy::DefaultEstimatorRegistry().Create(c.estimators.For(name));
  if (!est.ok()) Fail(est.status());
  std::unique_ptr<DurationEstimator> estimator = std::move(est).value();
  policy::PolicyConfig pc;
  pc.placement = c.args.lucid_compat ? policy::PlacementKind::kConsolidate : c.placement;
  pc.lucid_compat = c.args.lucid_compat;
  pc.slurm = c.slurm;
  pc.estimator = estimator.get();
  pc.colocation = c.colocation;
  pc.preemption_cost = c.base.preemption_cost.small;
  pc.preemption_cost_large = c.base.preemption_cost.large;
  sim::SimOptions so = c.base;
  so.colocation = pc.colocation;
  so.estimator = estimator.get();
  so.progress = ProgressBar::StderrIsInteractive();
  so.progress_label = "simulate " + name;
  Stopwatch watch;
  auto result = sim::Simulate(
      c.table, c.cluster,
      [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
        return c.registry.Create(name, pc);
      },
      so);
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kResourceExhausted) {
      Fail(Status::ResourceExhausted(
          fmt::format("{} ({}): {}; raise --max-events if the run is meant to be this long",
                      c.args.trace.path, name, result.status().message())));
    }
    Fail(result.status());
  }
  PolicyRun run;
  run.wall_s = watch.ElapsedSeconds();
  run.result = std::move(result).value();
  run.summary = sim::Summarize(run.result);
  return run;
}

void PrintRunsJson(const RunContext& c, const std::vector<PolicyRun>& runs) {
  nlohmann::json out;
  out["trace"] = c.args.trace.path;
  out["jobs"] = c.table.jobs.size();
  out["seed"] = c.args.seed;
  out["lucid_compat"] = c.args.lucid_compat;
  out["estimator"] = c.estimators.base;
  out["cluster_gpus"] = c.cluster.total_gpus();
  nlohmann::json pols = nlohmann::json::array();
  for (const auto& r : runs) {
    nlohmann::json p = sim::SummaryToJson(r.summary);
    p["estimator"] = c.estimators.For(r.summary.policy);
    p["wall_s"] = r.wall_s;
    pols.push_back(std::move(p));
  }
  out["policies"] = std::move(pols);
  PrintJson(out);
}

void RunSimulate(const SimulateArgs& a) {
  // Formats, placements, estimators and --preemption-cost are checked by the options'
  // validators; what remains are combinations and the files.
  const policy::PlacementKind placement = *policy::ParsePlacementKind(a.placement);
  if (a.nodes > 0 && a.nodes * a.gpus_per_node > sim::kMaxClusterGpus) {
    FailUsage(
        fmt::format("--nodes {} x --gpus-per-node {} is more than {} GPUs, the most the "
                    "simulator accepts",
                    a.nodes, a.gpus_per_node, sim::kMaxClusterGpus));
  }
  policy::PolicyRegistry registry;
  if (Status st = policy::RegisterBuiltinPolicies(registry); !st.ok()) Fail(st);
  const std::vector<std::string> names = PolicyNames(a, registry);

  JobTable table = LoadTable(a);
  const ClusterSpec cluster = LoadCluster(a, table);
  const sim::SimOptions base = BaseOptions(a, table, cluster, *ParseCost(a.preemption_cost));
  const std::optional<policy::ColocationModel> model = LoadColocation(a);
  const EstimatorChoice estimators = ChooseEstimators(a, table);
  // The slurm policy's configuration: the site's slurm.conf (its errors are the file's), else
  // Slurm's defaults.
  policy::SlurmConfig slurm;
  if (!a.slurm_conf.empty()) {
    auto conf = policy::ReadSlurmConf(a.slurm_conf);
    if (!conf.ok()) Fail(conf.status());
    slurm = conf->config;
  }
  const RunContext context{
      a, table, cluster, base, registry, estimators, model ? &*model : nullptr, &slurm, placement};
  std::vector<PolicyRun> runs;
  for (const auto& name : names) runs.push_back(RunPolicy(context, name));

  if (!a.jobs_out.empty()) WriteJobsOut(a.jobs_out, table, runs);
  if (a.json) {
    PrintRunsJson(context, runs);
  } else {
    PrintTable(a.trace.path, table, runs);
  }
  if (!a.plot.empty()) {
    WritePlot(runs, a.plot);
    if (!a.json) std::cout << "\nplot written to " << a.plot << "\n";
  }
}

}  // namespace

void RegisterSimulateCommand(CLI::App& app) {
  if (!policy::DefaultEstimatorRegistry().Contains("advisor")) {
    Status st = policy::DefaultEstimatorRegistry().Register(
        "advisor",
        "online: the advisor's history estimator (similar past jobs of the user and workload, "
        "with fallbacks; learns as jobs finish)",
        []() -> Result<std::unique_ptr<DurationEstimator>> {
          advisor::HistoryEstimatorOptions o;
          o.explain = false;  // the simulator reads the numbers only
          return std::unique_ptr<DurationEstimator>(std::make_unique<advisor::HistoryEstimator>(o));
        });
    SM_CHECK(st.ok()) << st.ToString();
  }
  auto [cmd, args] = AddCommand<SimulateArgs>(
      app, "simulate",
      "Replay a job trace under scheduling policies; report JCT, queueing, utilisation.",
      RunSimulate);
  AddTraceFlags(cmd, args->trace, TraceArg::kOption, "job trace file (see --format)");
  auto* vc_config = cmd->add_option(
      "--vc-config", args->vc_config,
      "Lucid vc_config.csv: one partition per VC (8-GPU nodes unless --gpus-per-node)");
  cmd->add_option("--estimates", args->estimates,
                  "job_id,priority CSV of per-job duration estimates (Lucid EBM/LightGBM; "
                  "negative values become 1000 s)");
  cmd->add_option("--estimator", args->estimator,
                  "duration estimator for qssf/lucid/schedmate: file|oracle|user-mean|advisor "
                  "(default: advisor for the schedmate policy; otherwise file when estimates are "
                  "present, else user-mean)")
      ->check(CLI::Validator(
          [](std::string& name) -> std::string {
            const auto& known = policy::DefaultEstimatorRegistry();
            if (known.Contains(name)) return "";
            return fmt::format("unknown --estimator '{}' (known: {})", name,
                               fmt::join(known.Names(), ", "));
          },
          "ESTIMATOR"));
  cmd->add_flag("--lucid-compat", args->lucid_compat,
                "reproduce Lucid's simulator semantics (1 s steps, consolidate placement, 40/60 s "
                "preemption cost, Lucid's tie rules)");
  auto* gpus = cmd->add_option("--gpus", args->gpus,
                               "single cluster with this many GPUs (rounded up to whole nodes)")
                   ->check(CLI::Range(int64_t{1}, sim::kMaxClusterGpus));
  auto* nodes = cmd->add_option("--nodes", args->nodes, "single cluster with this many nodes")
                    ->check(CLI::Range(int64_t{1}, sim::kMaxClusterGpus));
  gpus->excludes(nodes);
  cmd->add_option("--gpus-per-node", args->gpus_per_node, "GPUs per node")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{sim::kMaxGpusPerNode}));
  cmd->add_option("--policy", args->policies,
                  "comma-separated policies or 'all' (fifo,sjf,srtf,qssf,tiresias,lucid,schedmate)")
      ->capture_default_str();
  cmd->add_option("--placement", args->placement, "consolidate | spread")
      ->capture_default_str()
      ->check(CLI::IsMember({"consolidate", "spread"}));
  cmd->add_option("--seed", args->seed, "random seed (failure injection); goes into the results")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--eta-sigma", args->eta_sigma,
                  "model a tracker ETA for running jobs: after --eta-after of its run, the true "
                  "remaining time x exp(SIGMA x N(0,1)), one seeded draw per job (schedmate ranks "
                  "by it)")
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--eta-after", args->eta_after,
                  "fraction of a job's run after which its modelled ETA is known")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0))
      ->needs("--eta-sigma");
  AddJsonFlag(cmd, args->json, "print one JSON object instead of tables");
  AddPlotFlag(cmd, args->plot, "the JCT CDF, queue length and utilisation");
  auto* colocate_info =
      cmd->add_option("--colocate-info", args->colocate_info,
                      "Lucid colocate_info.csv (default: beside --vc-config if present)");
  auto* single_data =
      cmd->add_option("--single-data", args->single_data,
                      "Lucid single_data.csv (default: beside --vc-config if present)");
  colocate_info->needs(single_data);
  single_data->needs(colocate_info);
  cmd->add_option("--preemption-cost", args->preemption_cost,
                  "checkpoint+restore cost in s: SMALL[,LARGE] for <=8 / >8 GPUs")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) {
            auto c = ParseCost(v);
            return c.ok() ? std::string() : c.status().message();
          },
          "SMALL[,LARGE]"));
  auto* mtbf =
      cmd->add_option(
             "--mtbf", args->mtbf_hours,
             fmt::format(
                 "inject node failures: mean time between failures of each node (h; 0: none). A "
                 "job on n nodes runs MTBF/n on average between failures; runs are refused when "
                 "some job's run exceeds {} x that (without checkpoints) or when that is below {} "
                 "x (--checkpoint-interval + restore cost of --preemption-cost)",
                 sim::kMaxRunPerUptime, sim::kMinUptimePerStretch))
          ->check(FiniteRange(0, kMaxHours));
  cmd->add_option("--mttr", args->mttr_hours, "mean time to repair a failed node (h; 0: 1 s)")
      ->capture_default_str()
      ->check(FiniteRange(0, kMaxHours))
      ->needs(mtbf);
  cmd->add_option("--checkpoint-interval", args->checkpoint_interval_s,
                  "jobs checkpoint every this many s of run time (0: restart from scratch)")
      ->capture_default_str()
      ->check(FiniteRange(0, kMaxCheckpointSeconds))
      ->needs(mtbf);
  cmd->add_option("--max-events", args->max_events,
                  fmt::format("stop a run (exit 1) after this many simulated events (0: {} + {} "
                              "per job, plus room for the expected node failures and repairs)",
                              sim::kDefaultEventsBase, sim::kDefaultEventsPerJob))
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--slurm-conf", args->slurm_conf,
                  "slurm.conf whose priority weights and backfill settings the slurm policy uses "
                  "(default: Slurm's defaults)")
      ->check(CLI::ExistingFile);
  cmd->add_option(
      "--jobs-out", args->jobs_out,
      "write each job's simulated start and finish (CSV: policy, index, id, submit_s, "
      "start_s, finish_s, queued_s, nodes: its first start's node indices) to this file");
  vc_config->excludes(gpus)->excludes(nodes);
}

}  // namespace schedmate::cli
