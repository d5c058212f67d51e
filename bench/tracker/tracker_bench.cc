// Tracker benchmarks (Google Benchmark):
//  * BM_TrackText: classification + extraction + record assembly over a mixed synthetic log in
//    memory (bytes/s = MB/s per core).
//  * BM_ParseOnly: the line parser alone.
//  * BM_LatestReverse / BM_LatestReverseNoLineCount: latest record of a large file by reverse scan
//    (file from $SCHEDMATE_BENCH_LOG, else a generated 256 MB temp file).
//  * BM_FullScanFile: ScanLog over the whole 256 MB file (reading + tracking, MB/s per core).
//  * BM_FollowLines: tail -F path: 50,000 appended lines polled and tracked (items/s = lines/s).
//  * BM_OneBarLoopLines: one bar loop over 200,000 lines (look-ahead bookkeeping stays linear).
//  * BM_MixedLogFullScan/<MB> / BM_MixedLogLatest/<MB>: a log mixing every style (tqdm '\r'
//    bars, HF dicts, Lightning, Keras, key=value with timestamps, mmdet, noise, eval phases, long
//    lines; styled_log_generator.h) written to a temp file and removed at exit: the whole-file
//    scan (--full-scan, --all) and the default newest-record path (reverse scan with the line
//    count). bytes_per_second is per CPU second (one core). A 16 MB version always runs (smoke);
//    the 1 GB case only with SCHEDMATE_BENCH_1GB=1 (SCHEDMATE_BENCH_MIXED_MB=N adds an N MB case,
//    e.g. for profiling). Medians: --benchmark_filter=MixedLog --benchmark_repetitions=5
//    --benchmark_report_aggregates_only=true.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "log_generator.h"
#include "styled_log_generator.h"
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

// One Keras-style bar loop printed over 200,000 lines with nothing else between them: every
// state waits for its look-ahead until the loop ends (was quadratic in the loop's length).
void BM_OneBarLoopLines(benchmark::State& state) {
  std::string log = "Epoch 1/1\n";
  for (int i = 1; i <= 200000; ++i) {
    log += std::to_string(i) + "/200000 [=====>......] - ETA: 10s - loss: 0." +
           std::to_string(100000 + i % 99991) + " - accuracy: 0.81\n";
  }
  BuiltinLineClassifier classifier;
  BuiltinMetricExtractor extractor;
  for (auto _ : state) {
    MetricTracker t(classifier, extractor);
    int64_t n = 1;
    ForEachPhysicalLine(log, [&](std::string_view l, uint64_t off) { t.AddLine(l, n++, off); });
    t.Finish();
    benchmark::DoNotOptimize(t.Latest());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * log.size()));
}
BENCHMARK(BM_OneBarLoopLines)->Unit(benchmark::kMillisecond)->Iterations(3);

// Temp files written by StyledLogPath, removed at exit.
std::vector<std::string>& TempLogs() {
  static auto* paths = new std::vector<std::string>();
  return *paths;
}

// A StyledLogGenerator log of about `mb` MB (seed 2024), written once per size.
const std::string& StyledLogPath(size_t mb) {
  static auto* by_size = new std::map<size_t, std::string>();
  auto it = by_size->find(mb);
  if (it != by_size->end()) return it->second;
  const char* tmp = std::getenv("TMPDIR");
  std::string path =
      std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/schedmate_mixed_bench_XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return by_size->emplace(mb, "").first->second;
  if (TempLogs().empty()) {
    std::atexit([] {
      for (const std::string& p : TempLogs()) std::remove(p.c_str());
    });
  }
  TempLogs().push_back(path);
  std::FILE* f = ::fdopen(fd, "wb");
  bench::StyledLogGenerator gen(2024);
  std::string chunk;
  size_t written = 0;
  const size_t total = mb << 20;
  while (written < total) {
    chunk.clear();
    gen.Append(std::min<size_t>(16u << 20, total - written), chunk);
    if (std::fwrite(chunk.data(), 1, chunk.size(), f) != chunk.size()) break;
    written += chunk.size();
  }
  std::fclose(f);
  return by_size->emplace(mb, path).first->second;
}

void MixedLogScan(benchmark::State& state, size_t mb, bool full_scan) {
  const std::string& path = StyledLogPath(mb);
  if (path.empty()) {
    state.SkipWithError("cannot write the temp log");
    return;
  }
  ScanOptions o;
  o.allow_reverse = !full_scan;  // the default: reverse scan of large files, lines counted
  uint64_t bytes = 0;
  int64_t line = 0;
  double confidence = 0;
  for (auto _ : state) {
    auto r = ScanLog(path, o);
    if (!r.ok() || !r->latest) {
      state.SkipWithError("no record");
      return;
    }
    bytes = r->file_bytes;
    line = r->latest->line_no;
    confidence = r->latest->confidence;
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["line_no"] = static_cast<double>(line);
  state.counters["confidence"] = confidence;
}

void RegisterMixedLogBenchmarks() {
  std::vector<size_t> sizes = {16};
  if (const char* e = std::getenv("SCHEDMATE_BENCH_1GB"); e != nullptr && std::string(e) == "1") {
    sizes.push_back(1024);
  }
  if (const char* e = std::getenv("SCHEDMATE_BENCH_MIXED_MB"); e != nullptr) {
    const size_t mb = std::strtoull(e, nullptr, 10);
    if (mb > 0 && mb <= (64u << 10)) sizes.push_back(mb);
  }
  for (size_t mb : sizes) {
    const std::string suffix = "/" + std::to_string(mb) + "MB";
    benchmark::RegisterBenchmark(("BM_MixedLogFullScan" + suffix).c_str(),
                                 [mb](benchmark::State& st) { MixedLogScan(st, mb, true); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
    benchmark::RegisterBenchmark(("BM_MixedLogLatest" + suffix).c_str(),
                                 [mb](benchmark::State& st) { MixedLogScan(st, mb, false); })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
}

}  // namespace
}  // namespace schedmate::tracker

int main(int argc, char** argv) {
  schedmate::tracker::RegisterMixedLogBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
