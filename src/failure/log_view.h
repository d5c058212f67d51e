#pragma once
// LogView: the read-only bytes of one log (a memory-mapped file or an owned string) and the line
// arithmetic the failure locator needs. A line ends at '\n'; a trailing '\r' is not part of its
// text. Line numbers are 1-based physical lines.
//
// Thread-safety: const methods are safe for concurrent use. The view is movable, not copyable.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace schedmate::failure {

class LogView {
 public:
  // Maps `path` read-only. kNotFound if missing, kInvalidArgument if not a regular file,
  // kDataLoss if it cannot be read.
  static Result<LogView> OpenFile(const std::string& path);
  static LogView FromString(std::string text);

  LogView(LogView&& other) noexcept;
  LogView& operator=(LogView&& other) noexcept;
  LogView(const LogView&) = delete;
  LogView& operator=(const LogView&) = delete;
  ~LogView();

  std::string_view data() const { return {data_, size_}; }
  size_t size() const { return size_; }

  // First byte of the line containing `offset` (REQUIRES: offset <= size()).
  size_t LineStart(size_t offset) const;
  // First byte of the first line starting at or after `offset`; size() if none.
  size_t NextLineStart(size_t offset) const;
  // Position of the '\n' ending the line that contains `start`, or size().
  size_t LineEnd(size_t start) const;
  // Text of the line containing `offset`, without '\n' and a trailing '\r'.
  std::string_view LineAt(size_t offset) const;
  // 1-based number of the line containing `offset`: one more than the '\n' bytes before it.
  int64_t LineNumber(size_t offset) const;

 private:
  LogView() = default;
  void Release();

  const char* data_ = nullptr;
  size_t size_ = 0;
  void* map_ = nullptr;  // mmap base when mapped, else null
  size_t map_size_ = 0;
  std::string owned_;
};

// Counts '\n' in [begin, end) of `text`.
int64_t CountNewlines(std::string_view text);

}  // namespace schedmate::failure
