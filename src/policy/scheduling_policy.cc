#include "policy/scheduling_policy.h"

#include <algorithm>
#include <cmath>

namespace schedmate::policy {

Duration JobView::RemainingAt(SimTime now) const {
  if (status->state != RunState::kRunning || now <= status->updated) return status->remaining;
  const int64_t dt = (now - status->updated).micros();
  const int64_t done =
      status->rate == 1.0
          ? dt
          : static_cast<int64_t>(std::llround(status->rate * static_cast<double>(dt)));
  return std::max(Duration::Zero(), status->remaining - Duration::Micros(done));
}

std::optional<Duration> JobView::EtaAt(SimTime now) const {
  if (!(status->eta_noise > 0)) return std::nullopt;
  const Duration left = RemainingAt(now);
  if (left > status->eta_from_remaining) return std::nullopt;
  return Duration::Micros(std::llround(static_cast<double>(left.micros()) * status->eta_noise));
}

int64_t JobView::AttainedGpuSecondsAt(SimTime now) const {
  int64_t us = status->attained_gpu_us;
  if (status->state == RunState::kRunning && now > status->updated) {
    us += static_cast<int64_t>(status->gpus) * (now - status->updated).micros();
  }
  return us / 1'000'000;
}

}  // namespace schedmate::policy
