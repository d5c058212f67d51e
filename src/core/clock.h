#pragma once
// Clock: every wall-clock read goes through this, so tests can move time by hand.

#include <chrono>

#include "core/sim_time.h"

namespace schedmate {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds since the Unix epoch.
  virtual SimTime Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  SimTime Now() const override {
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    return SimTime::FromMicros(us);
  }
};

// Moves only when told. Not thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(SimTime start = SimTime::FromSeconds(1'000'000)) : now_(start) {}
  SimTime Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }
  void Set(SimTime t) { now_ = t; }

 private:
  SimTime now_;
};

// Monotonic stopwatch for measuring our own wall time (e.g. "wall_s" in results).
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double ElapsedSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace schedmate
