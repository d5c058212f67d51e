// Policy benchmarks (report medians: --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true).
//  BM_GittinsRank: one GittinsRanker::Rank(x) on a ranker that has seen 20,000 ratios.
//  BM_GittinsObserve: one Observe, recomputations included (amortised).
//  BM_Venus/<policy>: the Venus Sept 2020 trace (23,859 jobs, 15 VCs, Lucid's co-location
//    measurements) simulated without --lucid-compat, with Lucid's EBM estimates as the estimator
//    for lucid and schedmate (the advisor is not a dependency of policy/). Counters: avg JCT,
//    preemptions. Skipped when ../shared is absent.

#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "core/rng.h"
#include "policy/colocation_model.h"
#include "policy/estimator_registry.h"
#include "policy/gittins_ranker.h"
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

// Log-normal error ratios (median 1, sigma 1.5), as a learnt ranker would see them.
double Ratio(Rng& rng) {
  const double z = std::sqrt(-2.0 * std::log1p(-rng.Uniform())) *
                   std::cos(2 * 3.141592653589793 * rng.Uniform());
  return std::exp(1.5 * z);
}

void BM_GittinsRank(benchmark::State& state) {
  Rng rng(7);
  policy::GittinsRanker r;
  for (int i = 0; i < 20000; ++i) r.Observe(Ratio(rng));
  double x = 0.001, sum = 0;
  for (auto _ : state) {
    sum += r.Rank(x);
    x = x > 100 ? 0.001 : x * 1.37;
  }
  benchmark::DoNotOptimize(sum);
}
BENCHMARK(BM_GittinsRank);

void BM_GittinsObserve(benchmark::State& state) {
  Rng rng(7);
  policy::GittinsRanker r;
  for (auto _ : state) r.Observe(Ratio(rng));
  state.counters["samples"] = static_cast<double>(r.samples());
}
BENCHMARK(BM_GittinsObserve);

using Venus = testing::VenusData;
const Venus& LoadVenus() { return testing::SharedVenus(); }

void BM_Venus(benchmark::State& state, std::string policy_name) {
  const Venus& v = LoadVenus();
  if (!v.ok) {
    state.SkipWithError("../shared/traces/venus_sept2020_lucid not available");
    return;
  }
  policy::PolicyRegistry registry;
  (void)policy::RegisterBuiltinPolicies(registry);
  sim::Summary s;
  for (auto _ : state) {
    auto est = policy::DefaultEstimatorRegistry().Create("file");
    if (!est.ok()) {
      state.SkipWithError(est.status().ToString().c_str());
      return;
    }
    policy::PolicyConfig pc;
    pc.estimator = est->get();
    pc.colocation = &v.model;
    sim::SimOptions so;
    so.colocation = &v.model;
    so.estimator = est->get();
    auto r = sim::Simulate(
        v.table, v.cluster,
        [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
          return registry.Create(policy_name, pc);
        },
        so);
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    s = sim::Summarize(*r);
    benchmark::DoNotOptimize(s.counts.jobs);
  }
  state.counters["avg_jct_s"] = s.avg_jct_s;
  state.counters["preemptions"] = static_cast<double>(s.preemptions);
}
BENCHMARK_CAPTURE(BM_Venus, lucid, std::string("lucid"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Venus, schedmate, std::string("schedmate"))->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace schedmate

BENCHMARK_MAIN();
