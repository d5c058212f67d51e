// Simulator benchmarks.
//  BM_VenusLucidCompat/<policy>: the Venus Sept 2020 trace (23,859 jobs, 15 VCs) in
//    Lucid-compatible mode, as `schedmate simulate --lucid-compat` runs it (trace already loaded).
//    Skipped when ../shared is absent.
//  BM_ScaleTiresias/jobs:<n>/load_pct:<p>: a generated trace on a 10,000-GPU cluster (1,250 nodes x
//  8) under
//    tiresias; the counter peak_rss_mib is the process's peak RSS (run one size per process to
//    attribute it, as run_sim_bench.sh does).
// Generated trace: Poisson arrivals at load_pct % offered load (GPU-time demand / capacity); GPUs 1
// (60 %), 2, 4 (10 % each), 8 (15 %), 16 (3 %), 32 (2 %); log-normal durations (median 10 min,
// sigma 1.5), from Rng(42).

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cmath>
#include <map>
#include <string>

#include "core/rng.h"
#include "policy/policy_registry.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "testing/test_util.h"
#include "testing/venus_data.h"
#include "trace/cluster_config.h"
#include "trace/estimates.h"
#include "trace/trace_reader.h"

namespace schedmate {
namespace {

double PeakRssMib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

Result<sim::SimResult> Run(const std::string& name, const JobTable& table,
                           const ClusterSpec& cluster, bool compat) {
  static policy::PolicyRegistry* registry = [] {
    static policy::PolicyRegistry r;
    (void)policy::RegisterBuiltinPolicies(r);
    return &r;
  }();
  policy::PolicyConfig pc;
  pc.lucid_compat = compat;
  sim::SimOptions so;
  so.lucid_compat = compat;
  return sim::Simulate(
      table, cluster,
      [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
        return registry->Create(name, pc);
      },
      so);
}

using Venus = testing::VenusData;
const Venus& LoadVenus() { return testing::SharedVenus(); }

void BM_VenusLucidCompat(benchmark::State& state, std::string policy_name) {
  const Venus& v = LoadVenus();
  if (!v.ok) {
    state.SkipWithError("../shared/traces/venus_sept2020_lucid not available");
    return;
  }
  double jct = 0;
  for (auto _ : state) {
    auto r = Run(policy_name, v.table, v.cluster, /*compat=*/true);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    jct = sim::Summarize(*r).avg_jct_s;
    benchmark::DoNotOptimize(jct);
  }
  state.counters["avg_jct_s"] = jct;
  state.counters["jobs"] = static_cast<double>(v.table.jobs.size());
}

JobTable Generate(int64_t n, int64_t cluster_gpus, double load) {
  Rng rng(42);
  JobTable t;
  t.jobs.reserve(n);
  const double mean_gpu_s = 3.52 * 600.0 * std::exp(1.5 * 1.5 / 2);
  const double rate = load * static_cast<double>(cluster_gpus) / mean_gpu_s;  // jobs per second
  double now = 0;
  for (int64_t i = 0; i < n; ++i) {
    now += rng.Exponential(1.0 / rate);
    const double u = rng.Uniform();
    const int gpus = u < 0.60 ? 1 : u < 0.70 ? 2 : u < 0.80 ? 4 : u < 0.95 ? 8 : u < 0.98 ? 16 : 32;
    // Box-Muller normal for a log-normal duration.
    const double z = std::sqrt(-2.0 * std::log1p(-rng.Uniform())) *
                     std::cos(2 * 3.141592653589793 * rng.Uniform());
    const double dur = std::max(1.0, 600.0 * std::exp(1.5 * z));
    JobRecord r;
    r.id = std::to_string(i);
    r.gpus = GpuAmount::Whole(gpus);
    r.submit = SimTime::FromSeconds(static_cast<int64_t>(now));
    r.duration = Duration::Seconds(static_cast<int64_t>(dur));
    t.jobs.push_back(std::move(r));
  }
  return t;
}

void BM_ScaleTiresias(benchmark::State& state) {
  const int64_t n = state.range(0);
  ClusterSpec c;
  c.vcs.push_back(VcSpec{"", 1250, 8, 0});
  const JobTable t = Generate(n, c.total_gpus(), static_cast<double>(state.range(1)) / 100.0);
  double jct = 0, util = 0;
  for (auto _ : state) {
    auto r = Run("tiresias", t, c, /*compat=*/false);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    const auto s = sim::Summarize(*r);
    jct = s.avg_jct_s;
    util = s.gpu_utilization;
  }
  state.counters["avg_jct_s"] = jct;
  state.counters["gpu_util"] = util;
  state.counters["peak_rss_mib"] = PeakRssMib();
}

BENCHMARK_CAPTURE(BM_VenusLucidCompat, fifo, std::string("fifo"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VenusLucidCompat, sjf, std::string("sjf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VenusLucidCompat, srtf, std::string("srtf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VenusLucidCompat, qssf, std::string("qssf"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VenusLucidCompat, tiresias, std::string("tiresias"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_VenusLucidCompat, lucid, std::string("lucid"))->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScaleTiresias)
    ->ArgNames({"jobs", "load_pct"})
    ->Args({10'000, 80})
    ->Args({100'000, 80})
    ->Args({1'000'000, 80})
    ->Args({1'000'000, 100})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace schedmate

BENCHMARK_MAIN();
