// The simulator's JSON encoders (sim_json.h) and the what-if helpers the CLI used to compute
// itself: means and spreads over seeds, observed waits, cluster sizing from a trace.

#include "sim/sim_json.h"

#include <gtest/gtest.h>

#include "sim/job_builder.h"
#include "sim/whatif.h"

namespace schedmate::sim {
namespace {

using testing::JobBuilder;
using testing::Table;

WhatIfMetrics Metrics(int64_t jobs, double queue, std::vector<PartitionMetrics> parts = {}) {
  WhatIfMetrics m;
  m.counts.jobs = jobs;
  m.avg_queue_s = queue;
  m.p95_queue_s = 2 * queue;
  m.avg_jct_s = queue + 100;
  m.utilisation = queue / 1000;
  m.per_partition = std::move(parts);
  return m;
}

TEST(SimJsonTest, SummaryCarriesEveryFieldAndVcsByName) {
  Summary s;
  s.policy = "fifo";
  s.counts.jobs = 7;
  s.counts.rejected = 1;
  s.preemptions = 3;
  s.avg_jct_s = 12.5;
  s.p99_jct_s = 40;
  s.gpu_utilization = 0.25;
  s.per_vc = {{"b", 4, 10.0, 2.0}, {"a", 3, 20.0, 5.0}};
  const nlohmann::json j = SummaryToJson(s);
  EXPECT_EQ(j["policy"], "fifo");
  EXPECT_EQ(j["jobs"], 7);
  EXPECT_EQ(j["rejected"], 1);
  EXPECT_EQ(j["preemptions"], 3);
  EXPECT_DOUBLE_EQ(j["avg_jct_s"].get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(j["p99_jct_s"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(j["gpu_utilization"].get<double>(), 0.25);
  ASSERT_EQ(j["per_vc"].size(), 2u);
  EXPECT_EQ(j["per_vc"]["a"]["jobs"], 3);
  EXPECT_EQ(j["per_vc"]["b"]["jobs"], 4);
  EXPECT_EQ(j.size(), 15u);
}

TEST(SimJsonTest, WhatIfMetricsNameTheUnnamedPartition) {
  const nlohmann::json j =
      WhatIfMetricsToJson(Metrics(5, 10, {{{"", 2, 3, 1}, 2}, {{"gpu", 3, 6, 4}, 5}}));
  EXPECT_EQ(j["jobs"], 5);
  EXPECT_DOUBLE_EQ(j["p95_queue_s"].get<double>(), 20);
  EXPECT_EQ(j["per_partition"]["(none)"]["jobs"], 2);
  EXPECT_DOUBLE_EQ(j["per_partition"]["gpu"]["avg_jct_s"].get<double>(), 6);
}

TEST(SimJsonTest, MeanRoundsCountsAndAveragesPartitionsOverTheRunsThatHaveThem) {
  const WhatIfMetrics m =
      MeanWhatIfMetrics({Metrics(3, 10, {{{"a", 2, 30, 10}, 20}}),
                         Metrics(4, 20, {{{"a", 3, 50, 30}, 40}, {{"b", 1, 5, 5}, 5}})});
  EXPECT_EQ(m.counts.jobs, 4);  // 3.5 rounds away from zero
  EXPECT_DOUBLE_EQ(m.avg_queue_s, 15);
  ASSERT_EQ(m.per_partition.size(), 2u);
  EXPECT_EQ(m.per_partition[0].name, "a");
  EXPECT_EQ(m.per_partition[0].jobs, 3);  // 2.5 -> 3
  EXPECT_DOUBLE_EQ(m.per_partition[0].avg_queue_s, 20);
  EXPECT_EQ(m.per_partition[1].name, "b");  // only in the second run: its own value
  EXPECT_DOUBLE_EQ(m.per_partition[1].avg_queue_s, 5);
  EXPECT_EQ(MeanWhatIfMetrics({}).counts.jobs, 0);
}

TEST(SimJsonTest, SpreadIsMinMaxAndSampleStdev) {
  const nlohmann::json j =
      WhatIfSpreadToJson({Metrics(1, 10), Metrics(1, 20), Metrics(1, 30)}, {7, 8, 9});
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["seeds"], nlohmann::json({7, 8, 9}));
  EXPECT_DOUBLE_EQ(j["avg_queue_s"]["min"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(j["avg_queue_s"]["max"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(j["avg_queue_s"]["stdev"].get<double>(), 10);  // sqrt(200 / 2)
  const nlohmann::json one = WhatIfSpreadToJson({Metrics(1, 10)}, {1});
  EXPECT_DOUBLE_EQ(one["avg_jct_s"]["stdev"].get<double>(), 0);
  const nlohmann::json none = WhatIfSpreadToJson({}, {});
  EXPECT_DOUBLE_EQ(none["utilisation"]["min"].get<double>(), 0);
}

TEST(SimJsonTest, ObservedWaitsCountGpuJobsWithARecordedWait) {
  JobTable t = Table(
      {JobBuilder().Gpus(1), JobBuilder().Gpus(2), JobBuilder().Gpus(0), JobBuilder().Gpus(1)});
  EXPECT_FALSE(MeasureObservedWaits(t).has_value());
  EXPECT_TRUE(ObservedWaitsToJson(std::nullopt).is_null());
  t.jobs[0].observed_wait = Duration::FromSecondsF(10);
  t.jobs[1].observed_wait = Duration::FromSecondsF(30);
  t.jobs[2].observed_wait = Duration::FromSecondsF(1000);  // no GPUs: not counted
  auto w = MeasureObservedWaits(t);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->jobs, 2);
  EXPECT_DOUBLE_EQ(w->avg_queue_s, 20);
  EXPECT_DOUBLE_EQ(w->p95_queue_s, 29);  // 10 + 0.95 x 20
  EXPECT_EQ(ObservedWaitsToJson(w)["jobs"], 2);
}

TEST(SimJsonTest, ClusterSizedForTheLargestJobAndTheMeanDemand) {
  // 4 GPUs x 1000 s over a 100 s span at 80% load: ceil(4000 / 100 / 0.8) = 50 GPUs -> 7 nodes.
  JobTable busy = Table({JobBuilder().Gpus(2).SubmitAt(0).Runtime(1000),
                         JobBuilder().Gpus(2).SubmitAt(100).Runtime(1000)});
  auto s = SizeClusterForTrace(busy, 8);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->nodes, 7);
  EXPECT_EQ(s->max_job_gpus, 2);
  EXPECT_DOUBLE_EQ(s->mean_demand_gpus, 50);
  // A light load: the largest job decides (12 GPUs -> 2 nodes of 8).
  JobTable light = Table({JobBuilder().Gpus(12).SubmitAt(0).Runtime(1),
                          JobBuilder().Gpus(1).SubmitAt(100000).Runtime(1)});
  auto l = SizeClusterForTrace(light, 8);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->nodes, 2);
  // Beyond the simulator's limit: refused, naming the trace.
  JobTable huge = Table({JobBuilder().Gpus(kMaxClusterGpus + 1).SubmitAt(0).Runtime(1)});
  huge.source = "big.csv";
  auto h = SizeClusterForTrace(huge, 8);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("big.csv"), std::string::npos);
}

}  // namespace
}  // namespace schedmate::sim
