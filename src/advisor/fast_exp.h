#pragma once
// ExpBlock: exp() of four doubles at once, in portable GCC/Clang vector code (SSE2 pairs on a
// plain x86-64 build, one AVX register where the caller is compiled for it), for the
// DurationDistribution's Newton search, which needs the logistic mixture's CDF only to a stated
// error (the result stays defined by the exact std::exp evaluation; see Quantile()).
//
// Method: y is clamped to [-700, 700] (the logistic terms there are 0 or their weight to within
// e^-700); k = round(y / ln 2) by the 1.5 * 2^52 shift; r = y - k ln 2 with ln 2 in two parts
// (Cody-Waite: k ln2_hi is exact for |k| <= 1010), |r| <= 0.35; e^r by its Taylor polynomial of
// degree 12 (truncation below 2e-16 relative), times 2^k built in the exponent bits.
// Relative error below 1e-15 on [-700, 700] (tests/advisor: a sweep of 2 million points checks
// 2e-15); callers budget kExpBlockRelError, 100x that.
//
// Deterministic: the same input gives the same output on one build; builds with and without
// fused multiply-add may differ in the last bits (within the bound).

#include <cstdint>
#include <cstring>

namespace schedmate::advisor {

using Double4 = double __attribute__((vector_size(32)));
using Int4 = int64_t __attribute__((vector_size(32)));

inline constexpr double kExpBlockRelError = 1e-13;

// *v = exp(*v), elementwise (through a pointer: a vector argument by value would change the
// ABI between the AVX and the plain clones of a caller).
__attribute__((always_inline)) inline void ExpBlock(Double4* v) {
  Double4 y = *v;
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  y = y < -700.0 ? Double4{} - 700.0 : y;
  y = y > 700.0 ? Double4{} + 700.0 : y;
  const Double4 u = y * kLog2e + kShift;  // k in the low mantissa bits
  const Double4 k = u - kShift;
  const Double4 r = (y - k * kLn2Hi) - k * kLn2Lo;
  Double4 p = r * (1.0 / 479001600) + 1.0 / 39916800;
  p = p * r + 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  Int4 ub;
  std::memcpy(&ub, &u, sizeof ub);
  constexpr double kShiftValue = kShift;
  int64_t shift_bits;
  std::memcpy(&shift_bits, &kShiftValue, sizeof shift_bits);
  const Int4 bits = (ub - shift_bits + 1023) << 52;  // 2^k: k + 1023 in 13..2033
  Double4 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  *v = p * scale;
}

}  // namespace schedmate::advisor
