// `schedmate trace stats|generate|convert`: inspect, synthesize and convert job traces.

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/flags_util.h"
#include "sim/simulator.h"
#include "trace/gavel_throughputs.h"
#include "trace/trace_generator.h"
#include "trace/trace_json.h"
#include "trace/trace_reader.h"
#include "trace/trace_stats.h"
#include "trace/trace_writer.h"

namespace schedmate::cli {
namespace {

// Bounds of `trace generate`'s numeric options (cluster sizes are the simulator's).
constexpr int64_t kMaxGenerateJobs = 10'000'000;
constexpr double kMinLoadFactor = 1e-6;
constexpr double kMaxLoadFactor = 1e6;
constexpr double kMaxTargetLoad = 100;

struct ReadFlags {
  TraceFlags trace;  // the file, --format, --skip-malformed
  std::string gavel_throughputs;
  std::string gavel_worker = "v100";
};

// The trace file, required, as `input` (a positional "file", or generate's "--from"), then the
// trace-reading flags and Gavel's throughputs.
void AddReadFlags(CLI::App* cmd, ReadFlags& f, const std::string& input, const std::string& help) {
  cmd->add_option(input, f.trace.path, help)->required();
  AddTraceFlags(cmd, f.trace, TraceArg::kNone, "");
  cmd->add_option("--gavel-throughputs", f.gavel_throughputs,
                  "Gavel throughput JSON (e.g. Gavel's simulation_throughputs.json): derive Gavel "
                  "job durations as total_steps / isolated steps-per-second (approximate: the "
                  "file used to make a trace is not recorded)");
  cmd->add_option("--gavel-worker", f.gavel_worker,
                  "Worker type whose throughputs --gavel-throughputs uses")
      ->capture_default_str();
}

JobTable ReadOrFail(const ReadFlags& f) {
  trace::TraceReadOptions o;
  o.format = ParsedTraceFormat(f.trace);
  o.skip_malformed = f.trace.skip_malformed;
  auto table = trace::ReadTrace(f.trace.path, o);
  if (!table.ok()) Fail(table.status());
  if (!f.gavel_throughputs.empty()) {
    if (table->format != TraceFormat::kGavel) {
      FailUsage("--gavel-throughputs applies to Gavel traces only; " + f.trace.path + " is " +
                std::string(TraceFormatName(table->format)));
    }
    auto tput = trace::ReadGavelThroughputs(f.gavel_throughputs, f.gavel_worker);
    if (!tput.ok()) Fail(tput.status());
    const trace::GavelDurationStats s = trace::ApplyGavelThroughputs(*table, *tput);
    std::cerr << fmt::format(
        "schedmate: Gavel durations from {} throughputs: {} derived ({} via the 1-GPU value), {} "
        "job types missing, {} out of range (duration left 0)\n",
        f.gavel_worker, s.derived, s.fallback, s.missing, s.out_of_range);
  }
  return std::move(table).value();
}

std::string Thousands(int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out = v < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// ---- stats ----------------------------------------------------------------------------------

struct StatsFlags {
  ReadFlags read;
  bool json = false;
};

void PrintStatsTable(const JobTable& t, const trace::TraceStats& s) {
  auto pct = [&](int64_t n) { return s.jobs ? 100.0 * static_cast<double>(n) / s.jobs : 0.0; };
  std::cout << fmt::format("{:<14}{} ({})\n", "trace", t.source, TraceFormatName(t.format));
  std::cout << fmt::format("{:<14}{} (rows read {}, skipped {})\n", "jobs", Thousands(s.jobs),
                           Thousands(s.rows_read), Thousands(s.rows_skipped));
  for (const auto& r : t.skip_reasons) std::cout << fmt::format("{:<14}{}\n", "", r);
  std::cout << fmt::format("{:<14}{} .. {} s ({}), mean gap {:.1f} s\n", "submit times",
                           s.first_submit.seconds_f(), s.last_submit.seconds_f(),
                           FormatDuration(s.last_submit - s.first_submit), s.mean_interarrival_s);
  std::cout << fmt::format("{:<14}{}\n", "users", Thousands(s.users));
  std::cout << fmt::format("{:<14}{}\n", "VCs", Thousands(s.vcs));
  if (s.durations_known) {
    std::cout << fmt::format("{:<14}p50 {}  p90 {}  p99 {}  mean {}  max {}\n", "duration",
                             FormatDuration(s.p50), FormatDuration(s.p90), FormatDuration(s.p99),
                             FormatDuration(s.mean), FormatDuration(s.max));
    std::cout << fmt::format("{:<14}{:.1f}\n", "GPU-hours", s.gpu_hours);
  } else {
    std::cout << fmt::format("{:<14}not in this format ({} traces carry no run times)\n",
                             "duration", TraceFormatName(t.format));
  }
  std::cout << "GPUs per job\n";
  for (const auto& [k, v] : s.gpu_histogram) {
    std::cout << fmt::format("  {:<12}{:>10}  {:5.1f}%\n", k, Thousands(v), pct(v));
  }
  std::cout << "final state\n";
  for (const auto& [k, v] : s.states) {
    std::cout << fmt::format("  {:<12}{:>10}  {:5.1f}%\n", k, Thousands(v), pct(v));
  }
}

void RunStats(const StatsFlags& f) {
  const JobTable t = ReadOrFail(f.read);
  const trace::TraceStats s = trace::ComputeTraceStats(t);
  if (f.json) {
    PrintJson(trace::TraceStatsToJson(t, s));
  } else {
    PrintStatsTable(t, s);
  }
}

// ---- generate -------------------------------------------------------------------------------

struct GenerateFlags {
  ReadFlags read;
  trace::GenerateOptions gen;  // the flags bind its fields directly
  int32_t gpus_per_node = 8;
  std::string vc;
  std::string vc_config_out;
  std::string out;
};

void RunGenerate(const GenerateFlags& f) {
  const JobTable source = ReadOrFail(f.read);
  trace::GenerateOptions o = f.gen;
  if (!f.vc.empty()) o.single_vc = f.vc;
  auto gen = trace::GenerateTrace(source, o);
  if (!gen.ok()) Fail(gen.status());
  if (f.out.empty() || f.out == "-") {
    std::cout << trace::FormatLucidCsv(gen->table);
  } else {
    if (Status s = trace::WriteLucidCsv(gen->table, f.out); !s.ok()) Fail(s);
  }
  if (!f.vc_config_out.empty()) {
    auto cfg = trace::FormatVcConfigFor(gen->table, *o.cluster_gpus, f.gpus_per_node);
    if (!cfg.ok()) Fail(cfg.status());
    if (Status s = trace::WriteOutputFile(f.vc_config_out, *cfg); !s.ok()) Fail(s);
  }
  std::cerr << fmt::format(
      "schedmate: generated {} jobs (seed {}) from {} jobs of {}; load factor {:.4g}: offered "
      "load {:.1f} busy GPUs (source {:.1f}){}\n",
      Thousands(o.jobs), o.seed, Thousands(static_cast<int64_t>(source.jobs.size())), source.source,
      gen->load_factor, gen->offered_gpus, gen->source_offered_gpus,
      o.cluster_gpus ? fmt::format(" on {} GPUs", *o.cluster_gpus) : std::string());
}

// ---- convert --------------------------------------------------------------------------------

struct ConvertFlags {
  ReadFlags read;
  std::string out;
  std::optional<int64_t> cluster_gpus;
  int32_t gpus_per_node = 8;
  std::string vc_config_out;
};

void RunConvert(const ConvertFlags& f) {
  const JobTable t = ReadOrFail(f.read);
  if (f.out.empty() || f.out == "-") {
    std::cout << trace::FormatLucidCsv(t);
  } else if (Status s = trace::WriteLucidCsv(t, f.out); !s.ok()) {
    Fail(s);
  }
  if (!f.vc_config_out.empty()) {
    auto cfg = trace::FormatVcConfigFor(t, *f.cluster_gpus, f.gpus_per_node);
    if (!cfg.ok()) Fail(cfg.status());
    if (Status s = trace::WriteOutputFile(f.vc_config_out, *cfg); !s.ok()) Fail(s);
  }
  std::cerr << fmt::format("schedmate: wrote {} jobs ({} rows skipped)\n",
                           Thousands(static_cast<int64_t>(t.jobs.size())),
                           Thousands(t.rows_skipped));
}

}  // namespace

void RegisterTraceCommands(CLI::App& app) {
  CLI::App* trace_app = AddCommandGroup(
      app, "trace",
      "Inspect, synthesize and convert job traces (Lucid/Helios, GPW, Chronus, Gavel, "
      "Pollux/Sia, Alibaba openb, SWF).");

  auto [stats, sf] = AddCommand<StatsFlags>(
      *trace_app, "stats",
      "Summarize a trace: jobs, skipped rows, submit-time span, users, VCs, GPUs-per-job "
      "histogram, duration percentiles, GPU-hours and final states.",
      RunStats);
  AddReadFlags(stats, sf->read, "file", "Trace file to read");
  AddJsonFlag(stats, sf->json, "Print the statistics as one JSON document");

  auto [gen, gf] = AddCommand<GenerateFlags>(
      *trace_app, "generate",
      "Write a synthetic trace sampled from a real one: each job copies a random real job "
      "(GPUs, duration, user, VC, workload columns jointly), and gaps between submissions are "
      "drawn from the real inter-arrival gaps divided by a load factor L. Output is the Lucid "
      "CSV schema (venus_sept2020_jobs.csv), deterministic for a seed. Choose L with at most "
      "one of --load-factor, --span-days, or --cluster-gpus [--target-load]; e.g. 1e6 jobs for "
      "a 10,000-GPU cluster: --jobs 1000000 --cluster-gpus 10000 --target-load 0.9 --vc all "
      "--vc-config-out cluster.csv",
      RunGenerate);
  AddReadFlags(gen, gf->read, "--from", "Real trace to sample from");
  gen->add_option("--jobs", gf->gen.jobs,
                  fmt::format("Number of jobs to generate (at most {})", kMaxGenerateJobs))
      ->required()
      ->check(CLI::Range(int64_t{0}, kMaxGenerateJobs));
  gen->add_option("--seed", gf->gen.seed, "Random seed (same seed, same bytes)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  auto* lf = gen->add_option("--load-factor", gf->gen.load_factor,
                             "Arrival-rate multiplier L: gaps are the real ones divided by L "
                             "(2 = twice as many arrivals per hour)")
                 ->check(FiniteRange(kMinLoadFactor, kMaxLoadFactor));
  auto* sd = gen->add_option("--span-days", gf->gen.span_days,
                             "Choose L so the generated trace spans about this many days")
                 ->check(PositiveFinite(trace::kMaxTraceSeconds / 86400));
  auto* cg = gen->add_option("--cluster-gpus", gf->gen.cluster_gpus,
                             "Choose L so the expected offered load is --target-load x this many "
                             "GPUs (needed by --vc-config-out)")
                 ->check(CLI::Range(int64_t{1}, sim::kMaxClusterGpus));
  lf->excludes(sd)->excludes(cg);
  sd->excludes(cg);
  gen->add_option("--target-load", gf->gen.target_load,
                  "Busy fraction of --cluster-gpus to aim for (offered load, not utilisation; "
                  "above 1 overloads)")
      ->capture_default_str()
      ->check(PositiveFinite(kMaxTargetLoad))
      ->needs(cg);
  gen->add_option("--gpus-per-node", gf->gpus_per_node, "GPUs per node for --vc-config-out")
      ->capture_default_str()
      ->check(CLI::Range(1, sim::kMaxGpusPerNode));
  gen->add_option("--vc", gf->vc,
                  "Put every generated job in this one VC (default: keep the sampled jobs' VCs)");
  gen->add_option("--vc-config-out", gf->vc_config_out,
                  "Also write a Lucid vc_config.csv splitting --cluster-gpus into nodes per VC, "
                  "in proportion to each VC's GPU-time demand")
      ->needs(cg);
  gen->add_option("--out", gf->out, "Output CSV file (default: stdout)");

  auto [conv, cf] = AddCommand<ConvertFlags>(
      *trace_app, "convert",
      "Rewrite any supported trace in the Lucid CSV schema (venus_sept2020_jobs.csv) that every "
      "schedmate command reads. Columns the schema lacks (name, time limit, estimate) are "
      "dropped.",
      RunConvert);
  AddReadFlags(conv, cf->read, "file", "Trace file to read");
  conv->add_option("--out", cf->out, "Output CSV file (default: stdout)");
  auto* conv_gpus =
      conv->add_option("--cluster-gpus", cf->cluster_gpus,
                       "Cluster size to split among the trace's VCs for --vc-config-out")
          ->check(CLI::Range(int64_t{1}, sim::kMaxClusterGpus));
  conv->add_option("--gpus-per-node", cf->gpus_per_node, "GPUs per node for --vc-config-out")
      ->capture_default_str()
      ->check(CLI::Range(1, sim::kMaxGpusPerNode));
  conv->add_option("--vc-config-out", cf->vc_config_out,
                   "Also write a Lucid vc_config.csv giving each VC nodes in proportion to its "
                   "GPU-time demand (at least enough for its largest job)")
      ->needs(conv_gpus);
}

}  // namespace schedmate::cli
