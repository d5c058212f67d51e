#pragma once
// File helpers that turn file-system failures into Status naming the path.
//
// Reads check what a path is before allocating: directories, character and block devices
// (/dev/zero) and sockets are refused, regular files larger than the cap are refused from their
// size, and FIFOs/pipes are read up to the cap. Writes never use a predictable temporary name and
// never follow a symlink planted in a world-writable directory (/tmp).

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace schedmate {

// Default cap of whole-file reads: 1 GiB (job traces run to a few hundred MB).
inline constexpr size_t kDefaultMaxFileBytes = size_t{1} << 30;

// Whole file into memory. kNotFound if missing; kInvalidArgument for a directory, a device or a
// socket; kResourceExhausted if a regular file is larger than `max_bytes` (checked from its size
// before reading) or a FIFO/pipe delivers more. A FIFO without a writer reads as empty.
Result<std::string> ReadFileToString(const std::string& path,
                                     size_t max_bytes = kDefaultMaxFileBytes);

// At most the first `max_bytes` of the file (the same refusals as ReadFileToString, without the
// size cap), for sniffing a format before reading everything.
Result<std::string> ReadFilePrefix(const std::string& path, size_t max_bytes);

// True when `data` does not look like text: a NUL byte, or more than 30% of its bytes control
// characters (other than \t \n \r \f \v ESC) or invalid UTF-8. An incomplete UTF-8 sequence cut
// off at the end of `data` is not held against it.
bool LooksBinary(std::string_view data);

// True when `data` is well-formed UTF-8 (no overlong forms, surrogates or cut sequences).
bool IsValidUtf8(std::string_view data);

// ReadFileToString for files that must be text: reads a 64 KiB prefix first and refuses a binary
// file (kInvalidArgument, "binary") before reading the rest, so a large sparse or binary file is
// never loaded whole.
Result<std::string> ReadTextFileToString(const std::string& path,
                                         size_t max_bytes = kDefaultMaxFileBytes);

// Writes `data` to `path`:
//  - a regular file (new or existing) is replaced atomically: a new file with a random name
//    (O_CREAT|O_EXCL) in the target's directory, written, fsync'ed, given the target's mode (and
//    owner, when running as root) or, for a new file, 0666 & ~umask, then renamed over the target;
//  - an existing device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written into, never
//    replaced;
//  - a symlink is written through (its target is replaced), except a symlink in a world-writable
//    directory (sticky or not), anywhere in the path: kFailedPrecondition, nothing written.
Status WriteStringToFile(const std::string& path, std::string_view data);

// Creates a new file with a unique random name `<dir>/.<stem>.XXXXXXXX<suffix>` (O_CREAT|O_EXCL,
// mode 0600) holding `data`, and returns its path. The caller removes it.
Result<std::string> WriteTempFile(const std::string& dir, std::string_view stem,
                                  std::string_view suffix, std::string_view data);

// What a reader remembers about an open file so that it can tell, after reading, whether the file
// was truncated or rewritten under it (logrotate copytruncate): its size and first bytes.
struct FileIdentity {
  uint64_t size = 0;
  std::string head;  // the first min(size, 4096) bytes
};
// Captures the identity of the open regular file `fd` with size `size`.
Result<FileIdentity> CaptureFileIdentity(int fd, uint64_t size);
// OK while `fd`'s file is at least `before.size` long and starts with `before.head`; otherwise
// kDataLoss "<path>: truncated or rewritten while it was read". Appends are fine.
Status CheckFileUnchanged(int fd, const FileIdentity& before, const std::string& path);

}  // namespace schedmate
