#pragma once
// GpuAmount: GPUs in fixed point, 1 GPU == 1000 milli-GPUs, so fractional shares add exactly
// (0.5 + 0.25 + 0.25 == 1).

#include <compare>
#include <cstdint>
#include <string>

namespace schedmate {

class GpuAmount {
 public:
  static constexpr int64_t kUnit = 1000;
  constexpr GpuAmount() = default;
  static constexpr GpuAmount Whole(int64_t gpus) { return GpuAmount(gpus * kUnit); }
  static constexpr GpuAmount Milli(int64_t milli) { return GpuAmount(milli); }
  // Rounds to the nearest milli-GPU.
  static GpuAmount FromDouble(double gpus);

  constexpr int64_t milli() const { return milli_; }
  // Whole GPUs needed to hold this amount (a 0.5-GPU share needs 1 device).
  constexpr int64_t ceil_whole() const { return (milli_ + kUnit - 1) / kUnit; }
  constexpr bool is_whole() const { return milli_ % kUnit == 0; }
  constexpr double as_double() const { return static_cast<double>(milli_) / kUnit; }

  constexpr auto operator<=>(const GpuAmount&) const = default;
  constexpr GpuAmount operator+(GpuAmount o) const { return GpuAmount(milli_ + o.milli_); }
  constexpr GpuAmount operator-(GpuAmount o) const { return GpuAmount(milli_ - o.milli_); }
  constexpr GpuAmount& operator+=(GpuAmount o) {
    milli_ += o.milli_;
    return *this;
  }
  constexpr GpuAmount& operator-=(GpuAmount o) {
    milli_ -= o.milli_;
    return *this;
  }
  constexpr GpuAmount operator*(int64_t k) const { return GpuAmount(milli_ * k); }

  // "4", "0.5".
  std::string ToString() const;

 private:
  constexpr explicit GpuAmount(int64_t milli) : milli_(milli) {}
  int64_t milli_ = 0;
};

}  // namespace schedmate
