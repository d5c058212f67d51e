#pragma once
// LogRankScanner: how many ranks (processes) a training job says it runs, from its log, to tell
// a job that holds N GPUs but runs one process (service/anomalies.h: over_requested).
//
// It reads what launchers and frameworks print: a declared world size ("world_size=8",
// "WORLD_SIZE: 8", accelerate's "Num processes: 8", Lightning's "MEMBER: 1/8", "rank 3 of 8",
// "rank 0/8") and the rank tags torchrun puts before each rank's lines ("[rank3]:"). The last
// declared size wins (a relaunch with another size says so again); without one, two or more
// distinct rank tags count as that many ranks. A single tag proves nothing (others may be quiet).

#include <optional>
#include <set>
#include <string_view>

namespace schedmate::service {

class LogRankScanner {
 public:
  void AddLine(std::string_view line);
  // The declared world size, else the distinct rank tags when there are at least two.
  std::optional<int> Ranks() const;
  std::optional<int> declared() const { return declared_; }
  int tagged() const { return static_cast<int>(tags_.size()); }

 private:
  std::optional<int> declared_;
  std::set<int> tags_;  // at most kMaxTags
};

}  // namespace schedmate::service
