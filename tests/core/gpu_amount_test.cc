#include "core/gpu_amount.h"

#include <gtest/gtest.h>

namespace schedmate {
namespace {

TEST(GpuAmountTest, FractionsAddExactly) {
  GpuAmount a =
      GpuAmount::FromDouble(0.5) + GpuAmount::FromDouble(0.25) + GpuAmount::FromDouble(0.25);
  EXPECT_EQ(a, GpuAmount::Whole(1));
  EXPECT_TRUE(a.is_whole());
  EXPECT_EQ(GpuAmount::FromDouble(0.1) * 10, GpuAmount::Whole(1));
}

TEST(GpuAmountTest, CeilWholeCountsDevices) {
  EXPECT_EQ(GpuAmount::Milli(500).ceil_whole(), 1);
  EXPECT_EQ(GpuAmount::Whole(8).ceil_whole(), 8);
  EXPECT_EQ(GpuAmount::Milli(8001).ceil_whole(), 9);
  EXPECT_EQ(GpuAmount::Milli(0).ceil_whole(), 0);
}

TEST(GpuAmountTest, PrintsCompactly) {
  EXPECT_EQ(GpuAmount::Whole(4).ToString(), "4");
  EXPECT_EQ(GpuAmount::Milli(500).ToString(), "0.5");
}

}  // namespace
}  // namespace schedmate
