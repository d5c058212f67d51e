#pragma once
// Sleeper: how the retry wrapper waits between attempts. RealSleeper blocks the thread; tests pass
// a fake that records the requested pauses and returns at once.

#include <chrono>
#include <thread>

#include "core/sim_time.h"

namespace schedmate::llm {

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void Sleep(Duration d) = 0;
};

class RealSleeper final : public Sleeper {
 public:
  void Sleep(Duration d) override {
    if (d > Duration::Zero()) std::this_thread::sleep_for(std::chrono::microseconds(d.micros()));
  }
};

}  // namespace schedmate::llm
