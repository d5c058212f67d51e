// Tracker benchmarks (Google Benchmark):
//  * BM_TrackText: classification + extraction + record assembly over a mixed synthetic log in
//    memory (bytes/s = MB/s per core).
//  * BM_ParseOnly: the line parser alone.
//  * BM_LatestReverse / BM_LatestReverseNoLineCount: latest record of a large file by reverse scan
//    (file from $SCHEDMATE_BENCH_LOG, else a generated 256 MB temp file).
//  * BM_FullScanFile: ScanLog over the whole 256 MB file (reading + tracking, MB/s per core).
//  * BM_FollowLines: tail -F path: 50,000 appended lines polled and tracked (items/s = lines/s).

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "log_generator.h"
#include "tracker/log_reader.h"
#include "tracker/log_scan.h"
#include "tracker/metric_tracker.h"

namespace schedmate::tracker {
namespace {

const std::string& MixedLog() {
  static const std::string* log = [] {
    auto* s = new std::string();
    bench::GenerateMixedLog(64u << 20, 42, *s);
    return s;
  }();
  return *log;
}

void BM_TrackText(benchmark::State& state) {
  const std::string& log = MixedLog();
  BuiltinLineClassifier classifier;
  BuiltinMetricExtractor extractor;
  uint64_t records = 0;
  for (auto _ : state) {
    MetricTracker t(classifier, extractor);
    int64_t n = 1;
    ForEachPhysicalLine(log, [&](std::string_view l, uint64_t off) { t.AddLine(l, n++, off); });
    t.Finish();
    records = t.stats().records;
    benchmark::DoNotOptimize(t.Latest());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
  state.counters["records"] = static_cast<double>(records);
}
BENCHMARK(BM_TrackText)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ParseOnly(benchmark::State& state) {
  const std::string& log = MixedLog();
  LineParser parser;
  ParsedSegment ps;
  for (auto _ : state) {
    ForEachPhysicalLine(log, [&](std::string_view l, uint64_t) {
      parser.Parse(l, ps);
      benchmark::DoNotOptimize(ps.fields.data());
    });
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_ParseOnly)->Unit(benchmark::kMillisecond)->Iterations(3);

std::string BigLogPath() {
  if (const char* p = std::getenv("SCHEDMATE_BENCH_LOG")) return p;
  static std::string path = [] {
    std::string p = "/tmp/schedmate_tracker_bench_" + std::to_string(::getpid()) + ".log";
    std::FILE* f = std::fopen(p.c_str(), "wb");
    std::string chunk;
    for (int k = 0; k < 16; ++k) {
      chunk.clear();
      bench::GenerateMixedLog(16u << 20, 100 + static_cast<uint64_t>(k), chunk);
      std::fwrite(chunk.data(), 1, chunk.size(), f);
    }
    std::fclose(f);
    std::atexit([] {
      std::remove(("/tmp/schedmate_tracker_bench_" + std::to_string(::getpid()) + ".log").c_str());
    });
    return p;
  }();
  return path;
}

void LatestReverse(benchmark::State& state, bool count_lines, bool indexed = false) {
  const std::string path = BigLogPath();
  ScanOptions o;
  o.count_line_numbers = count_lines;
  if (indexed) {
    o.line_index_dir = "/tmp/schedmate_tracker_bench_index_" + std::to_string(::getpid());
    auto warm = ScanLog(path, o);
    if (!warm.ok()) {
      state.SkipWithError("scan failed");
      return;
    }
  }
  int64_t line = 0;
  uint64_t bytes = 0;
  for (auto _ : state) {
    auto r = ScanLog(path, o);
    if (!r.ok() || !r->latest) {
      state.SkipWithError("no record");
      return;
    }
    line = r->latest->line_no;
    bytes = r->file_bytes;
  }
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["line_no"] = static_cast<double>(line);
}
void BM_LatestReverse(benchmark::State& state) { LatestReverse(state, true); }
void BM_LatestReverseNoLineCount(benchmark::State& state) { LatestReverse(state, false); }
// With line-count checkpoints from an earlier call (the index is built before timing).
void BM_LatestReverseIndexed(benchmark::State& state) { LatestReverse(state, true, true); }
BENCHMARK(BM_LatestReverse)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_LatestReverseIndexed)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_LatestReverseNoLineCount)->Unit(benchmark::kMillisecond)->Iterations(5);

// The whole file read and tracked (--full-scan / --all): the reading path plus the tracker
// (bytes/s = MB/s per core).
void BM_FullScanFile(benchmark::State& state) {
  const std::string path = BigLogPath();
  ScanOptions o;
  o.allow_reverse = false;
  uint64_t bytes = 0;
  for (auto _ : state) {
    auto r = ScanLog(path, o);
    if (!r.ok() || !r->latest) {
      state.SkipWithError("no record");
      return;
    }
    bytes = r->file_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_FullScanFile)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_FollowLines(benchmark::State& state) {
  const int kLines = 50000;
  std::string block;
  {
    std::string all;
    bench::GenerateMixedLog(16u << 20, 7, all);
    size_t pos = 0;
    for (int i = 0; i < kLines && pos < all.size(); ++i) {
      size_t nl = all.find('\n', pos);
      block.append(all, pos, nl - pos + 1);
      pos = nl + 1;
    }
  }
  const std::string path = "/tmp/schedmate_tracker_follow_" + std::to_string(::getpid()) + ".log";
  BuiltinLineClassifier classifier;
  BuiltinMetricExtractor extractor;
  for (auto _ : state) {
    state.PauseTiming();
    { std::ofstream(path, std::ios::trunc); }
    FileFollower follower(path);
    MetricTracker t(classifier, extractor);
    (void)follower.Poll([](std::string_view, int64_t, uint64_t, bool) {});
    { std::ofstream(path, std::ios::app) << block; }  // a burst of 50,000 appended lines
    state.ResumeTiming();
    int64_t lines = 0;
    (void)follower.Poll([&](std::string_view l, int64_t n, uint64_t off, bool) {
      t.AddLine(l, n, off, 1.0);
      ++lines;
    });
    t.FlushPending();
    benchmark::DoNotOptimize(t.Latest());
    if (lines < kLines) state.SkipWithError("lines missing");
  }
  std::remove(path.c_str());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kLines);
}
BENCHMARK(BM_FollowLines)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace
}  // namespace schedmate::tracker

BENCHMARK_MAIN();
