// Advisor benchmarks (Google Benchmark; report medians with --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true):
//   BM_AdviseTypicalRepo      metadata extraction + estimate for a typical job repository
//   BM_EstimateLargeHistory   one estimate with N finished jobs observed (p50/p99 as counters)
//   BM_EstimateAndObserve     the simulator's estimate + update per job (N / 10 warm jobs)
//   BM_DistributionQuantiles  p10/p50/p90 and the window point of a 32-job evidence mixture
//                             (the estimate's arithmetic, without the group lookups)
//   BM_VectorIndexSearch      HNSW k-NN over N fingerprints (p50/p99 as counters)
//   BM_StoreBytesPerJob       SQLite history: bytes per stored job (counter)
// N defaults to 1,000,000; SCHEDMATE_BENCH_N overrides it for quick runs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "advisor/builtin_extractor.h"
#include "advisor/duration_distribution.h"
#include "advisor/history_estimator.h"
#include "store/history_store.h"
#include "text/vector_index.h"

namespace {

using namespace schedmate;

size_t BenchN() {
  const char* n = std::getenv("SCHEDMATE_BENCH_N");
  return n != nullptr ? static_cast<size_t>(std::atoll(n)) : 1'000'000;
}

void SetPercentiles(benchmark::State& state, std::vector<double>& us) {
  std::sort(us.begin(), us.end());
  if (us.empty()) return;
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
}

void BM_AdviseTypicalRepo(benchmark::State& state) {
  advisor::BuiltinMetadataExtractor x;
  std::string root = std::string(SCHEDMATE_TEST_DATA_DIR) + "/advisor/hydra_job";
  advisor::HistoryEstimator est;
  for (auto _ : state) {
    auto m = x.Extract({.path = root + "/job.sbatch", .root = root});
    JobRecord j;
    j.user = "u";
    auto d = est.EstimateDetailed(j, advisor::FingerprintOf(j, m->FingerprintText()));
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_AdviseTypicalRepo)->Unit(benchmark::kMillisecond);

JobRecord SyntheticJob(std::mt19937_64& rng, size_t i) {
  JobRecord j;
  j.id = std::to_string(i);
  j.user = "user" + std::to_string(rng() % 5000);
  static const char* kModels[] = {"ResNet18", "ResNet50", "BERT", "GPT2",
                                  "ViT",      "LSTM",     "T5",   "YOLO"};
  static const char* kData[] = {"CIFAR-10", "ImageNet", "SQuAD", "WikiText", "COCO", "MovieLens"};
  j.model = kModels[rng() % 8];
  j.dataset = kData[rng() % 6];
  j.batch_size = 16 << (rng() % 5);
  j.amp = static_cast<int8_t>(rng() % 2);
  j.gpus = GpuAmount::Whole(1 << (rng() % 4));
  j.cpus = 4;
  j.duration = Duration::Seconds(static_cast<int64_t>(60 + rng() % 36000));
  j.submit = SimTime::FromSeconds(static_cast<int64_t>(i));
  return j;
}

void BM_EstimateLargeHistory(benchmark::State& state) {
  const size_t n = BenchN();
  std::mt19937_64 rng(7);
  advisor::HistoryEstimator est;
  for (size_t i = 0; i < n; ++i) {
    JobRecord j = SyntheticJob(rng, i);
    est.Observe(j, j.submit + j.duration);
  }
  std::vector<double> us;
  size_t q = 0;
  for (auto _ : state) {
    JobRecord j = SyntheticJob(rng, n + q++);
    if (q % 7 == 0) j.user = "newcomer" + std::to_string(q);  // exercise the fallbacks
    auto t0 = std::chrono::steady_clock::now();
    auto d = est.EstimateDetailed(j, advisor::FingerprintOf(j));
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(d);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  state.counters["history_jobs"] = static_cast<double>(n);
  SetPercentiles(state, us);
}
BENCHMARK(BM_EstimateLargeHistory)->Unit(benchmark::kMicrosecond)->Iterations(20000);

// The simulator's path (`simulate --estimator advisor`): each job is estimated at submission
// (Estimate, no explanation) and learnt from when it finishes (Observe), with 256 jobs in
// flight, after a warm history of N / 10 jobs. Time per job = one estimate + one update.
void BM_EstimateAndObserve(benchmark::State& state) {
  const size_t warm = std::max<size_t>(BenchN() / 10, 1000);
  constexpr size_t kInFlight = 256;
  std::mt19937_64 rng(11);
  advisor::HistoryEstimatorOptions opts;
  opts.explain = false;
  advisor::HistoryEstimator est(opts);
  for (size_t i = 0; i < warm; ++i) {
    JobRecord j = SyntheticJob(rng, i);
    est.Observe(j, j.submit + j.duration);
  }
  std::vector<JobRecord> ring(kInFlight);
  size_t i = warm;
  for (auto _ : state) {
    JobRecord& slot = ring[i % kInFlight];
    if (!slot.id.empty()) est.Observe(slot, slot.submit + slot.duration);
    slot = SyntheticJob(rng, i++);
    benchmark::DoNotOptimize(est.Estimate(slot, slot.submit));
  }
  state.counters["history_jobs"] = static_cast<double>(est.observed());
}
BENCHMARK(BM_EstimateAndObserve)->Unit(benchmark::kMicrosecond)->Iterations(200000);

// One estimate's distribution work: a group of 32 durations (recency weights 0.7^k, bandwidth
// as the estimator sets it), its window point and three quantiles from scratch (no start
// hints). 64 different groups in turn, so no branch history carries over.
void BM_DistributionQuantiles(benchmark::State& state) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> dur(7, 2);
  std::vector<advisor::DurationDistribution> dists;
  for (int g = 0; g < 64; ++g) {
    std::vector<std::pair<double, double>> s;
    double w = 1;
    for (int i = 0; i < 32; ++i, w *= 0.7) s.emplace_back(std::round(dur(rng)), w);
    dists.emplace_back(s, 0.6 * (1 + 2.0 / 32));
  }
  size_t k = 0;
  for (auto _ : state) {
    const advisor::DurationDistribution& d = dists[k++ % dists.size()];
    benchmark::DoNotOptimize(d.WindowMode(0.6));
    for (double q : {0.1, 0.5, 0.9}) benchmark::DoNotOptimize(d.Quantile(q));
  }
}
BENCHMARK(BM_DistributionQuantiles)->Unit(benchmark::kMicrosecond);

void BM_VectorIndexSearch(benchmark::State& state) {
  const size_t n = BenchN();
  const size_t d = 32;
  std::mt19937_64 rng(11);
  std::normal_distribution<float> nd(0, 1);
  auto unit = [&] {
    std::vector<float> v(d);
    double s = 0;
    for (float& x : v) {
      x = nd(rng);
      s += x * x;
    }
    for (float& x : v) x = static_cast<float>(x / std::sqrt(s));
    return v;
  };
  text::VectorIndex idx({.dimension = d,
                         .exact_threshold = 1024,
                         .hnsw_m = 12,
                         .hnsw_ef_construction = 64,
                         .hnsw_ef_search = 48});
  auto b0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; ++i) (void)idx.Add(i, unit());
  double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
  std::vector<double> us;
  for (auto _ : state) {
    auto q = unit();
    auto t0 = std::chrono::steady_clock::now();
    auto r = idx.Search(q, 10);
    auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(r);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  state.counters["vectors"] = static_cast<double>(n);
  state.counters["build_s"] = build_s;
  SetPercentiles(state, us);
}
BENCHMARK(BM_VectorIndexSearch)->Unit(benchmark::kMicrosecond)->Iterations(5000);

void BM_StoreBytesPerJob(benchmark::State& state) {
  const size_t n = 100'000;
  std::string path =
      (std::filesystem::temp_directory_path() / "schedmate_bench_history.db").string();
  for (auto _ : state) {
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    auto st = store::SqliteHistoryStore::Open(path);
    std::mt19937_64 rng(3);
    std::vector<store::StoredJob> batch;
    for (size_t i = 0; i < n; ++i) {
      store::StoredJob s;
      s.job = SyntheticJob(rng, i);
      s.job.vc = "vc" + std::to_string(rng() % 10);
      s.finish = s.job.submit + s.job.duration;
      s.fingerprint = advisor::FingerprintOf(s.job).workload;
      s.source = "bench";
      batch.push_back(std::move(s));
      if (batch.size() == 10'000) {
        (void)(*st)->PutJobs(batch);
        batch.clear();
      }
    }
    (void)(*st)->db().Exec("PRAGMA wal_checkpoint(TRUNCATE)");
    state.counters["bytes_per_job"] =
        static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(n);
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}
BENCHMARK(BM_StoreBytesPerJob)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
