#pragma once
// GuardedMapping: a read-only private mapping of a whole regular file that survives the file
// shrinking under it.
//
// Reading a mapped page past the end of a file that another process truncated (logrotate's
// copytruncate) raises SIGBUS. A process-wide SIGBUS handler (installed on first use, SA_SIGINFO)
// looks the faulting address up in a fixed table of live guarded mappings; when it lies in one,
// the handler replaces the rest of that mapping by anonymous zero pages (mmap MAP_FIXED, a plain
// system call: no longjmp, so it is safe with threads), marks the mapping as cut and returns: the
// read is retried and sees zeros. Readers call CheckIntact() after reading and discard what they
// read when it fails. A SIGBUS outside any guarded mapping goes to the previous handler (or the
// default action: the process still dies on a real bus error).
//
// Use it where random access over a large file matters (the failure locator bisects a log and
// must not hold it resident); sequential readers should use pread into their own buffers.
//
// Thread-safety: data() and CheckIntact() may be called concurrently. At most 64 guarded mappings
// are live at once; more fall back to an unguarded error (kResourceExhausted) rather than a crash.

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/file_util.h"
#include "core/result.h"

namespace schedmate {

class GuardedMapping {
 public:
  // Maps `path` read-only. kNotFound if missing; kInvalidArgument if not a regular file;
  // kDataLoss if it cannot be mapped. An empty file maps to an empty view.
  static Result<std::unique_ptr<GuardedMapping>> Open(const std::string& path);
  ~GuardedMapping();
  GuardedMapping(const GuardedMapping&) = delete;
  GuardedMapping& operator=(const GuardedMapping&) = delete;

  std::string_view data() const { return {static_cast<const char*>(addr_), size_}; }
  const std::string& path() const { return path_; }

  // OK while nothing read so far came from past the file's end and the file still holds the
  // mapped bytes (at least as long, the same first 4 KiB); kDataLoss naming the path otherwise.
  Status CheckIntact() const;

 private:
  GuardedMapping() = default;
  std::string path_;
  int fd_ = -1;
  void* addr_ = nullptr;
  size_t size_ = 0;
  int slot_ = -1;  // index in the handler's table, or -1 for an empty file
  FileIdentity identity_;
};

}  // namespace schedmate
