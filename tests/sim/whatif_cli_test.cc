// `schedmate whatif` end to end through the built binary: fields and exit codes.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/file_util.h"
#include "testing/test_util.h"

namespace schedmate::sim {
namespace {

using ::schedmate::testing::RunSchedmate;
using ::schedmate::testing::ShellQuote;
using ::schedmate::testing::TempDir;
using ::schedmate::testing::TestDataPath;

std::string Site() {
  return " --trace " + ShellQuote(TestDataPath("sim/whatif/sacct.txt")) + " --slurm-conf " +
         ShellQuote(TestDataPath("sim/whatif/slurm.conf"));
}

void ExpectMetrics(const nlohmann::json& m) {
  for (const char* k : {"avg_queue_s", "p95_queue_s", "avg_jct_s", "utilisation"}) {
    ASSERT_TRUE(m.contains(k)) << k;
    EXPECT_GE(m[k].get<double>(), 0) << k;
  }
  ASSERT_TRUE(m["per_partition"].is_object());
  EXPECT_TRUE(m["per_partition"].contains("gpu"));
  EXPECT_TRUE(m["per_partition"].contains("debug"));
}

TEST(WhatIfCliTest, AddNodesCutsQueueing) {
  auto r = RunSchedmate("whatif" + Site() + " --add-nodes 2x8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ExpectMetrics(j["baseline"]);
  ExpectMetrics(j["scenario"]);
  EXPECT_EQ(j["baseline"]["jobs"], 30);
  EXPECT_EQ(j["scenario"]["jobs"], 30);
  EXPECT_EQ(j["cluster"]["baseline_gpus"], 16);
  EXPECT_EQ(j["cluster"]["scenario_gpus"], 32);
  EXPECT_EQ(j["policy"]["baseline"], "slurm");
  EXPECT_GT(j["baseline"]["avg_queue_s"].get<double>(), 0);
  EXPECT_LT(j["scenario"]["avg_queue_s"].get<double>(), j["baseline"]["avg_queue_s"].get<double>());
  EXPECT_EQ(j["spread"]["runs"], 1);  // nothing random
}

TEST(WhatIfCliTest, LoadIsResampledPerSeedAndDeterministic) {
  const std::string cmd = "whatif" + Site() + " --load 2 --seeds 3 --seed 5 --json";
  auto a = RunSchedmate(cmd);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto j = nlohmann::json::parse(a.out);
  EXPECT_EQ(j["spread"]["runs"], 3);
  EXPECT_EQ(j["spread"]["seeds"], nlohmann::json({5, 6, 7}));
  for (const char* k : {"avg_queue_s", "p95_queue_s", "avg_jct_s", "utilisation"}) {
    EXPECT_LE(j["spread"][k]["min"].get<double>(), j["spread"][k]["max"].get<double>()) << k;
  }
  EXPECT_EQ(j["scenario"]["jobs"], 60);
  auto b = RunSchedmate(cmd);
  ASSERT_EQ(b.exit_code, 0);
  auto k = nlohmann::json::parse(b.out);
  EXPECT_EQ(j["scenario"], k["scenario"]);
  EXPECT_EQ(j["spread"]["avg_queue_s"], k["spread"]["avg_queue_s"]);
}

TEST(WhatIfCliTest, SettingsAndPolicyChangeTheScenario) {
  auto r = RunSchedmate("whatif" + Site() +
                        " --set PriorityWeightAge=0 --set bf_window=1 --set "
                        "SchedulerType=sched/builtin --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["changes"].size(), 3u);
  auto p = RunSchedmate("whatif" + Site() + " --policy fifo --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto f = nlohmann::json::parse(p.out);
  EXPECT_EQ(f["policy"]["scenario"], "fifo");
  // Without backfill nothing waits less than with it.
  EXPECT_GE(f["scenario"]["avg_queue_s"].get<double>(), f["baseline"]["avg_queue_s"].get<double>());
}

TEST(WhatIfCliTest, TextOutputAndPlot) {
  TempDir dir;
  const std::string svg = dir.File("whatif.svg");
  auto r = RunSchedmate("whatif" + Site() + " --remove-nodes 1 --plot " + ShellQuote(svg));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("baseline"), std::string::npos);
  EXPECT_NE(r.out.find("scenario"), std::string::npos);
  auto text = ReadFileToString(svg);
  ASSERT_OK(text);
  EXPECT_NE(text->find("<svg"), std::string::npos);
}

TEST(WhatIfCliTest, BadInputGetsExitCodes) {
  TempDir dir;
  const std::string conf = dir.File("slurm.conf");
  ASSERT_OK(WriteStringToFile(conf, "NodeName=n[1-2] Gres=gpu:8\nPriorityWeightMoon=3\n"));
  const std::string no_fields = dir.File("sacct.txt");
  ASSERT_OK(WriteStringToFile(no_fields, "JobID|User|State\n1|u|COMPLETED\n"));
  const std::string trace = " --trace " + ShellQuote(TestDataPath("sim/whatif/sacct.txt"));
  const std::string site_conf =
      " --slurm-conf " + ShellQuote(TestDataPath("sim/whatif/slurm.conf"));
  struct Case {
    const char* name;
    std::string args;
    int code;
    std::string in_err;
  };
  const Case cases[] = {
      {"unknown slurm.conf key", trace + " --slurm-conf " + ShellQuote(conf), 1, conf + ":2"},
      {"sacct export lacks fields", " --trace " + ShellQuote(no_fields) + site_conf, 1,
       no_fields + ":1"},
      {"removes every node", Site() + " --remove-nodes 2", 2, "--remove-nodes"},
      {"bad node spec", Site() + " --add-nodes 4", 2, "--add-nodes"},
      {"other node size", Site() + " --add-nodes 4x4", 2, "--add-nodes"},
      {"unknown setting", Site() + " --set PriorityWeightMoon=1", 2, "--set"},
      {"setting without value", Site() + " --set bf_window", 2, "--set"},
      {"nan load", Site() + " --load nan", 2, "--load"},
      {"zero seeds", Site() + " --seeds 0", 2, "--seeds"},
      {"unknown policy", Site() + " --policy nope", 2, "nope"},
      {"no cluster", trace, 2, "--slurm-conf"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = RunSchedmate("whatif" + c.args + " --json");
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    EXPECT_NE(r.err.find(c.in_err), std::string::npos) << r.err;
  }
}

TEST(WhatIfCliTest, TraceStatsReadsSacct) {
  auto r = RunSchedmate("trace stats --json --format sacct " +
                        ShellQuote(TestDataPath("sim/whatif/sacct.txt")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "sacct");
  EXPECT_EQ(j["jobs"], 30);
  auto a = RunSchedmate("trace stats --json " + ShellQuote(TestDataPath("trace/sacct_small.json")));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(nlohmann::json::parse(a.out)["format"], "sacct");
}

TEST(WhatIfCliTest, SimulateRunsTheSameSlurmPolicy) {
  auto s = RunSchedmate("simulate --nodes 2 --policy slurm --json --trace " +
                        ShellQuote(TestDataPath("sim/whatif/sacct.txt")) + " --slurm-conf " +
                        ShellQuote(TestDataPath("sim/whatif/slurm.conf")));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto w = RunSchedmate("whatif" + Site() + " --json");
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(s.out)["policies"][0]["avg_queue_s"].get<double>(),
                   nlohmann::json::parse(w.out)["baseline"]["avg_queue_s"].get<double>());
}

TEST(TuneCliTest, GridSearchValidatesOnTheLaterPeriod) {
  auto r = RunSchedmate("tune" + Site() +
                        " --grid PriorityWeightAge=0,1000 --grid PriorityWeightJobSize=0,1000 "
                        "--grid bf_window=1,1440 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ExpectMetrics(j["baseline"]);
  ExpectMetrics(j["predicted"]);
  const auto& v = j["validation"];
  EXPECT_EQ(v["candidates"], 8);
  EXPECT_EQ(v["train_jobs"].get<int>() + v["validation_jobs"].get<int>(), 30);
  EXPECT_GT(v["validation_jobs"].get<int>(), 1);
  EXPECT_LE(v["train_best"].get<double>(), v["train_baseline"].get<double>());
  EXPECT_EQ(v["holds"].get<bool>(),
            v["validation_predicted"].get<double>() <= v["validation_baseline"].get<double>());
  for (const auto& [key, value] : j["recommended"].items()) {
    EXPECT_TRUE(key == "PriorityWeightAge" || key == "PriorityWeightJobSize" || key == "bf_window")
        << key;
  }
  ASSERT_FALSE(j["slurm_conf_lines"].empty());
  for (const auto& line : j["slurm_conf_lines"]) {
    EXPECT_NE(line.get<std::string>().find('='), std::string::npos);
  }
}

TEST(TuneCliTest, BadInputGetsExitCodes) {
  TempDir dir;
  const std::string tiny = dir.File("tiny.txt");
  ASSERT_OK(WriteStringToFile(
      tiny,
      "JobID|User|Submit|Start|Elapsed|Timelimit|AllocTRES\n"
      "1|u|2026-01-01T00:00:00|2026-01-01T00:00:01|00:01:00|00:10:00|gres/gpu=1\n"
      "2|u|2026-01-01T00:00:00|2026-01-01T00:00:01|00:01:00|00:10:00|gres/gpu=1\n"));
  const std::string conf = " --slurm-conf " + ShellQuote(TestDataPath("sim/whatif/slurm.conf"));
  struct Case {
    const char* name;
    std::string args;
    int code;
    std::string in_err;
  };
  const Case cases[] = {
      {"unknown grid key", Site() + " --grid PriorityWeightMoon=1,2", 2, "--grid"},
      {"bad grid value", Site() + " --grid bf_window=0", 2, "--grid"},
      {"unknown objective", Site() + " --objective fastest", 2, "--objective"},
      {"fraction out of range", Site() + " --train-fraction 1", 2, "--train-fraction"},
      {"history too short to split", " --trace " + ShellQuote(tiny) + conf, 1, tiny},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = RunSchedmate("tune" + c.args + " --json");
    EXPECT_EQ(r.exit_code, c.code) << r.err;
    EXPECT_NE(r.err.find(c.in_err), std::string::npos) << r.err;
  }
}

// A stand-in for sbatch and squeue on PATH: sbatch runs every task of the array at once (task
// $FAKE_FAIL_TASK, if set, exits 1 without running) and squeue reports their states as Slurm's
// `squeue -r -o %i|%T|%r` does. Exercises the whole --via-slurm path, workers included.
void WriteFakeSlurm(const TempDir& dir) {
  ASSERT_OK(WriteStringToFile(dir.File("sbatch"), R"(#!/bin/bash
script="${@: -1}"; job=31
range=$(sed -n 's/^#SBATCH --array=0-\([0-9]*\).*/\1/p' "$script")
log=$(sed -n 's/^#SBATCH --output=//p' "$script")
: > "$(dirname "$0")/states"
for i in $(seq 0 "$range"); do
  if [ "$i" = "${FAKE_FAIL_TASK:-}" ]; then
    echo "${job}_$i|FAILED|NonZeroExitCode" >> "$(dirname "$0")/states"; continue
  fi
  out=${log//%A/$job}; out=${out//%a/$i}
  if SLURM_ARRAY_JOB_ID=$job SLURM_ARRAY_TASK_ID=$i bash "$script" > "$out" 2>&1; then
    echo "${job}_$i|COMPLETED|None" >> "$(dirname "$0")/states"
  else
    echo "${job}_$i|FAILED|NonZeroExitCode" >> "$(dirname "$0")/states"
  fi
done
echo "$job;fake"
)"));
  ASSERT_OK(
      WriteStringToFile(dir.File("squeue"), "#!/bin/bash\ncat \"$(dirname \"$0\")/states\"\n"));
  ASSERT_EQ(chmod(dir.File("sbatch").c_str(), 0755), 0);
  ASSERT_EQ(chmod(dir.File("squeue").c_str(), 0755), 0);
}

const char* kTuneGrid =
    " --grid PriorityWeightAge=0,1000,10000 --grid PriorityWeightJobSize=0,1000 "
    "--grid bf_window=1,1440 --json";

TEST(TuneCliTest, ViaSlurmGivesTheLocalSweepsAnswer) {
  TempDir bin, out;
  WriteFakeSlurm(bin);
  auto local = RunSchedmate("tune" + Site() + kTuneGrid);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  auto via = ::schedmate::testing::RunShell(
      "PATH=" + ShellQuote(bin.path()) + ":$PATH " +
      ShellQuote(::schedmate::testing::SchedmateBinary()) + " tune" + Site() + kTuneGrid +
      " --via-slurm --slurm-tasks 5 --slurm-poll 0.1 --slurm-dir " + ShellQuote(out.path()));
  ASSERT_EQ(via.exit_code, 0) << via.err;
  EXPECT_EQ(nlohmann::json::parse(via.out), nlohmann::json::parse(local.out));
  EXPECT_FALSE(nlohmann::json::parse(local.out)["recommended"].empty());
  EXPECT_NE(via.err.find("array job 31 (5 tasks)"), std::string::npos) << via.err;
  EXPECT_NE(via.err.find("5/5 tasks done (0 failed)"), std::string::npos) << via.err;
  for (int t = 0; t < 5; ++t) {
    auto chunk = ReadFileToString(out.File("schedmate-tune-31-" + std::to_string(t) + ".json"));
    ASSERT_OK(chunk);
    EXPECT_EQ(nlohmann::json::parse(*chunk)["chunk"], t);
  }
}

TEST(TuneCliTest, ViaSlurmNamesFailedTasksByIndex) {
  TempDir bin, out;
  WriteFakeSlurm(bin);
  auto via = ::schedmate::testing::RunShell(
      "FAKE_FAIL_TASK=2 PATH=" + ShellQuote(bin.path()) + ":$PATH " +
      ShellQuote(::schedmate::testing::SchedmateBinary()) + " tune" + Site() + kTuneGrid +
      " --via-slurm --slurm-tasks 4 --slurm-poll 0.1 --slurm-dir " + ShellQuote(out.path()));
  EXPECT_EQ(via.exit_code, 1);
  EXPECT_TRUE(via.out.empty()) << via.out;
  EXPECT_NE(via.err.find("1 of 4 tasks failed: tasks 2 (FAILED NonZeroExitCode, log " +
                         out.File("schedmate-tune-31-2.log") + ")"),
            std::string::npos)
      << via.err;
}

TEST(TuneCliTest, DryRunPrintsTheArrayScript) {
  TempDir out;
  auto r = RunSchedmate("tune" + Site() + kTuneGrid +
                        " --via-slurm --dry-run --slurm-partition gpu --slurm-time 30 "
                        "--slurm-max-parallel 2 --slurm-dir " +
                        ShellQuote(out.path()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& line : std::vector<std::string>{
           "#SBATCH --array=0-11%2\n", "#SBATCH --partition=gpu\n", "#SBATCH --time=30\n",
           "'--chunk' ''\"${SLURM_ARRAY_TASK_ID}\"'/12'", "'--grid' 'bf_window=1,1440'",
           "'--threads' '1'"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  // Nothing submitted, nothing written.
  EXPECT_FALSE(std::filesystem::exists(out.File("schedmate-tune.sbatch")));
  // The Slurm options need --via-slurm.
  EXPECT_EQ(RunSchedmate("tune" + Site() + " --dry-run").exit_code, 2);
  EXPECT_EQ(RunSchedmate("tune" + Site() + " --slurm-partition gpu").exit_code, 2);
  EXPECT_EQ(RunSchedmate("tune" + Site() + " --worker --chunk 4/4 --worker-out x").exit_code, 2);
}

TEST(WhatIfCliTest, SharedSiteHistory) {
  SM_SKIP_WITHOUT_SHARED(pipe, "traces/slurm_local_sacct/sacct-P.txt");
  SM_SKIP_WITHOUT_SHARED(json, "traces/slurm_local_sacct/sacct.json");
  SM_SKIP_WITHOUT_SHARED(conf, "traces/slurm_local_sacct/slurm.conf");
  for (const auto& trace : {pipe, json}) {
    SCOPED_TRACE(trace);
    auto r = RunSchedmate("whatif --trace " + ShellQuote(trace) + " --slurm-conf " +
                          ShellQuote(conf) + " --add-nodes 2x8 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["baseline"]["jobs"], 40);
    EXPECT_EQ(j["cluster"]["baseline_gpus"], 16);
    EXPECT_LE(j["scenario"]["avg_queue_s"].get<double>(),
              j["baseline"]["avg_queue_s"].get<double>());
  }
}

}  // namespace
}  // namespace schedmate::sim
