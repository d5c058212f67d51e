#pragma once
// ProgressBar: a one-line progress display on stderr for long work. Draws only when stderr is a
// terminal (or when forced), at most ~10 times a second, and never on stdout, so JSON output
// stays clean.

#include <cstdint>
#include <string>

namespace schedmate {

class ProgressBar {
 public:
  // `total` units of work; `label` shown before the bar. `enabled` false: draws nothing.
  ProgressBar(std::string label, int64_t total, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Sets the amount done so far; cheap when called often.
  void Update(int64_t done);
  // Draws 100% and ends the line.
  void Finish();

  // True when stderr is a terminal and SCHEDMATE_NO_PROGRESS is unset.
  static bool StderrIsInteractive();

 private:
  void Draw(int64_t done);
  std::string label_;
  int64_t total_;
  bool enabled_;
  bool finished_ = false;
  int64_t last_draw_us_ = 0;
  int64_t start_us_ = 0;
};

}  // namespace schedmate
