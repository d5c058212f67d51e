#include "trace/estimates.h"

#include <gtest/gtest.h>

#include "testing/test_util.h"
#include "trace/trace_reader.h"

namespace schedmate::trace {
namespace {

TEST(EstimatesTest, ReadsJobIdPriorityLastDuplicateWins) {
  auto r = ReadEstimates(testing::TestDataPath("trace/estimates.csv"));
  ASSERT_OK(r);
  EXPECT_EQ(r->size(), 4u);
  EXPECT_DOUBLE_EQ(r->at("101"), 300);
  EXPECT_DOUBLE_EQ(r->at("102"), -50);
  EXPECT_DOUBLE_EQ(r->at("103"), 15);
}

TEST(EstimatesTest, ApplyUsesLucidNegativeRuleByDefault) {
  auto table = ReadTrace(testing::TestDataPath("trace/lucid_jobs.csv"));
  ASSERT_OK(table);
  auto est = ReadEstimates(testing::TestDataPath("trace/estimates.csv"));
  ASSERT_OK(est);
  ApplyEstimatesStats s = ApplyEstimates(*table, *est);
  EXPECT_EQ(s.matched, 3);
  EXPECT_EQ(s.missing, 2);  // 104, 105
  EXPECT_EQ(s.negative, 1);
  EXPECT_EQ(s.unused, 1);  // 999
  EXPECT_EQ(table->jobs[0].estimate, Duration::Seconds(300));
  EXPECT_EQ(table->jobs[1].estimate, Duration::Seconds(1000));  // -50 -> 1000
  EXPECT_EQ(table->jobs[2].estimate, Duration::Millis(15'000));
  EXPECT_FALSE(table->jobs[3].estimate.has_value());
}

TEST(EstimatesTest, NegativeOptions) {
  auto table = ReadTrace(testing::TestDataPath("trace/lucid_jobs.csv"));
  ASSERT_OK(table);
  EstimateMap m{{"102", -50.0}};
  ApplyEstimatesOptions keep;
  keep.negatives = NegativeEstimates::kKeep;
  ApplyEstimates(*table, m, keep);
  EXPECT_EQ(table->jobs[1].estimate, Duration::Seconds(-50));
  ApplyEstimatesOptions drop;
  drop.negatives = NegativeEstimates::kDrop;
  auto s = ApplyEstimates(*table, m, drop);
  EXPECT_FALSE(table->jobs[1].estimate.has_value());
  EXPECT_EQ(s.matched, 0);
  EXPECT_EQ(s.negative, 1);
  ApplyEstimatesOptions other;
  other.negative_replacement = 42;
  ApplyEstimates(*table, m, other);
  EXPECT_EQ(table->jobs[1].estimate, Duration::Seconds(42));
}

TEST(EstimatesTest, MalformedFiles) {
  struct Case {
    const char* contents;
    const char* want;
  } cases[] = {
      {"", "e.csv:1: empty estimates file"},
      {"id,value\n1,2\n", "e.csv:1: header must have job_id and priority"},
      {"job_id,priority\n1,2\n2,abc\n", "e.csv:3: 'abc' is not a finite number"},
      {"job_id,priority\n1,2,3\n", "e.csv:2: expected 2 fields, got 3"},
      {"job_id,priority\n,2\n", "e.csv:2: empty job_id"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.contents);
    auto r = ParseEstimates(c.contents, "e.csv");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(EstimatesTest, ReadsHistoryReplayFilesWithQuantiles) {
  const std::string csv =
      "job_id,predicted_duration_s,p10_s,p50_s,p90_s\n"
      "101,97.000,21.398,97.000,439.714\n"
      "103,3600,441.5,3000,29374\n";
  auto points = ParseEstimates(csv, "pred.csv");
  ASSERT_OK(points);
  EXPECT_DOUBLE_EQ(points->at("101"), 97);
  EXPECT_DOUBLE_EQ(points->at("103"), 3600);
  auto q = ParseEstimateQuantiles(csv, "pred.csv");
  ASSERT_OK(q);
  ASSERT_EQ(q->size(), 2u);
  EXPECT_EQ(q->at("103").p10, Duration::Micros(441'500'000));
  EXPECT_EQ(q->at("103").p50, Duration::Seconds(3000));
  EXPECT_EQ(q->at("103").p90, Duration::Seconds(29374));
  auto table = ReadTrace(testing::TestDataPath("trace/lucid_jobs.csv"));
  ASSERT_OK(table);
  EXPECT_EQ(ApplyEstimateQuantiles(*table, *q), 2);
  ASSERT_TRUE(table->jobs[0].estimate_quantiles.has_value());
  EXPECT_EQ(table->jobs[0].estimate_quantiles->p90, Duration::Micros(439'714'000));
  EXPECT_FALSE(table->jobs[1].estimate_quantiles.has_value());  // 102: not in the file
  // Lucid's job_id,priority files have no quantiles: an empty map, not an error.
  auto none = ParseEstimateQuantiles("job_id,priority\n1,2\n", "e.csv");
  ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
}

TEST(EstimatesTest, MalformedQuantiles) {
  const char* cases[] = {
      "job_id,p10_s,p50_s,p90_s\n1,5,4,6\n",   // out of order
      "job_id,p10_s,p50_s,p90_s\n1,-1,4,6\n",  // negative
      "job_id,p10_s,p50_s,p90_s\n1,x,4,6\n",   // not a number
      "job_id,p10_s,p50_s,p90_s\n1,1,4\n",     // short row
  };
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    auto r = ParseEstimateQuantiles(c, "pred.csv");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("pred.csv:2:"), std::string::npos);
  }
}

}  // namespace
}  // namespace schedmate::trace
