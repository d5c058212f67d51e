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

}  // namespace
}  // namespace schedmate::service
