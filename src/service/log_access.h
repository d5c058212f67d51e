#pragma once
// Safe reads of job output files. The service runs with privileges a job's owner does not have,
// and a job's StdOut path is chosen by that owner, so a log is read only when:
//   * the path is absolute and names a regular file (the last component is not a symlink:
//     O_NOFOLLOW), and
//   * the file belongs to the job's user (or `owner` is empty/unknown and the file's owner is
//     the service's own user).
// Reads return at most the last `max_bytes` bytes.

#include <string>

#include "core/result.h"

namespace schedmate::service {

struct LogTail {
  std::string text;
  int64_t size = 0;        // file size
  bool truncated = false;  // text is only the tail
};

// The same checks without reading: OK when ReadJobLogTail would be allowed to read `path`.
Status CheckJobLog(const std::string& path, const std::string& owner);

// `owner` is the Slurm user name of the job ("" = unknown).
Result<LogTail> ReadJobLogTail(const std::string& path, const std::string& owner, size_t max_bytes);

// True when `path`, after resolving symlinks and "..", lies inside `root`. False when either
// cannot be resolved.
bool PathIsInside(const std::string& path, const std::string& root);

}  // namespace schedmate::service
