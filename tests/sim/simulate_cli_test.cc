// `schedmate simulate` through the built binary: JSON shape and hand-checked numbers, determinism,
// plots, usage errors (exit 2) and missing files (exit 1, path in the message).

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/strings.h"
#include "testing/test_util.h"

namespace schedmate::testing {
namespace {

std::string SmallArgs() {
  return "simulate --trace " + ShellQuote(TestDataPath("sim/small_trace.csv")) + " --vc-config " +
         ShellQuote(TestDataPath("sim/small_vc_config.csv")) + " --estimates " +
         ShellQuote(TestDataPath("sim/small_estimates.csv"));
}

TEST(SimulateCliTest, JsonShapeAndFifoNumbers) {
  auto r = RunSchedmate(SmallArgs() + " --policy fifo,qssf --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["jobs"], 6);
  EXPECT_TRUE(j["trace"].is_string());
  ASSERT_EQ(j["policies"].size(), 2u);
  const auto& fifo = j["policies"][0];
  EXPECT_EQ(fifo["policy"], "fifo");
  for (const char* key : {"avg_jct_s", "avg_queue_s", "p50_jct_s", "p95_jct_s", "p99_jct_s",
                          "makespan_s", "gpu_utilization", "wall_s", "per_vc"}) {
    EXPECT_TRUE(fifo.contains(key)) << key;
  }
  // vcA (one node): job1 0..100; job2 (8 GPUs, at 10) 100..170; job6 (1 GPU, at 20) waits behind
  // it (no backfill): 170..175. JCT 100, 160, 155; queue 0, 90, 150.
  // vcB (two nodes): job3 (4 GPUs) 0..300 on node 0; job4 (2 GPUs, at 5) best-fits beside it
  // 5..25; job5 (16 GPUs, at 6) needs both nodes idle: 300..350. JCT 300, 20, 344; queue 0, 0, 294.
  EXPECT_EQ(fifo["per_vc"]["vcA"]["jobs"], 3);
  EXPECT_NEAR(fifo["per_vc"]["vcA"]["avg_jct_s"].get<double>(), (100 + 160 + 155) / 3.0, 1e-9);
  EXPECT_NEAR(fifo["per_vc"]["vcA"]["avg_queue_s"].get<double>(), 80, 1e-9);
  EXPECT_NEAR(fifo["per_vc"]["vcB"]["avg_jct_s"].get<double>(), (300 + 20 + 344) / 3.0, 1e-9);
  EXPECT_NEAR(fifo["per_vc"]["vcB"]["avg_queue_s"].get<double>(), 98, 1e-9);
  EXPECT_NEAR(fifo["avg_jct_s"].get<double>(), 1079 / 6.0, 1e-9);
  EXPECT_NEAR(fifo["avg_queue_s"].get<double>(), 89, 1e-9);
  EXPECT_NEAR(fifo["makespan_s"].get<double>(), 350, 1e-9);
}

TEST(SimulateCliTest, JobsOutHasEachJobsStartFinishAndNodes) {
  // The FIFO run of JsonShapeAndFifoNumbers, job by job: job2 100..170; job4 5..25 on node 0
  // beside job3; job5 300..350 on both nodes of vcB.
  TempDir dir;
  const std::string out = dir.File("jobs.csv");
  auto r = RunSchedmate(SmallArgs() + " --policy fifo --jobs-out " + ShellQuote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto csv = ReadFileToString(out);
  ASSERT_TRUE(csv.ok());
  std::vector<std::vector<std::string>> rows;
  for (auto line : Split(*csv, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    for (auto x : Split(line, ',')) f.emplace_back(x);
    rows.push_back(f);
  }
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"policy", "index", "id", "submit_s", "start_s",
                                               "finish_s", "queued_s", "nodes"}));
  auto num = [&](size_t row, size_t col) { return std::stod(rows[row][col]); };
  EXPECT_EQ(rows[2][2], "2");
  EXPECT_DOUBLE_EQ(num(2, 4), 100);
  EXPECT_DOUBLE_EQ(num(2, 5), 170);
  EXPECT_DOUBLE_EQ(num(2, 6), 90);
  EXPECT_DOUBLE_EQ(num(4, 4), 5);
  EXPECT_DOUBLE_EQ(num(4, 5), 25);
  EXPECT_EQ(rows[4][7], "0");
  EXPECT_DOUBLE_EQ(num(5, 4), 300);
  EXPECT_EQ(rows[5][7], "0 1");
}

nlohmann::json WithoutWall(nlohmann::json j) {
  for (auto& p : j["policies"]) p.erase("wall_s");
  return j;
}

TEST(SimulateCliTest, SameSeedSameJson) {
  const std::string args = SmallArgs() + " --policy all --seed 5 --mtbf 0.05 --json";
  auto a = RunSchedmate(args);
  auto b = RunSchedmate(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(WithoutWall(nlohmann::json::parse(a.out)).dump(),
            WithoutWall(nlohmann::json::parse(b.out)).dump());
  EXPECT_EQ(nlohmann::json::parse(a.out)["policies"].size(), 7u);
}

TEST(SimulateCliTest, HumanTableAndPlot) {
  TempDir dir;
  auto r =
      RunSchedmate(SmallArgs() + " --policy fifo,srtf --plot " + ShellQuote(dir.File("p.svg")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fifo"), std::string::npos);
  EXPECT_NE(r.out.find("vcB"), std::string::npos);
  auto svg = ReadFileToString(dir.File("p.svg"));
  ASSERT_OK(svg);
  EXPECT_NE(svg->find("<svg"), std::string::npos);
  EXPECT_NE(svg->find("JCT CDF"), std::string::npos);
}

TEST(SimulateCliTest, SingleClusterFromFlags) {
  auto r = RunSchedmate("simulate --trace " + ShellQuote(TestDataPath("sim/small_trace.csv")) +
                        " --gpus 32 --policy sjf --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cluster_gpus"], 32);
  auto d = RunSchedmate("simulate --trace " + ShellQuote(TestDataPath("sim/small_trace.csv")) +
                        " --policy fifo --json");
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.err.find("no --vc-config"), std::string::npos);  // says what it derived
}

TEST(SimulateCliTest, EstimatorChoice) {
  // Default with --estimates is the file column; --estimator oracle uses true durations. In vcB
  // job 3 has estimate -5 (-> 1000 s by Lucid's rule), so the two orders can differ; both must run
  // every job and say which estimator they used.
  auto file = RunSchedmate(SmallArgs() + " --policy qssf --json");
  auto oracle = RunSchedmate(SmallArgs() + " --policy qssf --estimator oracle --json");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  ASSERT_EQ(oracle.exit_code, 0) << oracle.err;
  EXPECT_EQ(nlohmann::json::parse(file.out)["estimator"], "file");
  EXPECT_EQ(nlohmann::json::parse(oracle.out)["estimator"], "oracle");
  EXPECT_EQ(nlohmann::json::parse(oracle.out)["policies"][0]["jobs"], 6);
}

TEST(SimulateCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunSchedmate(SmallArgs() + " --bogus-flag").exit_code, 2);
  auto p = RunSchedmate(SmallArgs() + " --policy nosuch");
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("nosuch"), std::string::npos);
  EXPECT_EQ(RunSchedmate(SmallArgs() + " --format nosuch").exit_code, 2);
  EXPECT_EQ(RunSchedmate(SmallArgs() + " --estimator nosuch").exit_code, 2);
  EXPECT_EQ(RunSchedmate("simulate --policy fifo").exit_code, 2);  // --trace missing
}

TEST(SimulateCliTest, MissingFileExitsOneNamingIt) {
  auto r = RunSchedmate("simulate --trace /nonexistent/trace.csv --policy fifo");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/trace.csv"), std::string::npos) << r.err;
  auto v = RunSchedmate("simulate --trace " + ShellQuote(TestDataPath("sim/small_trace.csv")) +
                        " --vc-config /nonexistent/vc.csv --policy fifo");
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.err.find("/nonexistent/vc.csv"), std::string::npos) << v.err;
}

TEST(SimulateCliTest, MalformedTraceNamesFileAndLine) {
  TempDir dir;
  ASSERT_OK(WriteStringToFile(dir.File("bad.csv"),
                              "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s\n"
                              "1,a,vcA,1,1,COMPLETED,0,10\n"
                              "2,a,vcA,x,1,COMPLETED,5,10\n"));
  auto r = RunSchedmate("simulate --trace " + ShellQuote(dir.File("bad.csv")) + " --policy fifo");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir.File("bad.csv") + ":3"), std::string::npos) << r.err;
}

// ---- options that cannot work: issue 17, defect 3 -------------------------------------------

// `schedmate simulate <args>` on the bundled Chronus trace (8,927 jobs), killed after 30 s so a
// run that never ends fails the test instead of hanging it; with its wall time.
struct TimedRun {
  CommandResult result;
  double seconds = 0;
};
TimedRun SimulateBundled(const std::string& args) {
  const std::string trace = SourceDir() + "/data/traces/philly_chronus_mix1_1h.csv";
  const auto start = std::chrono::steady_clock::now();
  TimedRun run;
  run.result = RunShell("SCHEDMATE_NO_PROGRESS=1 timeout -k 5 30 " + ShellQuote(SchedmateBinary()) +
                        " simulate --trace " + ShellQuote(trace) + " --json " + args);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// Every combination ends within 10 s (generous: the slowest here takes under 1 s) with a
// result (0), a usage error (2) or a stopped run (1, the event limit). Before the fix --mtbf inf,
// --mtbf 0.001 and --gpus 2000000000 ran until killed, and --gpus 0 / negative values ran.
TEST(SimulateCliTest, BadOptionCombinationsEndQuickly) {
  struct Case {
    const char* args;
    int want;  // expected exit code
  };
  const Case cases[] = {
      // The list.
      {"--mtbf 1", 0},
      {"--mtbf 1 --mttr 0", 0},
      {"--mtbf inf", 2},
      {"--mttr nan", 2},
      {"--checkpoint-interval -5", 2},
      {"--gpus 2000000000", 2},
      {"--gpus 0", 2},
      {"--gpus -5", 2},
      // Combinations.
      {"--mtbf nan", 2},
      {"--mtbf -1", 2},
      {"--mtbf 1 --mttr nan", 2},
      {"--mtbf 1 --mttr inf", 2},
      {"--mtbf 1 --mttr -1", 2},
      {"--mtbf 1 --checkpoint-interval inf", 2},
      {"--mtbf 1 --checkpoint-interval nan", 2},
      {"--mtbf 1 --checkpoint-interval 7200", 2},  // interval longer than the MTBF
      {"--mtbf 0.001", 2},                         // a 3.6 s MTBF, no checkpoints
      {"--mtbf 0.001 --mttr 0 --checkpoint-interval 1", 2},
      {"--mtbf 1e-300", 2},
      {"--mtbf 1e300", 2},
      {"--mtbf 1000000 --mttr 1000000", 0},
      {"--mtbf 1 --mttr 1000000 --policy fifo", 0},
      {"--mtbf 1 --checkpoint-interval 60 --gpus 16 --policy fifo", 0},
      {"--mtbf 0.1 --checkpoint-interval 1 --mttr 1000 --policy fifo", 0},
      {"--gpus 2000000000 --mtbf 1", 2},
      {"--gpus 1048577", 2},
      {"--gpus 1048576 --policy fifo", 0},
      {"--gpus 1048576 --mtbf 1", 2},  // failures on more nodes than supported
      {"--gpus 16 --nodes 2", 2},
      {"--nodes 0", 2},
      {"--nodes 200000 --gpus-per-node 8", 2},
      {"--gpus-per-node 0", 2},
      {"--gpus-per-node 100000", 2},
      {"--checkpoint-interval 60", 2},  // without --mtbf
      {"--mttr 0", 2},                  // without --mtbf
      {"--preemption-cost nan", 2},
      {"--preemption-cost -1", 2},
      {"--preemption-cost inf,60", 2},
      {"--seed -1", 2},
      {"--max-events -1", 2},
      {"--mtbf 1 --max-events 1000 --policy fifo", 1},
  };
  double total = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const TimedRun run = SimulateBundled(c.args);
    total += run.seconds;
    EXPECT_LT(run.seconds, 10.0);
    EXPECT_TRUE(run.result.exit_code >= 0 && run.result.exit_code <= 2) << run.result.exit_code;
    EXPECT_EQ(run.result.exit_code, c.want) << run.result.err;
    if (c.want == 0) {
      auto j = nlohmann::json::parse(run.result.out, nullptr, /*allow_exceptions=*/false);
      ASSERT_TRUE(j.is_object()) << run.result.out;
      for (const auto& p : j["policies"]) EXPECT_EQ(p["unfinished"], 0) << p["policy"];
    }
  }
  // About 2 s in a release build (18 s under ASan+UBSan): reported, not asserted.
  RecordProperty("total_seconds", std::to_string(total));
}

// Usage errors name the option at fault.
TEST(SimulateCliTest, NumericUsageErrorsNameTheOption) {
  struct Case {
    const char* args;
    const char* option;
  };
  const Case cases[] = {
      {"--mtbf inf", "--mtbf"},
      {"--mttr nan --mtbf 1", "--mttr"},
      {"--checkpoint-interval -5 --mtbf 1", "--checkpoint-interval"},
      {"--gpus 2000000000", "--gpus"},
      {"--gpus 0", "--gpus"},
      {"--gpus-per-node 0", "--gpus-per-node"},
      {"--preemption-cost nan", "--preemption-cost"},
      {"--mtbf 0.001", "--mtbf"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const TimedRun run = SimulateBundled(c.args);
    EXPECT_EQ(run.result.exit_code, 2);
    EXPECT_NE(run.result.err.find(c.option), std::string::npos) << run.result.err;
  }
}

// The event limit stops a run with exit 1 and says which limit; the same run with room finishes.
TEST(SimulateCliTest, EventLimitStopsWithExitOne) {
  auto cut = RunSchedmate(SmallArgs() + " --policy fifo --max-events 3");
  EXPECT_EQ(cut.exit_code, 1);
  EXPECT_NE(cut.err.find("--max-events"), std::string::npos) << cut.err;
  EXPECT_NE(cut.err.find("event limit"), std::string::npos) << cut.err;
  auto full = RunSchedmate(SmallArgs() + " --policy fifo --max-events 1000 --json");
  EXPECT_EQ(full.exit_code, 0) << full.err;
}

}  // namespace
}  // namespace schedmate::testing
