#include "log_writer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <functional>

#include "core/rng.h"
#include "styled_log_generator.h"

namespace schedmate::bench {

namespace {
constexpr size_t kChunk = 512;

void AppendToFile(const std::string& path, const std::string& data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;  // the bench's temp dir went away: nothing to grow
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}
}  // namespace

struct LogWriter::Source {
  Source(std::string p, int st, uint64_t seed)
      : path(std::move(p)), style(st), rng(seed), styled(seed) {
    total = 1000 * static_cast<int64_t>(1 + rng.Below(50));
    loss = 2.0 + rng.Uniform() * 8.0;
    step_time = 0.1 + rng.Uniform() * 1.5;
  }
  std::string path;
  int style;
  Rng rng;
  tracker::bench::StyledLogGenerator styled;
  int64_t step = 0, total = 0, clock_s = 1795300000;
  double loss = 0, step_time = 0;
};

LogWriter::LogWriter(double bytes_per_second, uint64_t seed)
    : rate_(bytes_per_second), seed_(seed) {}

LogWriter::~LogWriter() { Stop(); }

void LogWriter::Append(Source& s, size_t bytes, std::string& out) {
  if (s.style == 2) return s.styled.Append(bytes, out);
  size_t start = out.size();
  while (out.size() - start < bytes) {
    ++s.step;
    if (s.step > s.total) s.step = 1;  // a new run of the same job: counters start again
    s.loss = std::max(0.05, s.loss * (0.9990 + 0.0015 * s.rng.Uniform()));
    double lr = 3e-4 * std::min(1.0, static_cast<double>(s.step) / 200.0);
    double st = s.step_time * (0.9 + 0.2 * s.rng.Uniform());
    s.clock_s += static_cast<int64_t>(std::ceil(st));
    if (s.style == 0) {
      out += fmt::format("step {}/{} loss {:.4f} lr {:.1e} step_time {:.3f}s\n", s.step, s.total,
                         s.loss, lr, st);
    } else {
      time_t t = static_cast<time_t>(s.clock_s);
      std::tm tm{};
      gmtime_r(&t, &tm);
      out += fmt::format(
          "{:04}-{:02}-{:02} {:02}:{:02}:{:02},{:03} INFO [train.py:245] epoch={} step={}/{} "
          "loss={:.4f} lr={:.1e} samples_per_sec={:.1f}\n",
          tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
          s.rng.Below(1000), 1 + s.step * 10 / s.total, s.step, s.total, s.loss, lr, 256.0 / st);
    }
    if (s.step % 500 == 0)
      out += fmt::format("Saving model checkpoint to ckpt/checkpoint-{}\n", s.step);
  }
}

void LogWriter::Add(const std::string& id, const std::string& path, int style,
                    int64_t initial_bytes) {
  auto src = std::make_unique<Source>(path, style, seed_ ^ std::hash<std::string>{}(id));
  std::string text = "Loading dataset shards...\nModel parameters: 6.7B, world size 8\n";
  Append(*src, static_cast<size_t>(std::max<int64_t>(0, initial_bytes)), text);
  AppendToFile(path, text);
  std::lock_guard lock(mu_);
  sources_[id] = std::move(src);
}

void LogWriter::Remove(const std::string& id) {
  std::lock_guard lock(mu_);
  sources_.erase(id);
}

void LogWriter::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void LogWriter::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void LogWriter::Loop() {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  int64_t base = written_.load();
  std::string chunk;
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    int64_t due = static_cast<int64_t>(rate_ * elapsed) - (written_.load() - base);
    std::lock_guard lock(mu_);
    while (due > 0 && !sources_.empty() && !stop_) {
      auto it = sources_.lower_bound(next_);
      if (it == sources_.end()) it = sources_.begin();
      chunk.clear();
      Append(*it->second, kChunk, chunk);
      AppendToFile(it->second->path, chunk);
      written_ += static_cast<int64_t>(chunk.size());
      due -= static_cast<int64_t>(chunk.size());
      auto after = std::next(it);
      next_ = after == sources_.end() ? std::string() : after->first;
    }
  }
}

}  // namespace schedmate::bench
