#pragma once
// Log reading for the tracker: cleaning physical lines (ANSI colour codes, invalid UTF-8, binary
// junk, very long lines), splitting progress-bar lines into their states, file access by pread
// (streamed in bounded chunks; a file truncated while it is read is an error, never a crash), and
// a tail -F follower.
//
// Rationale: training logs are written by tqdm, colour loggers and many ranks at once; the reader
// turns them into clean text without ever failing on bad bytes (they are skipped and counted).

#include <sys/types.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_util.h"
#include "core/result.h"
#include "core/status.h"

namespace schedmate::tracker {

struct ReaderOptions {
  size_t max_line_bytes = 64 * 1024;  // longer lines are cut (counted in truncated_lines)
};

struct ReaderStats {
  uint64_t lines = 0;
  uint64_t bytes = 0;
  uint64_t invalid_utf8_bytes = 0;    // dropped
  uint64_t control_bytes = 0;         // replaced by spaces
  uint64_t ansi_sequences = 0;        // stripped
  uint64_t binary_lines_skipped = 0;  // mostly non-text: skipped
  uint64_t truncated_lines = 0;       // longer than max_line_bytes
};

// Cleans one physical line (without its '\n'): strips ANSI escape sequences, drops bytes that are
// not valid UTF-8, replaces other control characters by spaces (keeps '\t' and '\r'), removes a
// trailing '\r', and cuts the line at `options.max_line_bytes`. Returns a view of `raw` when
// nothing changes, otherwise of `scratch`. Returns an empty optional-like {data()==nullptr} view
// through `binary` = true when the line is mostly binary and should be skipped.
std::string_view SanitizeLine(std::string_view raw, std::string& scratch, ReaderStats& stats,
                              const ReaderOptions& options, bool& binary);

// Splits a clean physical line into progress states: at '\r' (tqdm redraws), and after a tqdm
// stats bracket ("[01:20<01:41,  1.01s/it]") that is followed directly by more text, as happens
// when carriage returns were lost or another print is glued on. Empty states are dropped.
void SplitSegments(std::string_view line, std::vector<std::string_view>& out);

// An open log file, read with pread into the caller's buffers. Nothing is mapped: a file that is
// truncated while it is read (logrotate copytruncate) shows up as a short read or through
// CheckUnchanged() (kDataLoss naming the path), never as SIGBUS.
// Thread-safety: const methods may be called concurrently (pread has no shared position).
class LogFile {
 public:
  // kNotFound (missing); kInvalidArgument for a directory, a device, a FIFO or a socket (a log is
  // a regular file; /dev/zero would never end), naming the path.
  static Result<std::unique_ptr<LogFile>> Open(const std::string& path);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  const std::string& path() const { return path_; }
  // Size when opened. Readers stop there (bytes appended later are for the next scan).
  uint64_t size() const { return identity_.size; }
  dev_t device() const { return device_; }
  ino_t inode() const { return inode_; }

  // Reads exactly `len` bytes at `offset` into `out`. kDataLoss when the file now ends earlier
  // (it was truncated while it was read).
  Status ReadInto(uint64_t offset, char* out, size_t len) const;
  // [offset, offset + len) as a string (clamped to size()).
  Result<std::string> Read(uint64_t offset, size_t len) const;
  // kDataLoss when the file is now shorter than size() or its first 4 KiB changed (truncated or
  // rewritten under the reader); appends are fine.
  Status CheckUnchanged() const;

 private:
  LogFile() = default;
  std::string path_;
  int fd_ = -1;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  FileIdentity identity_;
};

// Longest physical line a file reader hands on whole; longer lines are reported by their first
// kMaxPhysicalLineBytes (SanitizeLine cuts far shorter anyway), so memory stays bounded.
inline constexpr size_t kMaxPhysicalLineBytes = size_t{8} << 20;

// Calls fn(line, offset) for each physical line (without '\n') of the file bytes [begin, end),
// streaming through a bounded buffer; the last line may lack '\n'. `begin` must start a line.
// kDataLoss when the file ends early (truncated while it was read).
Status ForEachLineInFile(const LogFile& file, uint64_t begin, uint64_t end,
                         const std::function<void(std::string_view line, uint64_t offset)>& fn);

// Offset just after the first '\n' at or after `offset` (size() when there is none).
Result<uint64_t> NextLineStartInFile(const LogFile& file, uint64_t offset);

// Number of '\n' in the file bytes [begin, end).
Result<uint64_t> CountNewlinesInFile(const LogFile& file, uint64_t begin, uint64_t end);

// Calls fn(line, offset) for each physical line of `data` (the last may lack '\n').
template <typename Fn>
void ForEachPhysicalLine(std::string_view data, Fn&& fn) {
  size_t pos = 0;
  const size_t n = data.size();
  while (pos < n) {
    const void* nl = memchr(data.data() + pos, '\n', n - pos);
    size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data.data()) : n;
    fn(data.substr(pos, end - pos), static_cast<uint64_t>(pos));
    pos = end + 1;
  }
}

// Number of '\n' in data[0, end).
uint64_t CountNewlines(std::string_view data);

// tail -F: follows `path` across appends, truncation (size shrinks, or the first bytes change
// because the file was truncated and rewritten between two polls: restart at 0) and rotation (a new
// file at the path: reopen, start at 0). Missing files are waited for; a path that is not a
// regular file (a FIFO, a device) is treated as missing. Reads use pread: never SIGBUS.
// Not thread-safe; call Poll() from one thread.
class FileFollower {
 public:
  // line: text of a complete line, or (complete=false) the new '\r'-terminated states of the line
  // still being written (tqdm bars never end in '\n' until they finish).
  using LineFn =
      std::function<void(std::string_view line, int64_t line_no, uint64_t offset, bool complete)>;

  FileFollower(std::string path, ReaderOptions options = {});
  ~FileFollower();
  FileFollower(const FileFollower&) = delete;
  FileFollower& operator=(const FileFollower&) = delete;

  // Reads what arrived since the last call and reports it. `start_at_end`: on the first open,
  // skip existing content (tail -n 0 -F); otherwise read from the beginning.
  Status Poll(const LineFn& fn);
  void SetStartAtEnd(bool v) { start_at_end_ = v; }

  int truncations() const { return truncations_; }
  int rotations() const { return rotations_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  void Reopen();
  void ResetPosition();
  bool HeadChanged();
  void RememberHead();
  std::string path_;
  ReaderOptions options_;
  int fd_ = -1;
  ino_t inode_ = 0;
  dev_t device_ = 0;
  uint64_t offset_ = 0;         // bytes consumed from the file
  uint64_t line_start_ = 0;     // offset of the pending line
  int64_t line_no_ = 1;         // number of the pending line
  std::string pending_;         // bytes of the incomplete line
  std::string head_;            // the file's first bytes as read (up to 64): detects rewrites
  size_t pending_emitted_ = 0;  // bytes of pending_ already reported as states
  bool start_at_end_ = false;
  bool first_open_ = true;
  int truncations_ = 0;
  int rotations_ = 0;
};

}  // namespace schedmate::tracker
