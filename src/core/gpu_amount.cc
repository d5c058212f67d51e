#include "core/gpu_amount.h"

#include <cmath>
#include <cstdio>

namespace schedmate {

GpuAmount GpuAmount::FromDouble(double gpus) {
  return GpuAmount(static_cast<int64_t>(std::llround(gpus * kUnit)));
}

std::string GpuAmount::ToString() const {
  if (is_whole()) return std::to_string(milli_ / kUnit);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", as_double());
  return buf;
}

}  // namespace schedmate
