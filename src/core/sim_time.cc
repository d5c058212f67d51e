#include "core/sim_time.h"

#include <cmath>
#include <cstdio>

namespace schedmate {

Duration Duration::FromSecondsF(double s) {
  return Duration(static_cast<int64_t>(std::llround(s * 1e6)));
}
SimTime SimTime::FromSecondsF(double s) {
  return SimTime(static_cast<int64_t>(std::llround(s * 1e6)));
}

std::string FormatDuration(Duration d) {
  if (d.is_infinite()) return "inf";
  char buf[64];
  int64_t us = d.micros();
  const char* sign = us < 0 ? "-" : "";
  if (us < 0) us = -us;
  int64_t s = us / 1'000'000;
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%s%.1fs", sign, static_cast<double>(us) / 1e6);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%s%lldm%02llds", sign, static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%s%lldh%02lldm", sign, static_cast<long long>(s / 3600),
                  static_cast<long long>((s % 3600) / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%s%lldd%02lldh", sign, static_cast<long long>(s / 86400),
                  static_cast<long long>((s % 86400) / 3600));
  }
  return buf;
}

}  // namespace schedmate
