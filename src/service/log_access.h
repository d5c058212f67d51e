#pragma once
// Safe reads of job output files. The service runs with privileges a job's owner does not have
// (usually root), and a job's StdOut path is chosen by that owner, so a job's log is read only
// when all of these hold:
//   * the path is absolute and its file name is a plain name (not "", "." or "..");
//   * the job's user resolves on this host (an empty or unknown user: refused, never a fallback
//     to the service's own uid) and the file's owner is exactly that uid (so a root-owned file is
//     read only for a job whose user is root);
//   * the file's directory, with symlinks resolved, lies inside the job's working directory or
//     the directory of its StdOut/StdErr as Slurm reports them (each resolved too);
//   * it is opened by walking that resolved directory from "/" one component at a time with
//     O_NOFOLLOW (a component swapped for a symlink after the check fails the open), the file
//     itself with O_NOFOLLOW | O_NONBLOCK (a FIFO never blocks), and fstat says regular file.
// Reads return at most the last `max_bytes` bytes. Refusals are kFailedPrecondition (the API
// answers 403), a missing file kNotFound, a bad path kInvalidArgument.
//
// The service's own copies of failed jobs' logs (<data_dir>/logs) are written 0600 in a 0700
// directory (whatever the source's mode: a copy is never readable by more people than the
// original) and read back only when owned by the service's own user and inside that directory.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "slurm/slurm_types.h"

namespace schedmate::service {

struct LogTail {
  std::string text;
  int64_t size = 0;        // file size
  bool truncated = false;  // text is only the tail
};

// Whose log it is and where it may lie: what Slurm reports about the job.
struct JobLogScope {
  std::string user;      // Slurm user name ("" = unknown: every read is refused)
  std::string work_dir;  // WorkDir ("" = unknown)
  std::string std_out;   // StdOut / StdErr as Slurm reports them; only absolute ones bound
  std::string std_err;
};
JobLogScope LogScopeOf(const slurm::SlurmJob& job);

// The same checks as ReadJobLogTail without reading: OK when it would be allowed to read `path`.
Status CheckJobLog(const std::string& path, const JobLogScope& scope);

Result<LogTail> ReadJobLogTail(const std::string& path, const JobLogScope& scope, size_t max_bytes);

// Creates `dir` (and its parents) if needed and makes it 0700; refuses a symlink or a directory
// owned by another user.
Status EnsurePrivateDir(const std::string& dir);

// Writes `text` to <dir>/<name> with mode 0600 (an existing file is truncated and tightened; a
// symlink there is refused). Returns the path. `name` must be a plain file name.
Result<std::string> WriteCapturedLog(const std::string& dir, const std::string& name,
                                     std::string_view text);

// Reads back a copy written by WriteCapturedLog: inside `dir`, owned by the service's user.
Result<LogTail> ReadCapturedLogTail(const std::string& path, const std::string& dir,
                                    size_t max_bytes);

// True when `path`, after resolving symlinks and "..", lies inside `root`. False when either
// cannot be resolved.
bool PathIsInside(const std::string& path, const std::string& root);

}  // namespace schedmate::service
