#include "core/sim_time.h"

#include <gtest/gtest.h>

namespace schedmate {
namespace {

TEST(SimTimeTest, ArithmeticIsExactInMicroseconds) {
  SimTime t = SimTime::FromSeconds(10);
  Duration d = Duration::Millis(1500);
  EXPECT_EQ((t + d).micros(), 11'500'000);
  EXPECT_EQ((t + d) - t, d);
  EXPECT_EQ(Duration::FromSecondsF(0.1) * 3, Duration::Micros(300'000));
  EXPECT_LT(t, t + Duration::Micros(1));
}

TEST(SimTimeTest, SecondsTruncateTowardZero) {
  EXPECT_EQ(Duration::Micros(1'999'999).seconds(), 1);
  EXPECT_EQ(Duration::Micros(-1'500'000).seconds(), -1);
}

TEST(SimTimeTest, FormatsForPeople) {
  EXPECT_EQ(FormatDuration(Duration::Millis(45200)), "45.2s");
  EXPECT_EQ(FormatDuration(Duration::Seconds(3723)), "1h02m");
  EXPECT_EQ(FormatDuration(Duration::Hours(52)), "2d04h");
  EXPECT_EQ(FormatDuration(Duration::Infinite()), "inf");
}

}  // namespace
}  // namespace schedmate
