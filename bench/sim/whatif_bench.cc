// What-if benchmarks: one `schedmate whatif` scenario on a month of sacct-like history.
//  BM_WhatIfScenario/<variant>: parse a `sacct -P` export of 25,000 jobs over 30 days (generated
//    below, written once), cap durations at limits and replay it under the slurm policy
//    (multifactor weights + backfill on time limits) on 32 nodes x 8 GPUs, then compute the
//    what-if metrics: what one scenario of `schedmate whatif` costs. Variants: baseline,
//    add_nodes (+4x8), builtin (sched/builtin), load_1.5 (resampled arrivals, 37,500 jobs).
// Generated history, from Rng(7): arrivals Poisson (mean gap 30 d / 25,000); GPUs 1 (50 %), 2, 4,
// 8 (15 % each), 16 (5 %); log-normal run times (median 50 min, sigma 1.2, at most 3 days);
// limits = run time x U(1.2, 5) rounded up to minutes (at most 3 days), 5 % of jobs TIMEOUT at
// their limit; 50 users in 10 accounts; partitions gpu (90 %) and debug (10 %). Offered load is
// about 80 % of the 256 GPUs.

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/rng.h"
#include "policy/policy_registry.h"
#include "policy/slurm_config.h"
#include "sim/simulator.h"
#include "sim/whatif.h"
#include "trace/trace_generator.h"
#include "trace/trace_reader.h"

namespace schedmate {
namespace {

std::string Clock(int64_t epoch) {
  const int64_t days = epoch / 86400, rem = epoch % 86400;
  // 2026-01-01 is day 20454 since 1970-01-01; the history stays within January-February.
  const int64_t d = days - 20454;
  const int month = d < 31 ? 1 : 2;
  const int day = static_cast<int>(d < 31 ? d + 1 : d - 30);
  return fmt::format("2026-{:02}-{:02}T{:02}:{:02}:{:02}", month, day, rem / 3600, rem / 60 % 60,
                     rem % 60);
}

std::string Hms(int64_t s) {
  return s >= 86400
             ? fmt::format("{}-{:02}:{:02}:{:02}", s / 86400, s / 3600 % 24, s / 60 % 60, s % 60)
             : fmt::format("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

const std::string& History() {
  static const std::string text = [] {
    Rng rng(7);
    std::string out =
        "JobID|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|ReqTRES|"
        "AllocTRES|NNodes|State|Priority\n";
    const int64_t t0 = 20454 * 86400;
    double t = 0;
    const double gap = 30.0 * 86400 / 25000;
    for (int i = 0; i < 25000; ++i) {
      t += rng.Exponential(gap);
      const double u = rng.Uniform();
      const int gpus = u < 0.5 ? 1 : u < 0.65 ? 2 : u < 0.8 ? 4 : u < 0.95 ? 8 : 16;
      // Box-Muller normal for the log-normal run time.
      const double z =
          std::sqrt(-2 * std::log1p(-rng.Uniform())) * std::cos(2 * M_PI * rng.Uniform());
      int64_t run =
          std::min<int64_t>(259200, std::max<int64_t>(10, std::llround(3000 * std::exp(1.2 * z))));
      int64_t limit = std::min<int64_t>(
          259200, 60 * static_cast<int64_t>(std::ceil(run * (1.2 + 3.8 * rng.Uniform()) / 60)));
      const bool timeout = rng.Uniform() < 0.05;
      if (timeout) run = limit;
      const int user = static_cast<int>(rng.Below(50));
      const bool debug = rng.Uniform() < 0.1;
      const int64_t submit = t0 + static_cast<int64_t>(t);
      // The export's own Start/End are not used by the replay (it schedules anew).
      const int64_t start = submit + 5;
      const int nodes = gpus > 8 ? gpus / 8 : 1;
      out += fmt::format(
          "{}|u{}|acct{}|{}|normal|{}|{}|{}|{}|{}|{}|billing={},cpu={},gres/gpu={},node={}|"
          "billing={},cpu={},gres/gpu={},node={}|{}|{}|{}\n",
          1000 + i, user, user % 10, debug ? "debug" : "gpu", Clock(submit), Clock(submit),
          Clock(start), Clock(start + run), Hms(run), Hms(limit), gpus, gpus * 4, gpus, nodes, gpus,
          gpus * 4, gpus, nodes, nodes, timeout ? "TIMEOUT" : "COMPLETED", 1000);
    }
    return out;
  }();
  return text;
}

void BM_WhatIfScenario(benchmark::State& state, int variant) {
  policy::PolicyRegistry registry;
  (void)policy::RegisterBuiltinPolicies(registry);
  policy::SlurmConfig cfg;
  cfg.weight_age = 1000;
  cfg.weight_fairshare = 10000;
  cfg.weight_job_size = 100;
  cfg.weight_partition = 1000;
  if (variant == 2) cfg.backfill = false;
  ClusterSpec cluster;
  cluster.vcs.push_back(VcSpec{"", 32, 8, 0});
  if (variant == 1) (void)sim::AddNodes(cluster, 4, 8, "");
  const std::string& text = History();
  int64_t jobs = 0;
  for (auto _ : state) {
    auto table = trace::ParseTrace(text, "history.txt");
    if (!table.ok()) {
      state.SkipWithError(table.status().message().c_str());
      return;
    }
    sim::CapDurationsAtLimits(*table);
    JobTable run = std::move(*table);
    if (variant == 3) {
      trace::GenerateOptions g;
      g.seed = 1;
      g.load_factor = 1.5;
      g.jobs = static_cast<int64_t>(run.jobs.size() * 3 / 2);
      auto gen = trace::GenerateTrace(run, g);
      if (!gen.ok()) {
        state.SkipWithError(gen.status().message().c_str());
        return;
      }
      run = std::move(gen->table);
    }
    policy::PolicyConfig pc;
    pc.slurm = &cfg;
    auto r = sim::Simulate(run, cluster, [&]() { return registry.Create("slurm", pc); });
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    auto m = sim::MeasureWhatIf(run, *r);
    benchmark::DoNotOptimize(m);
    jobs = m.counts.jobs;
    state.counters["avg_queue_s"] = m.avg_queue_s;
    state.counters["utilisation"] = m.utilisation;
  }
  state.counters["jobs"] = static_cast<double>(jobs);
}

BENCHMARK_CAPTURE(BM_WhatIfScenario, baseline, 0)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_WhatIfScenario, add_nodes, 1)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_WhatIfScenario, builtin, 2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_WhatIfScenario, load_1_5, 3)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace schedmate

BENCHMARK_MAIN();
