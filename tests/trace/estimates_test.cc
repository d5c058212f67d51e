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

}  // namespace
}  // namespace schedmate::trace
