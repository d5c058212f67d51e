#include "core/rng.h"

#include <gtest/gtest.h>

namespace schedmate {
namespace {

TEST(RngTest, SameSeedSameSequence) {
  Rng a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= (x != c.Next());
  }
  EXPECT_TRUE(differs);
}

TEST(RngTest, UniformInUnitIntervalWithSaneMean) {
  Rng r(1);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    double u = r.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
  double e = 0;
  for (int i = 0; i < 100000; ++i) e += r.Exponential(10.0);
  EXPECT_NEAR(e / 100000, 10.0, 0.3);
}

}  // namespace
}  // namespace schedmate
