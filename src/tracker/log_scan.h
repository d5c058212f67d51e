#pragma once
// ScanLog: runs the tracker over a whole log file (read with pread in bounded chunks), or, for the
// latest state of a large file, over a growing tail window (reverse scan) that stops as soon as
// the window holds a training record with enough look-ahead context. Line numbers are absolute in
// both modes. A file truncated or rewritten while it is read is read again, or, when records were
// already streamed, reported as kDataLoss naming the path; never a crash.

#include <functional>
#include <optional>
#include <string>

#include "core/result.h"
#include "tracker/log_reader.h"
#include "tracker/metric_tracker.h"
#include "tracker/signals.h"

namespace schedmate::tracker {

struct ScanOptions {
  bool allow_reverse = true;                 // tail window for files above reverse_min_bytes
  size_t reverse_min_bytes = 8u << 20;       // smaller files are scanned whole
  size_t reverse_initial_window = 1u << 20;  // first tail window; doubles until found
  bool count_line_numbers = true;            // absolute line_no in reverse mode (counts '\n')
  // Directory for line-count checkpoints of large files (empty: none). With it, the newline count
  // before the tail window is read from the last checkpoint (every 32 MiB) instead of counting the
  // whole prefix again; checkpoints are keyed by device+inode and checked against the file's first
  // 4 KiB and size (a rewritten or truncated file invalidates them).
  std::string line_index_dir;
  TrackerOptions tracker;
  SignalOptions signals;
  // Not null: classifies instead of a fresh BuiltinLineClassifier per scan (it keeps its state
  // across scans and reverse-scan windows; must outlive the scan).
  LineClassifier* classifier = nullptr;
  // Set: passed to MetricTracker::SetSegmentObserver (in reverse mode, line numbers are relative
  // to the tail window).
  MetricTracker::SegmentObserver segment_observer;
};

struct ScanResult {
  std::optional<ProgressRecord> latest;
  Signals signals;
  TrackerStats stats;
  uint64_t file_bytes = 0;
  uint64_t scanned_bytes = 0;
  bool reverse = false;
  double last_timestamp_s = -1;  // latest timestamp printed anywhere in the scanned part
};

// Scans `path`. `sink`, if set, receives every training record in order and disables the
// reverse scan (a full series needs the whole file). Errors: kNotFound (missing file),
// kInvalidArgument (a directory, device, FIFO or socket, or unreadable), kDataLoss (truncated or
// rewritten while it was read, three times in a row or once with a sink), naming the path.
Result<ScanResult> ScanLog(const std::string& path, const ScanOptions& options,
                           const std::function<void(const ProgressRecord&)>& sink = {});

// $SCHEDMATE_CACHE_DIR/line-index, else $XDG_CACHE_HOME/schedmate/line-index, else
// $HOME/.cache/schedmate/line-index; empty when none of them is set.
std::string DefaultLineIndexDir();

// Newlines in the bytes [0, end) of `file`, using and extending the checkpoints in `index_dir`
// (plain counting when it is empty or unusable). Fails only when the file cannot be read
// (kDataLoss: truncated while it was read).
Result<uint64_t> CountLinesIndexed(const LogFile& file, uint64_t end, const std::string& index_dir);

// Scans text already in memory (for tests and the fuzzer). `first_line_no` numbers the first line.
ScanResult ScanText(std::string_view text, const ScanOptions& options,
                    const std::function<void(const ProgressRecord&)>& sink = {},
                    int64_t first_line_no = 1, uint64_t base_offset = 0);

}  // namespace schedmate::tracker
