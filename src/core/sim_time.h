#pragma once
// Strong time types: SimTime is a point in (simulated or real) time, Duration a span, both int64
// microseconds. Never double seconds: equal inputs must give equal outputs to the byte.

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace schedmate {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration Micros(int64_t us) { return Duration(us); }
  static constexpr Duration Millis(int64_t ms) { return Duration(ms * 1000); }
  static constexpr Duration Seconds(int64_t s) { return Duration(s * 1'000'000); }
  static constexpr Duration Minutes(int64_t m) { return Seconds(m * 60); }
  static constexpr Duration Hours(int64_t h) { return Seconds(h * 3600); }
  // Rounds to the nearest microsecond.
  static Duration FromSecondsF(double s);
  static constexpr Duration Zero() { return Duration(0); }
  static constexpr Duration Infinite() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t micros() const { return us_; }
  // Whole seconds, truncated toward zero.
  constexpr int64_t seconds() const { return us_ / 1'000'000; }
  constexpr double seconds_f() const { return static_cast<double>(us_) / 1e6; }
  constexpr bool is_infinite() const { return us_ == std::numeric_limits<int64_t>::max(); }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration(us_ + o.us_); }
  constexpr Duration operator-(Duration o) const { return Duration(us_ - o.us_); }
  constexpr Duration& operator+=(Duration o) {
    us_ += o.us_;
    return *this;
  }
  constexpr Duration& operator-=(Duration o) {
    us_ -= o.us_;
    return *this;
  }
  constexpr Duration operator*(int64_t k) const { return Duration(us_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(us_ / k); }
  constexpr Duration operator-() const { return Duration(-us_); }

 private:
  constexpr explicit Duration(int64_t us) : us_(us) {}
  int64_t us_ = 0;
};

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime FromMicros(int64_t us) { return SimTime(us); }
  static constexpr SimTime FromSeconds(int64_t s) { return SimTime(s * 1'000'000); }
  static SimTime FromSecondsF(double s);
  static constexpr SimTime Zero() { return SimTime(0); }
  static constexpr SimTime Max() { return SimTime(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t micros() const { return us_; }
  constexpr int64_t seconds() const { return us_ / 1'000'000; }
  constexpr double seconds_f() const { return static_cast<double>(us_) / 1e6; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(Duration d) const { return SimTime(us_ + d.micros()); }
  constexpr SimTime operator-(Duration d) const { return SimTime(us_ - d.micros()); }
  constexpr Duration operator-(SimTime o) const { return Duration::Micros(us_ - o.us_); }
  constexpr SimTime& operator+=(Duration d) {
    us_ += d.micros();
    return *this;
  }

 private:
  constexpr explicit SimTime(int64_t us) : us_(us) {}
  int64_t us_ = 0;
};

// "1h02m03s", "45.2s", "3d04h": for people, not for parsing.
std::string FormatDuration(Duration d);

}  // namespace schedmate
