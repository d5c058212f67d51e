// `schedmate whatif`: replays the site's own history (a sacct export or any trace) on the site's
// scheduler (the `slurm` policy configured from its slurm.conf) and on a changed scenario (nodes
// added or removed, load scaled, another policy, other priority weights or backfill settings),
// and prints both sets of metrics with their spread over seeds. The run itself is
// sim/whatif_run.h's, the same one POST /v1/whatif serves: this file reads flags and files and
// prints.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "core/clock.h"
#include "core/file_util.h"
#include "core/json_dump.h"
#include "core/strings.h"
#include "plot/svg_plot.h"
#include "policy/slurm_config.h"
#include "sim/sim_json.h"
#include "sim/simulator.h"
#include "sim/tune.h"
#include "sim/whatif.h"
#include "sim/whatif_run.h"
#include "slurm/array_job.h"
#include "slurm/command_runner.h"
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
  sim::WhatIfScenario scenario;   // the flags bind its fields directly, but for its sets
  std::vector<std::string> sets;  // KEY=VALUE
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

void PrintText(const sim::WhatIfMetrics& base, const sim::WhatIfMetrics& scen,
               const nlohmann::json& spread, const std::vector<std::string>& changes) {
  std::cout << "scenario: "
            << (changes.empty() ? "(no change)" : fmt::format("{}", fmt::join(changes, ", ")))
            << "\n\n";
  std::cout << fmt::format("{:<14}{:>12}{:>12}{:>12}{:>12}{:>8}\n", "", "avg queue s",
                           "p95 queue s", "avg JCT s", "util", "jobs");
  auto row = [](const char* name, const sim::WhatIfMetrics& m) {
    std::cout << fmt::format("{:<14}{:>12.1f}{:>12.1f}{:>12.1f}{:>12.3f}{:>8}\n", name,
                             m.avg_queue_s, m.p95_queue_s, m.avg_jct_s, m.utilisation,
                             m.counts.jobs);
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
  sim::WhatIfScenario scenario = a.scenario;
  for (const auto& s : a.sets) {
    const size_t eq = s.find('=');  // checked by KeyValueValidator
    scenario.sets.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
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
        scenario.load != 1.0 ? fmt::format("scenario (seed {})", report.seeds[0]) : "scenario",
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

// --- tune ------------------------------------------------------------------------------------

struct TuneArgs {
  WhatIfArgs site;  // the history and the site: trace, format, slurm.conf / vc-config / nodes
  std::vector<std::string> grid;
  double train_fraction = 0.7;
  std::string objective = "avg_queue_s";
  int64_t threads = 0;  // 0: every core
  bool json = false;
  // --via-slurm: the sweep as a Slurm job array.
  bool via_slurm = false;
  bool dry_run = false;
  std::string slurm_partition;
  std::string slurm_time;
  std::string slurm_dir = "schedmate-tune";
  int64_t slurm_max_parallel = 0;
  int64_t slurm_tasks = 0;  // 0: one per candidate, at most kDefaultSlurmTasks
  double slurm_timeout_min = 60;
  double slurm_poll_s = 5;
  // --worker: one array task (what --via-slurm submits).
  bool worker = false;
  std::string chunk;  // "K/N"
  std::string worker_out;
};

constexpr int64_t kDefaultSlurmTasks = 16;
constexpr const char* kArrayName = "schedmate-tune";

// "K/N" with 0 <= K < N <= 100000.
std::optional<std::pair<int32_t, int32_t>> ParseChunk(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto k = ParseInt(Trim(text.substr(0, slash)));
  auto n = ParseInt(Trim(text.substr(slash + 1)));
  if (!k || !n || *n < 1 || *n > 100'000 || *k < 0 || *k >= *n) return std::nullopt;
  return std::pair{static_cast<int32_t>(*k), static_cast<int32_t>(*n)};
}

// The problem every process of a sweep builds alike: grid, site, split. Exits on bad input.
sim::TuneProblem LoadTuneProblem(const TuneArgs& a, std::vector<std::string>& notes) {
  // The grid first: a bad --grid is the flags' fault whatever the files hold.
  auto grid = sim::ParseTuneGrid(a.grid);
  if (!grid.ok()) FailUsage(grid.status().message());
  sim::TuneProblem problem;
  problem.grid = std::move(grid).value();
  problem.objective = *sim::ParseTuneObjective(a.objective);  // checked by IsMember
  Site site = LoadSite(a.site);
  problem.site = std::move(site.config);
  problem.cluster = std::move(site.cluster);
  notes = std::move(site.notes);
  if (Status st = sim::SplitForTuning(site.history, a.train_fraction, a.site.trace.path, problem);
      !st.ok()) {
    Fail(st);
  }
  return problem;
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

// `schedmate tune --worker` for every array task: the same site and grid as this process, in
// absolute paths (a task may start in another directory), one thread (one CPU per task).
std::vector<std::string> WorkerCommand(const TuneArgs& a, const sim::TuneProblem& p,
                                       const std::string& dir, int32_t tasks) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> argv = {ec ? std::string("schedmate") : self.string(),
                                   "tune",
                                   "--worker",
                                   "--chunk",
                                   fmt::format("{{task}}/{}", tasks),
                                   "--worker-out",
                                   fmt::format("{}/{}-{{job}}-{{task}}.json", dir, kArrayName),
                                   "--trace",
                                   AbsolutePath(a.site.trace.path),
                                   "--format",
                                   a.site.trace.format};
  if (a.site.trace.skip_malformed) argv.push_back("--skip-malformed");
  if (!a.site.slurm_conf.empty()) {
    argv.insert(argv.end(), {"--slurm-conf", AbsolutePath(a.site.slurm_conf)});
  }
  if (!a.site.vc_config.empty()) {
    argv.insert(argv.end(), {"--vc-config", AbsolutePath(a.site.vc_config)});
  }
  if (a.site.nodes > 0) argv.insert(argv.end(), {"--nodes", std::to_string(a.site.nodes)});
  argv.insert(argv.end(),
              {"--gpus-per-node", std::to_string(a.site.gpus_per_node), "--train-fraction",
               fmt::format("{}", a.train_fraction), "--objective", a.objective, "--threads", "1"});
  for (const auto& spec : p.grid.Specs()) argv.insert(argv.end(), {"--grid", spec});
  return argv;
}

void RunTuneWorker(const TuneArgs& a, const sim::TuneProblem& p) {
  const auto [chunk, chunks] = *ParseChunk(a.chunk);  // checked by the validator
  const sim::CandidateRange range = sim::TuneChunk(p.grid.candidates, chunk, chunks);
  auto scores = sim::ScoreCandidates(p, range.begin, range.end, static_cast<int32_t>(a.threads));
  if (!scores.ok()) Fail(scores.status());
  const std::string text = DumpJson(sim::TuneChunkToJson(p, chunk, chunks, *scores), 2) + "\n";
  if (Status st = WriteStringToFile(a.worker_out, text); !st.ok()) Fail(st);
}

slurm::ArrayJobSpec TuneArraySpec(const TuneArgs& a, const sim::TuneProblem& p) {
  slurm::ArrayJobSpec spec;
  spec.name = kArrayName;
  const int64_t tasks = a.slurm_tasks > 0 ? a.slurm_tasks : kDefaultSlurmTasks;
  spec.tasks = static_cast<int32_t>(std::min<int64_t>(tasks, int64_t(p.grid.candidates)));
  spec.max_parallel = static_cast<int32_t>(a.slurm_max_parallel);
  spec.partition = a.slurm_partition;
  spec.time_limit = a.slurm_time;
  spec.dir = AbsolutePath(a.slurm_dir);
  spec.command = WorkerCommand(a, p, spec.dir, spec.tasks);
  if (Status st = slurm::CheckArrayJobSpec(spec); !st.ok()) FailUsage(st.message());
  return spec;
}

// What went wrong with the array's tasks, one clause per task: "3 (FAILED NonZeroExitCode, log
// DIR/schedmate-tune-12-3.log)".
std::string DescribeTasks(const slurm::ArrayJobSpec& spec, const slurm::ArrayOutcome& outcome,
                          const std::vector<std::pair<int32_t, std::string>>& problems) {
  std::vector<std::string> parts;
  for (const auto& [task, what] : problems) {
    parts.push_back(fmt::format("{} ({}, log {})", task, what,
                                slurm::ArrayTaskLogPath(spec, outcome.job_id, task)));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// Submits the sweep as a job array, waits, and gathers every candidate's score from the tasks'
// files, in index order. Exits on failure, naming the failed tasks by index.
std::vector<sim::CandidateScore> SweepViaSlurm(const TuneArgs& a, const sim::TuneProblem& p,
                                               const slurm::ArrayJobSpec& spec) {
  std::error_code ec;
  std::filesystem::create_directories(spec.dir, ec);
  if (ec) Fail(Status::Unavailable(fmt::format("--slurm-dir {}: {}", spec.dir, ec.message())));
  slurm::SubprocessCommandRunner runner;
  SystemClock clock;
  slurm::ArrayJobRunner array(runner, clock);
  auto job = array.Submit(spec, Duration::Seconds(60));
  if (!job.ok()) Fail(job.status());
  std::cerr << fmt::format(
      "schedmate: tune: {} candidates as Slurm array job {} ({} tasks), "
      "results in {}\n",
      p.grid.candidates, *job, spec.tasks, spec.dir);
  slurm::ArrayWaitOptions wait;
  wait.poll = Duration::FromSecondsF(a.slurm_poll_s);
  wait.timeout = Duration::FromSecondsF(a.slurm_timeout_min * 60);
  wait.on_progress = [&](const slurm::ArrayProgress& pr) {
    std::cerr << fmt::format(
        "schedmate: tune: job {}: {}/{} tasks done ({} failed), {} running, {} pending\n", *job,
        pr.completed + pr.failed, pr.tasks, pr.failed, pr.running, pr.pending);
  };
  auto outcome = array.Wait(*job, spec.tasks, wait);
  if (!outcome.ok()) Fail(outcome.status());
  if (outcome->timed_out) {
    std::vector<std::pair<int32_t, std::string>> open;
    for (int32_t t : outcome->UnfinishedTasks()) {
      open.emplace_back(t, outcome->tasks[static_cast<size_t>(t)].state);
    }
    Fail(Status::DeadlineExceeded(fmt::format(
        "Slurm array job {}: {} of {} tasks not finished after {} min ({}): tasks {}", *job,
        open.size(), spec.tasks, a.slurm_timeout_min,
        outcome->cancelled ? "cancelled" : "NOT cancelled", DescribeTasks(spec, *outcome, open))));
  }
  std::vector<sim::CandidateScore> scores;
  std::vector<std::pair<int32_t, std::string>> failed;
  for (const auto& t : outcome->tasks) {
    if (t.known && !t.succeeded()) {
      failed.emplace_back(t.index, t.reason.empty() ? t.state : t.state + " " + t.reason);
      continue;
    }
    // A task Slurm forgot counts when its file is complete and from this problem.
    auto part =
        sim::ReadTuneChunk(fmt::format("{}/{}-{}-{}.json", spec.dir, kArrayName, *job, t.index), p,
                           t.index, spec.tasks);
    if (!part.ok()) {
      failed.emplace_back(t.index, t.state + ": " + part.status().message());
      continue;
    }
    scores.insert(scores.end(), part->begin(), part->end());
  }
  if (!failed.empty()) {
    Fail(Status::Unavailable(fmt::format("Slurm array job {}: {} of {} tasks failed: tasks {}",
                                         *job, failed.size(), spec.tasks,
                                         DescribeTasks(spec, *outcome, failed))));
  }
  return scores;
}

void PrintTune(const nlohmann::json& out, bool json) {
  if (json) {
    PrintJson(out);
    return;
  }
  for (const auto& n : out["notes"])
    std::cerr << "schedmate: note: " << n.get<std::string>() << "\n";
  const auto& v = out["validation"];
  std::cout << fmt::format("{} candidates on {} training jobs; validated on {} later jobs\n",
                           v["candidates"].get<size_t>(), v["train_jobs"].get<size_t>(),
                           v["validation_jobs"].get<size_t>());
  std::cout << fmt::format(
      "{}: site {:.1f} -> recommended {:.1f} on validation ({:+.1f}%)\n",
      v["objective"].get<std::string>(), v["validation_baseline"].get<double>(),
      v["validation_predicted"].get<double>(), -v["improvement_pct"].get<double>());
  if (out["recommended"].empty()) {
    std::cout << "recommended: keep the site's settings\n";
    return;
  }
  std::cout << "recommended slurm.conf lines:\n";
  for (const auto& l : out["slurm_conf_lines"]) std::cout << "  " << l.get<std::string>() << "\n";
}

void RunTune(const TuneArgs& a) {
  std::vector<std::string> notes;
  const sim::TuneProblem problem = LoadTuneProblem(a, notes);
  if (a.worker) {
    RunTuneWorker(a, problem);
    return;
  }
  std::vector<sim::CandidateScore> scores;
  if (a.via_slurm) {
    const slurm::ArrayJobSpec spec = TuneArraySpec(a, problem);
    if (a.dry_run) {
      std::cout << slurm::ArrayBatchScript(spec);
      return;
    }
    scores = SweepViaSlurm(a, problem, spec);
  } else {
    const auto threads = static_cast<int32_t>(
        a.threads > 0 ? a.threads : std::max(1u, std::thread::hardware_concurrency()));
    auto local = sim::ScoreCandidates(problem, 0, problem.grid.candidates, threads);
    if (!local.ok()) Fail(local.status());
    scores = std::move(local).value();
  }
  auto out = sim::FinishTune(problem, scores, notes);
  if (!out.ok()) Fail(out.status());
  PrintTune(*out, a.json);
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
  auto [cmd, args] = AddCommand<WhatIfArgs>(
      app, "whatif",
      "replay the site's history (sacct export or trace) on its own Slurm configuration and on a "
      "changed scenario: nodes, load, policy, priority weights, backfill settings",
      RunWhatIf);
  AddSiteOptions(cmd, args);
  cmd->add_option("--baseline-policy", args->scenario.baseline_policy, "the site's policy")
      ->capture_default_str();
  cmd->add_option("--policy", args->scenario.policy,
                  "scenario: run this policy instead (default: the site's)");
  cmd->add_option("--add-nodes", args->scenario.add_nodes,
                  "scenario: add NODESxGPUS[:PARTITION], e.g. 4x8")
      ->check(NodeSpecValidator(/*with_size=*/true));
  cmd->add_option("--remove-nodes", args->scenario.remove_nodes,
                  "scenario: remove NODES[:PARTITION]")
      ->check(NodeSpecValidator(/*with_size=*/false));
  cmd->add_option("--load", args->scenario.load,
                  "scenario: offered load factor (arrivals resampled from the history, seeded)")
      ->capture_default_str()
      ->check(FiniteRange(0.01, 100));
  cmd->add_option("--set", args->sets,
                  "scenario: a slurm.conf setting, e.g. PriorityWeightAge=1000, bf_window=2880, "
                  "SchedulerType=sched/builtin, qos.high=100")
      ->check(KeyValueValidator());
  cmd->add_option("--seeds", args->scenario.seeds,
                  "runs per randomised scenario (spread over seeds)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{100}));
  cmd->add_option("--seed", args->scenario.seed, "first seed")->capture_default_str();
  AddJsonFlag(cmd, args->json, "print one JSON object");
  AddPlotFlag(cmd, args->plot, "the queue-wait CDFs");

  auto [tune, targs] = AddCommand<TuneArgs>(
      app, "tune",
      "search Slurm priority weights and backfill settings on the first part of the history, "
      "validate on the rest, print slurm.conf lines",
      RunTune);
  AddSiteOptions(tune, &targs->site);
  tune->add_option("--grid", targs->grid,
                   fmt::format("KEY=v1,v2,... to search (repeatable; default: {})",
                               fmt::join(sim::DefaultTuneGrid(), " ")))
      ->check(KeyValueValidator());
  tune->add_option("--train-fraction", targs->train_fraction,
                   "share of the history's time span used to choose; the rest validates")
      ->capture_default_str()
      ->check(FiniteRange(0.1, 0.9));
  tune->add_option("--objective", targs->objective, "metric to minimise")
      ->capture_default_str()
      ->check(CLI::IsMember({"avg_queue_s", "p95_queue_s", "avg_jct_s"}));
  tune->add_option("--threads", targs->threads,
                   "simulations at once in a local sweep (0: one per core; results do not "
                   "depend on it)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{256}));
  AddJsonFlag(tune, targs->json, "print one JSON object");
  auto* via = tune->add_flag("--via-slurm", targs->via_slurm,
                             "run the sweep on the site's Slurm as a job array (sbatch --array), "
                             "one task per chunk of candidates; same result as a local sweep");
  const std::string group = "Sweep on Slurm (--via-slurm)";
  tune->add_option("--slurm-partition", targs->slurm_partition, "partition of the array tasks")
      ->group(group)
      ->needs(via);
  tune->add_option("--slurm-time", targs->slurm_time,
                   "time limit of each array task (sbatch --time, e.g. 30 or 1:00:00)")
      ->group(group)
      ->needs(via);
  tune->add_option("--slurm-max-parallel", targs->slurm_max_parallel,
                   "at most this many tasks at once (--array=...%N; 0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{100'000}))
      ->group(group)
      ->needs(via);
  tune->add_option("--slurm-tasks", targs->slurm_tasks,
                   fmt::format("array tasks, each a chunk of candidates (0: {}, at most one per "
                               "candidate)",
                               kDefaultSlurmTasks))
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{100'000}))
      ->group(group)
      ->needs(via);
  tune->add_option("--slurm-dir", targs->slurm_dir,
                   "directory shared with the compute nodes: script, task logs and results")
      ->capture_default_str()
      ->group(group)
      ->needs(via);
  tune->add_option("--slurm-timeout", targs->slurm_timeout_min,
                   "minutes to wait for the array before cancelling it")
      ->capture_default_str()
      ->check(PositiveFinite(100'000))
      ->group(group)
      ->needs(via);
  tune->add_option("--slurm-poll", targs->slurm_poll_s, "seconds between squeue polls")
      ->capture_default_str()
      ->check(FiniteRange(0.1, 3600))
      ->group(group)
      ->needs(via);
  tune->add_flag("--dry-run", targs->dry_run, "print the sbatch script instead of submitting it")
      ->group(group)
      ->needs(via);
  // One array task: what --via-slurm submits (not for people).
  auto* worker = tune->add_flag("--worker", targs->worker)->group("")->excludes(via);
  tune->add_option("--chunk", targs->chunk)
      ->group("")
      ->needs(worker)
      ->check(CLI::Validator(
          [](std::string& in) -> std::string {
            return ParseChunk(in) ? "" : "expected K/N with 0 <= K < N <= 100000";
          },
          "K/N"));
  tune->add_option("--worker-out", targs->worker_out)->group("")->needs(worker);
  worker->needs(tune->get_option("--chunk"))->needs(tune->get_option("--worker-out"));
}

}  // namespace schedmate::cli
