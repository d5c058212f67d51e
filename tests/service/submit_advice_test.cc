#include "service/submit_advice.h"

#include <gtest/gtest.h>

namespace schedmate::service {
namespace {

Prediction P(int minutes, int high_minutes, double confidence) {
  return Prediction{Duration::Minutes(minutes),
                    Duration::Minutes(minutes / 2),
                    Duration::Minutes(high_minutes),
                    confidence,
                    "because",
                    "test",
                    SimTime()};
}

struct Case {
  const char* name;
  SubmitPolicy policy;
  std::optional<int64_t> user_limit;
  double confidence;
  std::optional<int64_t> want_limit;
  bool want_comment;
};

TEST(AdviseSubmission, PolicyTable) {
  const Case cases[] = {
      {"off leaves the job alone", SubmitPolicy::kOff, std::nullopt, 0.9, std::nullopt, false},
      {"note only comments", SubmitPolicy::kNote, std::nullopt, 0.9, std::nullopt, true},
      {"set fills a missing limit", SubmitPolicy::kSet, std::nullopt, 0.9, 60, true},
      {"set keeps the user's limit", SubmitPolicy::kSet, 600, 0.9, std::nullopt, true},
      {"cap lowers a long limit", SubmitPolicy::kCap, 600, 0.9, 60, true},
      {"cap keeps a short limit", SubmitPolicy::kCap, 30, 0.9, std::nullopt, true},
      {"low confidence only notes", SubmitPolicy::kCap, 600, 0.1, std::nullopt, true},
  };
  ServiceConfig config;
  config.limit_margin = 1.5;
  config.min_confidence = 0.5;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    config.submit_policy = c.policy;
    auto a = AdviseSubmission(P(20, 40, c.confidence), c.user_limit, config);
    EXPECT_EQ(a.set_time_limit_min, c.want_limit);
    EXPECT_EQ(a.suggested_limit_min, 60);
    EXPECT_EQ(!a.comment.empty(), c.want_comment);
    EXPECT_EQ(!a.message.empty(), c.want_comment);
  }
}

TEST(AdviseSubmission, ClampsToConfiguredRange) {
  ServiceConfig config;
  config.submit_policy = SubmitPolicy::kSet;
  config.min_limit_min = 10;
  config.max_limit_min = 100;
  EXPECT_EQ(AdviseSubmission(P(1, 1, 1), std::nullopt, config).set_time_limit_min, 10);
  EXPECT_EQ(AdviseSubmission(P(500, 900, 1), std::nullopt, config).set_time_limit_min, 100);
}

// Slurm may cut the message short: what was done to the job comes before the explanation.
TEST(AdviseSubmission, ActionPrecedesTheExplanation) {
  ServiceConfig config;
  config.submit_policy = SubmitPolicy::kCap;
  Prediction p = P(20, 40, 0.9);
  p.explanation = std::string(4000, 'x');
  auto set = AdviseSubmission(p, std::nullopt, config);
  ASSERT_TRUE(set.set_time_limit_min.has_value());
  EXPECT_LT(set.message.find("time limit set to"), set.message.find(p.explanation));
  auto capped = AdviseSubmission(p, 100000, config);
  ASSERT_TRUE(capped.set_time_limit_min.has_value());
  EXPECT_LT(capped.message.find("time limit capped from"), capped.message.find(p.explanation));
  EXPECT_LT(capped.message.find("estimated run time"), capped.message.find("time limit capped"));
}

}  // namespace
}  // namespace schedmate::service
