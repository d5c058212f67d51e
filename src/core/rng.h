#pragma once
// Rng: the only source of randomness. Seeded explicitly, never from time; the seed goes into
// results. splitmix64-seeded xoshiro256**: fast, and the same sequence on every platform
// (std:: distributions are not portable, so the helpers below are written out).

#include <cmath>
#include <cstdint>

namespace schedmate {

class Rng {
 public:
  explicit Rng(uint64_t seed) : seed_(seed) {
    uint64_t x = seed;
    for (auto& s : s_) s = SplitMix(x);
  }
  uint64_t seed() const { return seed_; }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>(Uniform() * static_cast<double>(n)); }
  // Exponential with the given mean.
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace schedmate
