#include "advisor/density_grid.h"

#include <algorithm>
#include <cmath>

namespace schedmate::advisor {

KernelTable::KernelTable(double bandwidth)
    : bandwidth_(bandwidth > 0 ? bandwidth : 0.45),
      radius_(static_cast<int>(3 * bandwidth_ / DensityGrid::kStep) + 1),
      width_(static_cast<size_t>((2 * radius_ + 1 + kLanes - 1) / kLanes * kLanes)) {
  values_.assign(static_cast<size_t>(kSubSteps + 1) * width_, 0.0f);
  row_sums_.assign(static_cast<size_t>(kSubSteps + 1), 0.0);
  const double inv = 1.0 / (2 * bandwidth_ * bandwidth_);
  for (int sub = -kSubSteps / 2; sub <= kSubSteps / 2; ++sub) {
    const double offset = DensityGrid::kStep * sub / kSubSteps;  // the run, above its cell
    float* row = &values_[static_cast<size_t>(sub + kSubSteps / 2) * width_];
    for (int k = -radius_; k <= radius_; ++k) {
      const double x = k * DensityGrid::kStep - offset;
      row[k + radius_] = static_cast<float>(std::exp(-x * x * inv));
      row_sums_[static_cast<size_t>(sub + kSubSteps / 2)] += row[k + radius_];
    }
  }
}

DensityGrid::Position DensityGrid::Locate(double log2_s) {
  const double x = (std::clamp(log2_s, kMinLog2, kMaxLog2) - kMinLog2) / kStep;
  const int centre = static_cast<int>(std::lround(x));
  const int sub = static_cast<int>(std::lround((x - centre) * KernelTable::kSubSteps));
  return {static_cast<int16_t>(centre),
          static_cast<int8_t>(
              std::clamp(sub, -KernelTable::kSubSteps / 2, KernelTable::kSubSteps / 2))};
}

double DensityGrid::total() const {
  double s = 0;
  for (int g = lo_; g <= hi_; ++g) s += mass_[static_cast<size_t>(g)];
  return s;
}

double DensityGrid::EdgeKernelMass(Position at, const KernelTable& kernel) {
  const int r = kernel.radius();
  const float* row = kernel.Row(at.sub);
  double m = 0;
  for (int k = -r; k <= r; ++k) {
    if (at.cell + k >= 0 && at.cell + k < kCells) m += row[k + r];
  }
  return m;
}

double DensityGrid::WindowPoint(double over_penalty) const {
  // Only cells lo_..hi_ can win: below lo_ a window holds no mass (score 0 < the score at lo_,
  // whose window holds mass with none below it), and past hi_ each step right loses window mass
  // and gains mass below. prefix[i]: mass of cells lo_..lo_+i-1.
  if (lo_ > hi_) return kMinLog2;
  std::array<double, kCells + 1> prefix;
  const int n = hi_ - lo_ + 1;
  prefix[0] = 0;
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + mass_[static_cast<size_t>(lo_ + i)];
  if (!(prefix[n] > 0)) return kMinLog2;
  const int half = static_cast<int>(std::lround(1.0 / kStep));  // cells in one factor of 2
  double best_score = -1e300;
  int best = lo_;
  for (int i = 0; i < n; ++i) {
    const int lo = std::max(0, i - half), hi = std::min(n, i + half + 1);
    const double score = (prefix[hi] - prefix[lo]) - over_penalty * prefix[lo];
    if (score > best_score + 1e-12) {
      best_score = score;
      best = lo_ + i;
    }
  }
  return CellLog2(best);
}

}  // namespace schedmate::advisor
