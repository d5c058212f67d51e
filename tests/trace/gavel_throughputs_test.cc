#include "trace/gavel_throughputs.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"
#include "trace/trace_reader.h"
#include "trace/trace_stats.h"

namespace schedmate::trace {
namespace {

TEST(GavelThroughputsTest, TupleKeyedFile) {
  auto t = ReadGavelThroughputs(testing::TestDataPath("trace/gavel_throughputs.json"));
  ASSERT_OK(t);
  EXPECT_EQ(t->steps_per_second.size(), 3u);  // A3C has no "null" entry
  EXPECT_DOUBLE_EQ((t->steps_per_second.at({"Transformer (batch size 128)", 4})), 250.0);
  auto table = ReadTrace(testing::TestDataPath("trace/gavel_small.trace"));
  ASSERT_OK(table);
  GavelDurationStats s = ApplyGavelThroughputs(*table, *t);
  EXPECT_EQ(s.derived, 2);
  EXPECT_EQ(s.missing, 0);
  EXPECT_EQ(s.fallback, 0);
  EXPECT_EQ(table->jobs[0].duration, Duration::Seconds(250));                   // 1000 steps / 4
  EXPECT_EQ(table->jobs[1].duration, Duration::FromSecondsF(79561.0 / 250.0));  // 4 GPUs
  EXPECT_TRUE(ComputeTraceStats(*table).durations_known);
}

TEST(GavelThroughputsTest, TypeKeyedFileAndFallbacks) {
  auto t = ReadGavelThroughputs(testing::TestDataPath("trace/gavel_throughputs.json"), "k80");
  ASSERT_OK(t);
  auto table = ReadTrace(testing::TestDataPath("trace/gavel_small.trace"));
  ASSERT_OK(table);
  auto s = ApplyGavelThroughputs(*table, *t);
  EXPECT_EQ(s.derived, 2);
  EXPECT_EQ(table->jobs[1].duration, Duration::FromSecondsF(79561.0 / 20.0));
  // (type, 4) missing in a tuple-keyed file -> (type, 1), counted as a fallback.
  GavelThroughputs only_one;
  only_one.steps_per_second[{"Transformer (batch size 128)", 1}] = 10;
  auto f = ApplyGavelThroughputs(*table, only_one);
  EXPECT_EQ(f.derived, 1);
  EXPECT_EQ(f.fallback, 1);
  EXPECT_EQ(f.missing, 1);  // ResNet-50 not in this table
}

TEST(GavelThroughputsTest, Errors) {
  EXPECT_FALSE(ParseGavelThroughputs("not json", "x.json").ok());
  EXPECT_FALSE(ParseGavelThroughputs("[1,2]", "x.json").ok());
  auto missing = ParseGavelThroughputs(R"({"k80": {}})", "x.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("x.json: no throughputs for worker type 'v100'"),
            std::string::npos);
  EXPECT_FALSE(ParseGavelThroughputs(R"({"v100": {"A": {"null": -1}}})", "x.json").ok());
  EXPECT_FALSE(ParseGavelThroughputs(R"({"v100": {"A": {"x": 1}}})", "x.json").ok());
  EXPECT_FALSE(ParseGavelThroughputs(R"j({"v100": {"('A', zz)": {"null": 1}}})j", "x.json").ok());
}

}  // namespace
}  // namespace schedmate::trace
