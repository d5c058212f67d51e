// Failure handler benchmarks (Google Benchmark; report medians with --benchmark_repetitions=5
// --benchmark_report_aggregates_only=true).
//
//  BM_Diagnose1GB       locate + classify on a 1 GB log (mmap) whose failure report is at the
//                       end, after ~11M lines of healthy training output; counters: judge calls
//                       and bytes handed to the judge. The log is written once to
//                       $SCHEDMATE_BENCH_DIR (default /tmp)/schedmate_failure_1g.log.
//  BM_DiagnoseSmall     a corpus-sized log (20 lines) from memory.
//  BM_LoadSignatures    parse + compile the built-in knowledge base (per-process start-up cost).

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/check.h"
#include "failure/failure_handler.h"

namespace {

using namespace schedmate::failure;

const SignatureSet& Builtin() {
  static const SignatureSet* set = [] {
    auto r = SignatureSet::Builtin();
    SM_CHECK(r.ok()) << r.status().ToString();
    return new SignatureSet(std::move(r).value());
  }();
  return *set;
}

constexpr const char* kFailureTail =
    "[rank3]: Traceback (most recent call last):\n"
    "[rank3]:   File \"/srv/train.py\", line 412, in <module>\n"
    "[rank3]:     loss.backward()\n"
    "[rank3]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    "[rank0]:[E1122 01:02:03.000 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=99120, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 3\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    "slurmstepd: error: *** JOB 7 ON gpu-a07 CANCELLED AT 2026-11-22T01:02:04 ***\n";

std::string BigLogPath() {
  const char* dir = std::getenv("SCHEDMATE_BENCH_DIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/schedmate_failure_1g.log";
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) >= (1ull << 30)) {
    return path;
  }
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  SM_CHECK(f != nullptr) << "cannot write " << tmp;
  std::string block;
  uint64_t written = 0, step = 0;
  const uint64_t target = (1ull << 30) - std::char_traits<char>::length(kFailureTail);
  while (written < target) {
    block.clear();
    while (block.size() < (1u << 20)) {
      char line[160];
      int n = std::snprintf(line, sizeof(line),
                            "[rank%llu]: step %llu | loss %.4f | lr 3.0e-4 | grad_norm %.3f | "
                            "tok/s %llu\n",
                            static_cast<unsigned long long>(step % 8),
                            static_cast<unsigned long long>(step), 2.0 + (step % 997) * 1e-3,
                            0.5 + (step % 13) * 0.01,
                            static_cast<unsigned long long>(40000 + step % 2000));
      block.append(line, static_cast<size_t>(n));
      if (step % 100000 == 7) block += "UserWarning: TypedStorage is deprecated\n";
      ++step;
    }
    size_t take = static_cast<size_t>(std::min<uint64_t>(block.size(), target - written));
    std::fwrite(block.data(), 1, take, f);
    written += take;
  }
  // The cut may have split a line: end it before the failure report.
  std::fputs("\n", f);
  std::fputs(kFailureTail, f);
  std::fclose(f);
  std::filesystem::rename(tmp, path, ec);
  SM_CHECK(!ec) << ec.message();
  return path;
}

void BM_Diagnose1GB(benchmark::State& state) {
  std::string path = BigLogPath();
  int calls = 0;
  size_t bytes = 0;
  int64_t root = 0;
  for (auto _ : state) {
    auto log = LogView::OpenFile(path);
    SM_CHECK(log.ok());
    RuleLineJudge rules(Builtin());
    FailureHandler handler(Builtin(), nullptr, FailureHandlerOptions{}, &rules);
    auto d = handler.Diagnose(*log);
    SM_CHECK(d.ok() && d->root_cause && d->label == FailureLabel::kInfrastructure);
    calls = d->classifier_calls;
    root = d->root_cause->line_no;
    benchmark::DoNotOptimize(d);
    bytes = log->size();
  }
  state.counters["classifier_calls"] = calls;
  state.counters["root_line"] = static_cast<double>(root);
  state.counters["log_MB"] = static_cast<double>(bytes) / (1 << 20);
}
BENCHMARK(BM_Diagnose1GB)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DiagnoseSmall(benchmark::State& state) {
  std::string text =
      "epoch 1 loss 0.5\n"
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 3, in <module>\n"
      "    main()\n"
      "KeyError: Caught KeyError in DataLoader worker process 0.\n"
      "Original Traceback (most recent call last):\n"
      "  File \"ds.py\", line 9, in __getitem__\n"
      "KeyError: 'image'\n";
  for (int i = 0; i < 12; ++i) text += "wandb: step " + std::to_string(i) + "\n";
  LogView log = LogView::FromString(text);
  FailureHandler handler(Builtin(), nullptr);
  int calls = 0;
  for (auto _ : state) {
    auto d = handler.Diagnose(log);
    SM_CHECK(d.ok() && d->root_cause && d->root_cause->line_no == 8);
    calls = d->classifier_calls;
    benchmark::DoNotOptimize(d);
  }
  state.counters["classifier_calls"] = calls;
}
BENCHMARK(BM_DiagnoseSmall)->Unit(benchmark::kMicrosecond);

void BM_LoadSignatures(benchmark::State& state) {
  for (auto _ : state) {
    auto set = SignatureSet::Builtin();
    SM_CHECK(set.ok());
    benchmark::DoNotOptimize(set);
  }
}
BENCHMARK(BM_LoadSignatures)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
