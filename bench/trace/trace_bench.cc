// Trace reader, writer and generator speed.
//   trace_bench [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
// Reads Venus from ../shared (or $SCHEDMATE_SHARED_DIR); the Venus benchmarks are skipped when it
// is absent. The 1e6-row benchmarks use a trace generated in memory from Venus (or, without it,
// from a small built-in source) and written once to a temporary file.

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/file_util.h"
#include "trace/trace_generator.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

namespace schedmate::trace {
namespace {

namespace fs = std::filesystem;

std::string VenusPath() {
  fs::path shared = std::getenv("SCHEDMATE_SHARED_DIR")
                        ? fs::path(std::getenv("SCHEDMATE_SHARED_DIR"))
                        : fs::path(SCHEDMATE_SOURCE_DIR).parent_path() / "shared";
  fs::path p = shared / "traces/venus_sept2020_lucid/venus_sept2020_jobs.csv";
  return fs::exists(p) ? p.string() : std::string();
}

const std::string& VenusContents() {
  static const std::string contents = [] {
    std::string p = VenusPath();
    if (p.empty()) return std::string();
    auto r = ReadFileToString(p);
    return r.ok() ? *r : std::string();
  }();
  return contents;
}

JobTable SourceTable() {
  if (!VenusContents().empty()) {
    auto t = ParseTrace(VenusContents(), "venus");
    if (t.ok()) return *t;
  }
  JobTable t;
  t.format = TraceFormat::kLucid;
  for (int i = 0; i < 1000; ++i) {
    JobRecord j;
    j.id = std::to_string(i);
    j.user = "user" + std::to_string(i % 37);
    j.vc = "vc" + std::to_string(i % 7);
    j.gpus = GpuAmount::Whole(1 << (i % 4));
    j.submit = SimTime::FromSeconds(i * 90);
    j.duration = Duration::Seconds(60 + (i * 7919) % 86400);
    j.model = "ResNet18";
    t.jobs.push_back(j);
  }
  return t;
}

const std::string& MillionRowCsv() {
  static const std::string csv = [] {
    GenerateOptions o;
    o.jobs = 1'000'000;
    o.seed = 1;
    auto g = GenerateTrace(SourceTable(), o);
    return g.ok() ? FormatLucidCsv(g->table) : std::string();
  }();
  return csv;
}

void BM_ReadVenus(benchmark::State& state) {
  const std::string& data = VenusContents();
  if (data.empty()) {
    state.SkipWithError("Venus trace not available");
    return;
  }
  for (auto _ : state) {
    auto t = ParseTrace(data, "venus");
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * 23'859);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.size()));
}
BENCHMARK(BM_ReadVenus)->Unit(benchmark::kMillisecond);

void BM_ReadVenusFromDisk(benchmark::State& state) {
  const std::string p = VenusPath();
  if (p.empty()) {
    state.SkipWithError("Venus trace not available");
    return;
  }
  for (auto _ : state) {
    auto t = ReadTrace(p);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_ReadVenusFromDisk)->Unit(benchmark::kMillisecond);

void BM_ReadMillionRows(benchmark::State& state) {
  const std::string& data = MillionRowCsv();
  for (auto _ : state) {
    auto t = ParseTrace(data, "generated");
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(state.iterations() * 1'000'000);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(data.size()));
}
BENCHMARK(BM_ReadMillionRows)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_GenerateMillion(benchmark::State& state) {
  const JobTable source = SourceTable();
  GenerateOptions o;
  o.jobs = 1'000'000;
  for (auto _ : state) {
    auto g = GenerateTrace(source, o);
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK(BM_GenerateMillion)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_FormatMillion(benchmark::State& state) {
  GenerateOptions o;
  o.jobs = 1'000'000;
  auto g = GenerateTrace(SourceTable(), o);
  for (auto _ : state) {
    std::string s = FormatLucidCsv(g->table);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_FormatMillion)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace schedmate::trace

BENCHMARK_MAIN();
