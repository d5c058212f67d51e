#pragma once
// DensityGrid: a kernel density of log2 run times on a fixed grid, and the point estimate read
// from it (HistoryEstimator's PointEstimate::kDensityWindow).
//
// The grid spans log2 seconds kMinLog2 .. kMaxLog2 (1/4 s .. about 1 year) in steps of kStep:
// below 1 s so that a kernel of a 1 s run (the shortest a run counts as) is whole. Each run
// adds a Gaussian kernel of standard deviation `bandwidth` log2 units centred on its log2 run
// time, truncated at 4 standard deviations (a run off the grid lands on its edge cell). The
// kernel's values come from a table (KernelTable) indexed by the run's offset from its nearest
// cell in 1/kSubSteps of a step: a run is placed within kStep / (2 kSubSteps) log2 units, well
// under the kernel's width.
//
// WindowPoint: the cell c maximising mass(|g - c| <= 1) - over_penalty * mass(g < c - 1), the
// centre of the densest factor-2 window with estimates more than 2x too high costed extra; ties
// go to the smallest c. Read from a smoothed density rather than the raw runs, the point does
// not jump to whichever single run happens to bound a window.
//
// Mass is held in floats (a grid is copied and mixed on every estimate) and summed in doubles in
// a fixed order: same input, same output.
// Thread-safety: a KernelTable is immutable once built; a DensityGrid is a plain value.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace schedmate::advisor {

class KernelTable {
 public:
  static constexpr int kSubSteps = 32;
  explicit KernelTable(double bandwidth);
  double bandwidth() const { return bandwidth_; }
  static constexpr int kLanes = 8;        // rows are padded with zeros to a multiple of this
  int radius() const { return radius_; }  // cells each side of the centre cell
  int width() const { return static_cast<int>(width_); }  // 2 radius + 1 rounded up to kLanes
  // The kernel's values at cells -radius..radius for a run `sub` sub-steps (-kSubSteps/2 ..
  // kSubSteps/2) above its centre cell, then zeros up to width().
  const float* Row(int sub) const {
    return &values_[static_cast<size_t>(sub + kSubSteps / 2) * width_];
  }
  // The sum of Row(sub)'s values.
  double RowSum(int sub) const { return row_sums_[static_cast<size_t>(sub + kSubSteps / 2)]; }

 private:
  double bandwidth_;
  int radius_;
  size_t width_;
  std::vector<float> values_;
  std::vector<double> row_sums_;
};

class DensityGrid {
 public:
  static constexpr double kStep = 0.25;
  static constexpr double kMinLog2 = -2.0;
  static constexpr double kMaxLog2 = 25.0;
  static constexpr int kCells = static_cast<int>((kMaxLog2 - kMinLog2) / kStep) + 1;

  // Where a run lands: its nearest cell and its offset from it in sub-steps.
  struct Position {
    int16_t cell = 0;
    int8_t sub = 0;
  };
  static Position Locate(double log2_s);
  // Adds a kernel of height `weight` (its value at its centre) at log2_s.
  void Add(double log2_s, double weight, const KernelTable& kernel) {
    Add(Locate(log2_s), weight, kernel);
  }
  void Add(Position at, double weight, const KernelTable& kernel) {
    if (!(weight > 0)) return;
    const int r = kernel.radius();
    const int lo = at.cell - r < 0 ? 0 : at.cell - r;
    const int hi = at.cell + r > kCells - 1 ? kCells - 1 : at.cell + r;
    const float* __restrict row = kernel.Row(at.sub) + (lo - at.cell + r);
    float* __restrict out = &mass_[static_cast<size_t>(lo)];
    const float w = static_cast<float>(weight);
    if (lo == at.cell - r && hi == at.cell + r) {
      // The kernel lies inside the grid: whole blocks of kLanes, the row's padding zeros falling
      // on the next cells or on the slack (fewer than kLanes cells past hi).
      using Lanes = float __attribute__((vector_size(4 * KernelTable::kLanes)));
      for (int b = 0; b < kernel.width(); b += KernelTable::kLanes) {
        Lanes o, k;
        std::memcpy(&o, out + b, sizeof o);
        std::memcpy(&k, row + b, sizeof k);
        o += w * k;
        std::memcpy(out + b, &o, sizeof o);
      }
    } else {
      for (int k = 0; k <= hi - lo; ++k) out[k] += w * row[k];
    }
    if (lo < lo_) lo_ = lo;
    if (hi > hi_) hi_ = hi;
  }
  // The mass Add(at, 1, kernel) adds: the kernel's values on the grid (less at its edges).
  static double KernelMass(Position at, const KernelTable& kernel) {
    const int r = kernel.radius();
    if (at.cell - r >= 0 && at.cell + r <= kCells - 1) return kernel.RowSum(at.sub);
    return EdgeKernelMass(at, kernel);
  }
  double total() const;
  bool empty() const { return total() <= 0; }
  // log2 seconds of the window point (see above); kMinLog2 for an empty grid.
  double WindowPoint(double over_penalty) const;
  static double CellLog2(int cell) { return kMinLog2 + cell * kStep; }

 private:
  static double EdgeKernelMass(Position at, const KernelTable& kernel);
  // Cells lo_..hi_ may hold mass; the others are 0 (lo_ > hi_: none). The kSlack cells past
  // the grid only ever receive the zeros of a padded kernel row.
  static constexpr int kSlack = KernelTable::kLanes;
  std::array<float, kCells + kSlack> mass_{};
  int lo_ = kCells, hi_ = -1;
};

}  // namespace schedmate::advisor
