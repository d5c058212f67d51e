#include "core/result.h"
#include "core/status.h"
#include "testing/test_util.h"

namespace schedmate {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  SM_ASSIGN_OR_RETURN(int h, Half(x));
  SM_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusTest, OkIsCheapAndPrintsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, NamedConstructorsCarryCodeAndMessage) {
  Status s = Status::DataLoss("trace.csv:3: truncated row");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.ToString(), "DATA_LOSS: trace.csv:3: truncated row");
  EXPECT_EQ(s.WithContext("loading").message(), "loading: trace.csv:3: truncated row");
}

TEST(StatusTest, RetryableOnlyForTransientCodes) {
  EXPECT_TRUE(Status::Unavailable("x").IsRetryable());
  EXPECT_TRUE(Status::DeadlineExceeded("x").IsRetryable());
  EXPECT_FALSE(Status::InvalidArgument("x").IsRetryable());
  EXPECT_FALSE(Status::Internal("x").IsRetryable());
}

TEST(ResultTest, PropagatesThroughMacros) {
  auto ok = Quarter(8);
  ASSERT_OK(ok);
  EXPECT_EQ(*ok, 2);
  auto bad = Quarter(6);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "odd: 3");
  EXPECT_EQ(bad.value_or(-1), -1);
}

TEST(ResultDeathTest, ValueOnErrorAborts) {
  Result<int> r = Status::NotFound("x");
  EXPECT_DEATH({ (void)r.value(); }, "value\\(\\) on error Result");
}

}  // namespace
}  // namespace schedmate
