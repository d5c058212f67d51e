// trace stats' JSON (trace_json.h): the span from the submit times, the GPU histogram as an array
// in bucket order, durations in seconds and the states by name.

#include "trace/trace_json.h"

#include <gtest/gtest.h>

namespace schedmate::trace {
namespace {

TEST(TraceJsonTest, StatsFieldsWithTheHistogramInBucketOrder) {
  JobTable t;
  t.source = "jobs.csv";
  t.format = TraceFormat::kLucid;
  t.skip_reasons = {"jobs.csv:3: gpu_num: not a number"};
  TraceStats s;
  s.jobs = 4;
  s.rows_read = 5;
  s.rows_skipped = 1;
  s.first_submit = SimTime::FromMicros(10'000'000);
  s.last_submit = SimTime::FromMicros(70'000'000);
  s.users = 2;
  s.gpu_histogram = {{"1", 3}, {">8", 1}};  // not alphabetical: the array keeps this order
  s.p90 = Duration::FromSecondsF(90);
  s.gpu_hours = 1.5;
  s.states = {{"completed", 3}, {"failed", 1}};
  const nlohmann::json j = TraceStatsToJson(t, s);
  EXPECT_EQ(j["source"], "jobs.csv");
  EXPECT_EQ(j["format"], "lucid");
  EXPECT_EQ(j["jobs"], 4);
  EXPECT_EQ(j["rows_skipped"], 1);
  EXPECT_EQ(j["skip_reasons"].size(), 1u);
  EXPECT_DOUBLE_EQ(j["span_s"].get<double>(), 60);
  ASSERT_EQ(j["gpu_histogram"].size(), 2u);
  EXPECT_EQ(j["gpu_histogram"][0]["gpus"], "1");
  EXPECT_EQ(j["gpu_histogram"][1]["gpus"], ">8");
  EXPECT_EQ(j["gpu_histogram"][1]["jobs"], 1);
  EXPECT_DOUBLE_EQ(j["duration_s"]["p90"].get<double>(), 90);
  EXPECT_EQ(j["states"]["failed"], 1);
  EXPECT_EQ(j["durations_known"], true);
}

}  // namespace
}  // namespace schedmate::trace
