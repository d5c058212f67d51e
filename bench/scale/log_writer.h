#pragma once
// LogWriter: grows the running jobs' log files at a fixed total rate from a background thread,
// for the scale benchmark. Each log is written in one of three styles the tracker reads:
//   0  plain progress lines          "step 120/5000 loss 2.3100 lr 3.0e-04 step_time 0.412s"
//   1  timestamped key=value logging "2026-11-27 12:00:01,123 INFO [train.py:245] epoch=3
//                                     step=450/5000 loss=0.9120 lr=1.0e-04 samples_per_sec=512.3"
//   2  the mixed HF/Lightning/Keras/mmdet-like styles of bench/tracker's StyledLogGenerator
// Bytes go to the logs round-robin in whole lines (about 512 bytes per write, appended with
// O_APPEND), so every live log grows at rate / logs. All text is generated from the seed.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace schedmate::bench {

class LogWriter {
 public:
  LogWriter(double bytes_per_second, uint64_t seed);
  ~LogWriter();

  // Creates the log with about `initial_bytes` of history (synchronously) and starts growing it.
  void Add(const std::string& id, const std::string& path, int style, int64_t initial_bytes);
  // Stops growing the log (the file stays).
  void Remove(const std::string& id);

  void Start();
  void Stop();
  int64_t BytesWritten() const { return written_.load(); }

 private:
  struct Source;
  void Loop();
  static void Append(Source& s, size_t bytes, std::string& out);

  double rate_;
  uint64_t seed_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<Source>> sources_;
  std::string next_;  // round-robin position: the id after the last one written
  std::atomic<int64_t> written_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace schedmate::bench
