#include "service/anomalies.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "service/companion.h"

namespace schedmate::service {
namespace {

const SimTime kT0 = SimTime::FromSeconds(1'800'000'000);

JobView RunningJob(const std::string& id, bool stalled, bool slowdown) {
  JobView v;
  v.job.id = id;
  v.job.state = "RUNNING";
  v.job.gpus = 8;
  v.job.node_list = "gpu1";
  LogMetrics m;
  m.at = kT0;
  m.step = 100;
  m.stalled = stalled;
  m.slowdown = slowdown;
  v.metrics = m;
  return v;
}

FailureRecord Failure(const std::string& job, FailureClass cls, const std::string& cat,
                      const std::string& nodes, SimTime at) {
  FailureRecord f;
  f.job_id = job;
  f.cls = cls;
  f.category = cat;
  f.node_list = nodes;
  f.at = at;
  return f;
}

TEST(Anomalies, StalledJobIsFlaggedOnlyAfterTheMinimumDurationAndForgottenWhenItClears) {
  AnomalyDetector d;  // min_stalled 2 minutes
  ServiceView v;
  v.jobs = {RunningJob("7", true, false)};
  EXPECT_TRUE(d.Update(v, kT0).empty());
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(1)).empty());
  auto a = d.Update(v, kT0 + Duration::Minutes(2));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "stalled");
  EXPECT_EQ(a[0].job_id, "7");
  EXPECT_EQ(a[0].since, kT0);
  EXPECT_EQ(a[0].severity, "warning");
  // It made progress: gone, and a new stall starts its clock again.
  v.jobs = {RunningJob("7", false, false)};
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(3)).empty());
  v.jobs = {RunningJob("7", true, false)};
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(4)).empty());
  auto again = d.Update(v, kT0 + Duration::Minutes(6));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].since, kT0 + Duration::Minutes(4));
}

TEST(Anomalies, CleanJobsAreNeverFlagged) {
  AnomalyDetector d;
  ServiceView v;
  JobView ok = RunningJob("1", false, false);
  ok.job.time_limit_min = 120;
  Prediction p;
  p.duration = Duration::Minutes(60);
  p.high = Duration::Minutes(90);
  ok.prediction = p;
  v.jobs = {ok};
  for (int minute = 0; minute <= 60; minute += 5) {
    EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(minute)).empty()) << minute;
  }
}

TEST(Anomalies, TimeLimitFarAboveThePredictionBlocksBackfill) {
  AnomalyDetector d;
  ServiceView v;
  JobView pending;
  pending.job.id = "9";
  pending.job.state = "PENDING";
  pending.job.time_limit_min = 24 * 60;
  Prediction p;
  p.duration = Duration::Minutes(20);
  p.high = Duration::Minutes(30);
  pending.prediction = p;
  v.jobs = {pending};
  auto a = d.Update(v, kT0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "time_limit_high");
  EXPECT_EQ(a[0].severity, "warning");
  EXPECT_NE(a[0].suggestion.find("--time=45"), std::string::npos) << a[0].suggestion;
}

TEST(Anomalies, NodesFailingRepeatedlyAndJobsFailingTheSameWay) {
  AnomalyDetector d;
  ServiceView v;
  v.failures = {
      Failure("1", FailureClass::kInfra, "gpu_hardware", "gpu[1-2]", kT0 - Duration::Hours(1)),
      Failure("2", FailureClass::kInfra, "gpu_hardware", "gpu1", kT0 - Duration::Hours(2)),
      Failure("3", FailureClass::kInfra, "gpu_hardware", "gpu3",
              kT0 - Duration::Hours(48)),  // too old
      Failure("3", FailureClass::kInfra, "gpu_hardware", "gpu3", kT0),
      Failure("5", FailureClass::kApp, "python_exception", "gpu4", kT0 - Duration::Minutes(30)),
      Failure("5", FailureClass::kApp, "python_exception", "gpu4", kT0 - Duration::Minutes(20)),
      Failure("5", FailureClass::kApp, "python_exception", "gpu4", kT0 - Duration::Minutes(10)),
  };
  auto a = d.Update(v, kT0);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, "node_failures");
  EXPECT_EQ(a[0].node, "gpu1");
  EXPECT_EQ(a[0].severity, "critical");
  EXPECT_EQ(a[1].kind, "repeated_failure");
  EXPECT_EQ(a[1].job_id, "5");
  auto counts = CountAnomalies(a);
  EXPECT_EQ(counts["node_failures"], 1);
  EXPECT_EQ(counts["repeated_failure"], 1);
  EXPECT_EQ(counts["stalled"], 0);
  nlohmann::json j = AnomaliesToJson(a);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["node"], "gpu1");
  EXPECT_FALSE(j[0].contains("job_id"));
  EXPECT_EQ(j[1]["job_id"], "5");
  EXPECT_EQ(j[1]["since"], kT0.seconds());
  for (const char* key : {"kind", "since", "severity", "evidence", "suggestion"}) {
    EXPECT_TRUE(j[1].contains(key)) << key;
  }
}

// A running job on gpu1 with the given GPUs: (utilisation %, memory MiB) each.
JobView ProbedJob(const std::string& id, std::vector<std::pair<double, double>> gpus) {
  JobView v = RunningJob(id, false, false);
  v.job.gpus = static_cast<int>(gpus.size());
  v.job.nodes = 1;
  v.job.cpus = 1;
  v.job.start = kT0 - Duration::Minutes(5);
  JobUsage u;
  u.at = kT0;
  u.gpu_source = "nvidia-smi";
  for (size_t i = 0; i < gpus.size(); ++i) {
    u.gpus.push_back({.node = "gpu1",
                      .index = static_cast<int>(i),
                      .utilization_pct = gpus[i].first,
                      .memory_used_mib = gpus[i].second});
  }
  v.usage = u;
  return v;
}

TEST(Anomalies, IdleGpusAfterTheirMinimumDurationAndNotForAShortDip) {
  AnomalyOptions o;
  o.min_idle_gpu = Duration::Minutes(10);
  AnomalyDetector d(o);
  ServiceView v;
  v.jobs = {ProbedJob("4", {{0, 30000}, {2, 30000}})};
  EXPECT_TRUE(d.Update(v, kT0).empty());
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(5)).empty());
  v.jobs = {ProbedJob("4", {{90, 30000}, {95, 30000}})};  // busy again: the clock starts over
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(6)).empty());
  v.jobs = {ProbedJob("4", {{0, 30000}, {1, 30000}})};
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(7)).empty());
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(16)).empty());
  auto a = d.Update(v, kT0 + Duration::Minutes(17));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "idle_gpu");
  EXPECT_EQ(a[0].job_id, "4");
  EXPECT_EQ(a[0].since, kT0 + Duration::Minutes(7));
  EXPECT_EQ(a[0].severity, "critical");  // all of its GPUs
  EXPECT_NE(a[0].evidence.find("gpu1:0,1"), std::string::npos) << a[0].evidence;
  // One of four in-use GPUs idle: a warning naming that one.
  AnomalyDetector now(AnomalyOptions{.min_idle_gpu = Duration::Zero()});
  v.jobs = {ProbedJob("5", {{90, 900}, {3, 900}, {88, 900}, {91, 900}})};
  auto one = now.Update(v, kT0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].severity, "warning");
  EXPECT_NE(one[0].evidence.find("1 of 4"), std::string::npos);
  EXPECT_NE(one[0].evidence.find("gpu1:1"), std::string::npos);
}

TEST(Anomalies, OverRequestedGpusFromTheProbeOrTheLogsRanks) {
  AnomalyDetector d(AnomalyOptions{.min_over_requested = Duration::Minutes(10)});
  ServiceView v;
  // 4 GPUs, one works, three never touched.
  v.jobs = {ProbedJob("6", {{95, 20000}, {0, 0}, {0, 0}, {0, 0}})};
  EXPECT_TRUE(d.Update(v, kT0).empty());
  auto a = d.Update(v, kT0 + Duration::Minutes(10));
  ASSERT_EQ(a.size(), 1u);  // not idle_gpu: the GPU in use is busy
  EXPECT_EQ(a[0].kind, "over_requested");
  EXPECT_NE(a[0].evidence.find("1 of 4 GPUs"), std::string::npos) << a[0].evidence;
  EXPECT_NE(a[0].suggestion.find("--gres=gpu:1"), std::string::npos) << a[0].suggestion;
  // No probe: the log's world size decides.
  AnomalyDetector log_only(AnomalyOptions{.min_over_requested = Duration::Zero()});
  JobView j = RunningJob("7", false, false);  // 8 GPUs
  j.metrics->ranks = 2;
  v.jobs = {j};
  auto b = log_only.Update(v, kT0);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NE(b[0].evidence.find("2 ranks for 8 GPUs"), std::string::npos) << b[0].evidence;
  EXPECT_NE(b[0].suggestion.find("--gres=gpu:2"), std::string::npos);
  // One process driving all its GPUs (memory on each): not over-requested whatever the log says.
  JobView model_parallel = ProbedJob("8", {{60, 9000}, {55, 9000}});
  model_parallel.metrics->ranks = 1;
  v.jobs = {model_parallel};
  EXPECT_TRUE(log_only.Update(v, kT0).empty());
}

// A probe answering after the pass began (usage.at > now): the minimum duration counts from the
// answer, so the condition is never flagged before it can have held that long.
TEST(Anomalies, UsageConditionsCountFromTheProbesAnswer) {
  AnomalyDetector d(AnomalyOptions{.min_idle_gpu = Duration::Seconds(6),
                                   .min_over_requested = Duration::Seconds(6)});
  ServiceView v;
  JobView idle = ProbedJob("4", {{0, 30000}, {1, 30000}});
  JobView over = ProbedJob("6", {{95, 20000}, {0, 0}});
  idle.usage->at = over.usage->at = kT0 + Duration::Millis(700);
  v.jobs = {idle, over};
  EXPECT_TRUE(d.Update(v, kT0).empty());
  EXPECT_TRUE(d.Update(v, kT0 + Duration::Seconds(6)).empty());  // 5.3 s after the answer
  auto a = d.Update(v, kT0 + Duration::Seconds(8));
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, "idle_gpu");
  EXPECT_EQ(a[1].kind, "over_requested");
  for (const auto& x : a) EXPECT_EQ(x.since, kT0 + Duration::Millis(700)) << x.kind;
}

TEST(Anomalies, OverRequestedCpusAndMemoryFromSstat) {
  AnomalyDetector d(AnomalyOptions{.min_over_requested = Duration::Zero()});
  ServiceView v;
  JobView j = ProbedJob("9", {{90, 9000}});
  j.job.cpus = 16;
  j.job.memory_mib = 64 * 1024;
  j.usage->cpu_seconds = 300;                // 1 CPU's worth over 5 minutes
  j.usage->memory_bytes = int64_t{3} << 30;  // 3 GiB of 64
  v.jobs = {j};
  auto a = d.Update(v, kT0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, "over_requested");
  EXPECT_NE(a[0].evidence.find("of 16 CPUs"), std::string::npos) << a[0].evidence;
  EXPECT_NE(a[0].evidence.find("65536 MiB allocated"), std::string::npos) << a[0].evidence;
  EXPECT_NE(a[0].suggestion.find("--cpus-per-task=2"), std::string::npos) << a[0].suggestion;
  EXPECT_NE(a[0].suggestion.find("--mem=6G"), std::string::npos) << a[0].suggestion;
  // Small allocations are left alone; so is a job that uses what it holds.
  j.job.cpus = 2;
  j.job.memory_mib = 2048;
  v.jobs = {j};
  EXPECT_TRUE(d.Update(v, kT0).empty());
  j.job.cpus = 16;
  j.usage->cpu_seconds = 16 * 300 * 0.9;
  j.job.memory_mib = 8192;
  j.usage->memory_bytes = int64_t{7} << 30;
  v.jobs = {j};
  EXPECT_TRUE(d.Update(v, kT0).empty());
}

TEST(Anomalies, CleanProbedJobAndFailedProbesAreNeverFlagged) {
  AnomalyDetector d(
      AnomalyOptions{.min_idle_gpu = Duration::Zero(), .min_over_requested = Duration::Zero()});
  ServiceView v;
  JobView clean = ProbedJob("10", {{92, 30000}, {90, 30000}});
  clean.metrics->ranks = 2;
  JobView unprobed = RunningJob("11", false, false);
  unprobed.usage = JobUsage{.at = kT0, .gpu_source = "nvidia-smi", .gpu_error = "exited 6"};
  v.jobs = {clean, unprobed};
  for (int minute = 0; minute <= 60; minute += 5)
    EXPECT_TRUE(d.Update(v, kT0 + Duration::Minutes(minute)).empty()) << minute;
  EXPECT_EQ(CountAnomalies({})["idle_gpu"], 0);
  EXPECT_EQ(CountAnomalies({})["over_requested"], 0);
}

}  // namespace
}  // namespace schedmate::service
