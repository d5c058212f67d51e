#include "core/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace schedmate {
namespace {
int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total > 0 ? total : 1),
      enabled_(enabled),
      start_us_(NowUs()) {}

ProgressBar::~ProgressBar() {
  if (enabled_ && !finished_ && last_draw_us_ != 0) std::fputc('\n', stderr);
}

bool ProgressBar::StderrIsInteractive() {
  return isatty(STDERR_FILENO) && std::getenv("SCHEDMATE_NO_PROGRESS") == nullptr;
}

void ProgressBar::Update(int64_t done) {
  if (!enabled_ || finished_) return;
  int64_t now = NowUs();
  if (now - last_draw_us_ < 100'000) return;
  last_draw_us_ = now;
  Draw(done);
}

void ProgressBar::Finish() {
  if (!enabled_ || finished_) return;
  Draw(total_);
  std::fputc('\n', stderr);
  finished_ = true;
}

void ProgressBar::Draw(int64_t done) {
  constexpr int kWidth = 30;
  double frac = static_cast<double>(done) / static_cast<double>(total_);
  if (frac > 1) frac = 1;
  int filled = static_cast<int>(frac * kWidth);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '.';
  bar[kWidth] = 0;
  double elapsed = static_cast<double>(NowUs() - start_us_) / 1e6;
  std::fprintf(stderr, "\r%s [%s] %5.1f%% %.1fs", label_.c_str(), bar, frac * 100.0, elapsed);
  std::fflush(stderr);
}

}  // namespace schedmate
