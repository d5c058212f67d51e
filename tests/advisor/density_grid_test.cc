#include "advisor/density_grid.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <utility>

namespace schedmate::advisor {
namespace {

constexpr double kStep = DensityGrid::kStep;

// The window point (log2 s) of runs given as (log2 s, weight), kernel 0.45.
double PointOf(std::initializer_list<std::pair<double, double>> runs, double over_penalty) {
  static const KernelTable kernel(0.45);
  DensityGrid g;
  for (const auto& [log2_s, weight] : runs) g.Add(log2_s, weight, kernel);
  return g.WindowPoint(over_penalty);
}

TEST(DensityGridTest, LocateRoundsToTheNearestCellAndClampsOffTheGrid) {
  const int c10 = static_cast<int>((10.0 - DensityGrid::kMinLog2) / kStep);
  DensityGrid::Position p = DensityGrid::Locate(10.0);
  EXPECT_EQ(p.cell, c10);
  EXPECT_DOUBLE_EQ(DensityGrid::CellLog2(c10), 10.0);
  EXPECT_EQ(p.sub, 0);
  p = DensityGrid::Locate(10.0 + kStep / 4);  // a quarter step above the cell
  EXPECT_EQ(p.cell, c10);
  EXPECT_EQ(p.sub, KernelTable::kSubSteps / 4);
  EXPECT_EQ(DensityGrid::Locate(-30).cell, 0);
  EXPECT_EQ(DensityGrid::Locate(1e9).cell, DensityGrid::kCells - 1);
}

TEST(DensityGridTest, KernelRowsAreGaussianAndPaddedWithZeros) {
  KernelTable k(0.45);
  EXPECT_EQ(k.radius(), static_cast<int>(3 * 0.45 / kStep) + 1);
  EXPECT_EQ(k.width() % KernelTable::kLanes, 0);
  EXPECT_GE(k.width(), 2 * k.radius() + 1);
  const float* centred = k.Row(0);
  EXPECT_FLOAT_EQ(centred[k.radius()], 1.0f);
  EXPECT_FLOAT_EQ(centred[k.radius() + 1], centred[k.radius() - 1]);  // symmetric
  EXPECT_NEAR(centred[k.radius() + 2], std::exp(-(2 * kStep) * (2 * kStep) / (2 * 0.45 * 0.45)),
              1e-6);
  for (int i = 2 * k.radius() + 1; i < k.width(); ++i) EXPECT_EQ(centred[i], 0.0f);
  double sum = 0;
  for (int i = 0; i < k.width(); ++i) sum += centred[i];
  EXPECT_NEAR(k.RowSum(0), sum, 1e-6);
}

TEST(DensityGridTest, OneRunPointsAtItsOwnCell) {
  KernelTable k(0.45);
  DensityGrid g;
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.WindowPoint(0), DensityGrid::kMinLog2);
  g.Add(std::log2(600.0), 1.0, k);
  EXPECT_FALSE(g.empty());
  EXPECT_NEAR(g.total(), DensityGrid::KernelMass(DensityGrid::Locate(std::log2(600.0)), k), 1e-5);
  // Without a penalty the symmetric kernel's window is centred on the run's nearest cell.
  EXPECT_NEAR(g.WindowPoint(0), std::log2(600.0), kStep / 2);
}

TEST(DensityGridTest, HeavierModeWinsAndPenaltyPrefersTheLowerOfEqualModes) {
  // Three runs of 64 s against one of 4.5 h, and the other way round.
  EXPECT_NEAR(PointOf({{6.0, 1.0}, {6.0, 1.0}, {6.0, 1.0}, {14.0, 1.0}}, 0.5), 6.0, kStep);
  EXPECT_NEAR(PointOf({{6.0, 1.0}, {14.0, 3.0}}, 0.5), 14.0, kStep);
  // Equal modes: without a penalty the first (lower) window wins the tie; with one, the upper
  // window is charged for the mass below it, so the lower one wins clearly.
  EXPECT_NEAR(PointOf({{6.0, 1.0}, {14.0, 1.0}}, 0), 6.0, kStep);
  EXPECT_NEAR(PointOf({{6.0, 1.0}, {14.0, 1.0}}, 0.5), 6.0, kStep);
}

TEST(DensityGridTest, TheWindowIsOneFactorOfTwoEachSide) {
  // Runs at 2^8.5 and 2^9.5 fit one window (centre 2^9) and outweigh a heavier lone run
  // elsewhere; 2^7 and 2^11 cannot share a window, so the lone run wins.
  EXPECT_NEAR(PointOf({{8.5, 1.0}, {9.5, 1.0}, {20.0, 1.5}}, 0), 9.0, kStep);
  EXPECT_NEAR(PointOf({{7.0, 1.0}, {11.0, 1.0}, {20.0, 1.5}}, 0), 20.0, kStep);
}

TEST(DensityGridTest, KernelsAtTheEdgesKeepOnlyTheirPartOnTheGrid) {
  KernelTable k(0.45);
  // A 1 s run's kernel is whole (the grid reaches below 1 s); one at the bottom edge is not.
  EXPECT_DOUBLE_EQ(DensityGrid::KernelMass(DensityGrid::Locate(0), k), k.RowSum(0));
  const DensityGrid::Position low = DensityGrid::Locate(DensityGrid::kMinLog2);
  EXPECT_LT(DensityGrid::KernelMass(low, k), k.RowSum(0));
  EXPECT_GT(DensityGrid::KernelMass(low, k), 0.5 * k.RowSum(0));
  DensityGrid g;
  g.Add(DensityGrid::kMinLog2, 1.0, k);
  EXPECT_NEAR(g.total(), DensityGrid::KernelMass(low, k), 1e-5);
  DensityGrid top;
  top.Add(DensityGrid::kMaxLog2 + 5, 1.0, k);  // off the grid: on its last cell
  EXPECT_NEAR(top.total(), DensityGrid::KernelMass(DensityGrid::Locate(99), k), 1e-5);
  EXPECT_GE(top.WindowPoint(0.5), DensityGrid::kMaxLog2 - 1);  // its window holds the run
}

TEST(DensityGridTest, NonPositiveWeightsAddNothing) {
  KernelTable k(0.45);
  DensityGrid g;
  g.Add(5.0, 0.0, k);
  g.Add(5.0, -1.0, k);
  g.Add(5.0, std::nan(""), k);
  EXPECT_TRUE(g.empty());
}

}  // namespace
}  // namespace schedmate::advisor
