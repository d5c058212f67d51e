#pragma once
// LogView: the read-only bytes of one log (a memory-mapped file or an owned string) and the line
// arithmetic the failure locator needs. A line ends at '\n'; a trailing '\r' is not part of its
// text. Line numbers are 1-based physical lines.
//
// The mapping is a core GuardedMapping: when another process truncates the file while it is read
// (logrotate copytruncate), the bytes past the new end read as zeros instead of raising SIGBUS,
// and CheckIntact() says so; callers check it after reading and read again or report the error.
//
// Thread-safety: const methods are safe for concurrent use. The view is movable, not copyable.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/guarded_mapping.h"
#include "core/result.h"

namespace schedmate::failure {

class LogView {
 public:
  // Maps `path` read-only. kNotFound if missing, kInvalidArgument if not a regular file,
  // kDataLoss if it cannot be read.
  static Result<LogView> OpenFile(const std::string& path);
  // Like OpenFile, then runs `use` on the view and checks afterwards that the file was not
  // truncated or rewritten meanwhile; if it was, opens it again and reruns `use` (up to
  // `attempts` times). kDataLoss naming the path when every attempt saw the file change.
  template <typename T, typename Fn>
  static Result<T> ReadStable(const std::string& path, Fn&& use, int attempts = 3);
  static LogView FromString(std::string text);

  LogView(LogView&& other) noexcept;
  LogView& operator=(LogView&& other) noexcept;
  LogView(const LogView&) = delete;
  LogView& operator=(const LogView&) = delete;
  ~LogView();

  std::string_view data() const { return {data_, size_}; }
  // OK for owned text, and for a file while nothing read so far came from past its end and it is
  // still at least as long with the same first 4 KiB; kDataLoss naming the path otherwise.
  Status CheckIntact() const;
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
  std::unique_ptr<GuardedMapping> map_;  // when mapped, else null
  std::string owned_;
};

template <typename T, typename Fn>
Result<T> LogView::ReadStable(const std::string& path, Fn&& use, int attempts) {
  for (int attempt = 1;; ++attempt) {
    SM_ASSIGN_OR_RETURN(LogView view, OpenFile(path));
    Result<T> result = use(static_cast<const LogView&>(view));
    const Status intact = view.CheckIntact();
    if (intact.ok()) return result;
    if (attempt >= attempts) return intact;
  }
}

// Counts '\n' in [begin, end) of `text`.
int64_t CountNewlines(std::string_view text);

}  // namespace schedmate::failure
