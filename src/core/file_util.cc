#include "core/file_util.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace schedmate {
namespace {

std::string Errno(int e) { return std::strerror(e); }

// What kind of non-regular file `mode` is, for messages; empty for regular files and FIFOs.
std::string RefusedKind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISCHR(mode)) return "is a character device, not a file";
  if (S_ISBLK(mode)) return "is a block device, not a file";
  if (S_ISSOCK(mode)) return "is a socket, not a file";
  if (!S_ISREG(mode) && !S_ISFIFO(mode)) return "is not a regular file";
  return {};
}

// An open descriptor that closes itself.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

// Opens `path` for reading after checking what it is: devices, sockets and directories are
// refused without being opened (opening some devices has side effects); a FIFO is opened without
// waiting for a writer.
Status OpenForRead(const std::string& path, Fd& fd, struct stat& st) {
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) return Status::NotFound(path + ": no such file");
    return Status::InvalidArgument(path + ": cannot access: " + Errno(e));
  }
  if (std::string kind = RefusedKind(st.st_mode); !kind.empty()) {
    return Status::InvalidArgument(path + ": " + kind);
  }
  int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (raw < 0) {
    const int e = errno;
    if (e == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::InvalidArgument(path + ": cannot open: " + Errno(e));
  }
  Fd opened(raw);
  // The path may have changed between stat and open: judge what was opened.
  if (::fstat(opened.get(), &st) != 0) {
    return Status::InvalidArgument(path + ": cannot stat: " + Errno(errno));
  }
  if (std::string kind = RefusedKind(st.st_mode); !kind.empty()) {
    return Status::InvalidArgument(path + ": " + kind);
  }
  // Blocking reads from here on (a FIFO with a writer delivers as it is written).
  const int flags = ::fcntl(opened.get(), F_GETFL);
  if (flags >= 0) (void)::fcntl(opened.get(), F_SETFL, flags & ~O_NONBLOCK);
  fd.reset(opened.release());
  return Status::Ok();
}

// Reads from `fd` until EOF or until `out` holds more than `cap` bytes (then `*over` is set; the
// bytes read so far stay in `out`, possibly a buffer beyond `cap`).
Status ReadUpTo(int fd, const std::string& path, size_t cap, std::string& out, bool* over) {
  char buf[1 << 16];
  while (out.size() <= cap) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::DataLoss(path + ": read error: " + Errno(errno));
    }
    if (n == 0) return Status::Ok();
    out.append(buf, static_cast<size_t>(n));
  }
  if (over != nullptr) *over = true;
  return Status::Ok();
}

Status TooLarge(const std::string& path, uint64_t size, size_t max_bytes) {
  return Status::ResourceExhausted(
      path + ": " + (size > 0 ? std::to_string(size) + " bytes, " : "") +
      "larger than the limit of " + std::to_string(max_bytes) + " bytes");
}

// Length of the valid UTF-8 sequence at s[i] (s[i] >= 0x80); 0 when invalid, -1 when it is a valid
// start cut off by the end of `s`.
int Utf8Len(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  int len = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
  } else {
    return 0;
  }
  for (int k = 1; k < len; ++k) {
    if (i + static_cast<size_t>(k) >= s.size()) return -1;
    const unsigned char d = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
    if ((d & 0xC0) != 0x80) return 0;
    // Overlong 3/4-byte forms, surrogates and code points above U+10FFFF.
    if (k == 1 && ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) ||
                   (c == 0xF4 && d > 0x8F))) {
      return 0;
    }
  }
  return len;
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Eight random characters from [A-Za-z0-9].
std::string RandomSuffix() {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[8];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += static_cast<size_t>(n);
  }
  if (got < sizeof(bytes)) {  // no getrandom: still unpredictable enough with O_EXCL retries
    uint64_t x = static_cast<uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ull ^
                 reinterpret_cast<uintptr_t>(&got) ^ static_cast<uint64_t>(::clock());
    for (unsigned char& b : bytes) {
      x ^= x >> 33;
      x *= 0xff51afd7ed558ccdull;
      b = static_cast<unsigned char>(x >> 56);
    }
  }
  std::string out;
  for (unsigned char b : bytes) out += kChars[b % (sizeof(kChars) - 1)];
  return out;
}

// Creates `<dir>/.<stem>.XXXXXXXX<suffix>` with O_CREAT|O_EXCL and `mode` (before the umask).
Status CreateExclusive(const std::string& dir, std::string_view stem, std::string_view suffix,
                       mode_t mode, Fd& fd, std::string& path) {
  // Keep the name within NAME_MAX (255) whatever the target's name is.
  const std::string short_stem(stem.substr(0, 200));
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate =
        JoinPath(dir, "." + short_stem + "." + RandomSuffix() + std::string(suffix));
    const int raw = ::open(candidate.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, mode);
    if (raw >= 0) {
      fd.reset(raw);
      path = std::move(candidate);
      return Status::Ok();
    }
    if (errno != EEXIST) {
      return Status::InvalidArgument(dir + ": cannot create a file there: " + Errno(errno));
    }
  }
  return Status::Internal(dir + ": no unique temporary name after 100 attempts");
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::DataLoss(path + ": write failed: " + Errno(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

// Resolves the file a write to `path` lands on, following symlinks, except a symlink found in a
// world-writable directory (anyone could have planted it there: kFailedPrecondition). A missing
// final component resolves to the name in its (resolved) directory.
Result<std::string> ResolveWriteTarget(const std::string& path, int depth = 0) {
  if (path.empty()) return Status::InvalidArgument("empty output path");
  if (depth > 40) return Status::InvalidArgument(path + ": too many levels of symbolic links");
  std::string dir;
  std::string rest = path;
  if (path[0] == '/') {
    dir = "/";
  } else {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
      return Status::InvalidArgument(path + ": cannot resolve the working directory");
    }
    dir = cwd;
  }
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t slash = rest.find('/', pos);
    if (slash == std::string::npos) slash = rest.size();
    std::string part = rest.substr(pos, slash - pos);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    pos = slash + 1;
  }
  if (parts.empty()) return Status::InvalidArgument(path + ": is a directory");
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    if (parts[i] == "..") {
      dir = Dirname(dir);
      if (last) return Status::InvalidArgument(path + ": is a directory");
      continue;
    }
    const std::string full = JoinPath(dir, parts[i]);
    struct stat lst {};
    if (::lstat(full.c_str(), &lst) != 0) {
      const int e = errno;
      if (e == ENOENT && last) return full;  // a new file
      if (e == ENOENT) return Status::NotFound(path + ": no such directory: " + full);
      return Status::InvalidArgument(path + ": cannot access " + full + ": " + Errno(e));
    }
    if (!S_ISLNK(lst.st_mode)) {
      dir = full;
      continue;
    }
    struct stat dst {};
    if (::stat(dir.c_str(), &dst) != 0 || (dst.st_mode & S_IWOTH) != 0) {
      return Status::FailedPrecondition(path + ": refusing to write through the symlink " + full +
                                        " in the world-writable directory " + dir);
    }
    char real[PATH_MAX];
    if (::realpath(full.c_str(), real) != nullptr) {
      dir = real;
      continue;
    }
    // A dangling symlink: resolve its target text (it may name a new file) and go on from there.
    char target[PATH_MAX];
    const ssize_t n = ::readlink(full.c_str(), target, sizeof(target) - 1);
    if (n <= 0) return Status::InvalidArgument(path + ": cannot read the symlink " + full);
    std::string next(target, static_cast<size_t>(n));
    if (next[0] != '/') next = JoinPath(dir, next);
    for (size_t k = i + 1; k < parts.size(); ++k) next += "/" + parts[k];
    return ResolveWriteTarget(next, depth + 1);
  }
  return dir;
}

}  // namespace

Result<std::string> ReadFileToString(const std::string& path, size_t max_bytes) {
  Fd fd;
  struct stat st {};
  SM_RETURN_IF_ERROR(OpenForRead(path, fd, st));
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      return TooLarge(path, static_cast<uint64_t>(st.st_size), max_bytes);
    }
  }
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  bool over = false;
  SM_RETURN_IF_ERROR(ReadUpTo(fd.get(), path, max_bytes, out, &over));
  if (over) return TooLarge(path, 0, max_bytes);
  return out;
}

Result<std::string> ReadFilePrefix(const std::string& path, size_t max_bytes) {
  Fd fd;
  struct stat st {};
  SM_RETURN_IF_ERROR(OpenForRead(path, fd, st));
  std::string out;
  SM_RETURN_IF_ERROR(ReadUpTo(fd.get(), path, max_bytes, out, nullptr));
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

bool LooksBinary(std::string_view data) {
  size_t bad = 0;
  size_t i = 0;
  const size_t n = data.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(data[i]);
    if (c == 0) return true;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' &&
           c != 0x1B) ||
          c == 0x7F) {
        ++bad;
      }
      ++i;
      continue;
    }
    const int len = Utf8Len(data, i);
    if (len < 0) break;  // a character cut off by the end of the sample
    if (len == 0) {
      ++bad;
      ++i;
    } else {
      i += static_cast<size_t>(len);
    }
  }
  return bad * 10 > n * 3;
}

bool IsValidUtf8(std::string_view data) {
  size_t i = 0;
  while (i < data.size()) {
    if (static_cast<unsigned char>(data[i]) < 0x80) {
      ++i;
      continue;
    }
    const int len = Utf8Len(data, i);
    if (len <= 0) return false;
    i += static_cast<size_t>(len);
  }
  return true;
}

Result<std::string> ReadTextFileToString(const std::string& path, size_t max_bytes) {
  constexpr size_t kSniffBytes = size_t{64} << 10;
  Fd fd;
  struct stat st {};
  SM_RETURN_IF_ERROR(OpenForRead(path, fd, st));
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    return TooLarge(path, static_cast<uint64_t>(st.st_size), max_bytes);
  }
  std::string out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<size_t>(st.st_size));
  bool over = false;
  const size_t sniff = std::min(kSniffBytes, max_bytes);
  SM_RETURN_IF_ERROR(ReadUpTo(fd.get(), path, sniff, out, &over));
  if (LooksBinary(std::string_view(out).substr(0, sniff))) {
    return Status::InvalidArgument(path + ": a binary file, not text");
  }
  if (!over) return out;
  over = false;
  SM_RETURN_IF_ERROR(ReadUpTo(fd.get(), path, max_bytes, out, &over));
  if (over) return TooLarge(path, 0, max_bytes);
  return out;
}

Result<std::string> WriteTempFile(const std::string& dir, std::string_view stem,
                                  std::string_view suffix, std::string_view data) {
  Fd fd;
  std::string tmp;
  SM_RETURN_IF_ERROR(CreateExclusive(dir, stem, suffix, 0600, fd, tmp));
  Status st = WriteAll(fd.get(), data, tmp);
  if (st.ok() && ::close(fd.release()) != 0) st = Status::DataLoss(tmp + ": close failed");
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  return tmp;
}

Status WriteStringToFile(const std::string& path, std::string_view data) {
  // /dev/stdout, /dev/fd/N, /proc/self/fd/N: the caller means the open descriptor, whatever it
  // is (a terminal, a pipe, a file the shell redirected to). Write into it; never replace it.
  auto starts = [&](std::string_view prefix) { return path.rfind(prefix, 0) == 0; };
  const bool descriptor_path = path == "/dev/stdout" || path == "/dev/stderr" ||
                               starts("/dev/fd/") || starts("/proc/self/fd/") ||
                               (starts("/proc/") && path.find("/fd/") != std::string::npos);
  std::string target = path;
  if (!descriptor_path) {
    SM_ASSIGN_OR_RETURN(target, ResolveWriteTarget(path));
  }
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return Status::InvalidArgument(path + ": is a directory");
  if (descriptor_path || (exists && !S_ISREG(st.st_mode))) {
    // A device, FIFO or socket (/dev/null, /dev/stdout, a pipe): write into it; never replace it.
    const int raw = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY |
                                               (exists && S_ISREG(st.st_mode) ? O_TRUNC : 0));
    if (raw < 0) {
      return Status::InvalidArgument(path + ": cannot open for writing: " + Errno(errno));
    }
    Fd fd(raw);
    SM_RETURN_IF_ERROR(WriteAll(fd.get(), data, path));
    if (::close(fd.release()) != 0) return Status::DataLoss(path + ": write failed on close");
    return Status::Ok();
  }
  const std::string dir = Dirname(target);
  Fd fd;
  std::string tmp;
  // A new file gets 0666 & ~umask from open(2), as any other program's output would.
  if (Status s = CreateExclusive(dir, Basename(target), ".tmp", exists ? 0600 : 0666, fd, tmp);
      !s.ok()) {
    return Status::InvalidArgument(path + ": cannot open for writing: " + s.message());
  }
  Status st_write = WriteAll(fd.get(), data, path);
  if (st_write.ok() && exists) {
    if (::fchmod(fd.get(), st.st_mode & 07777) != 0) {
      st_write = Status::DataLoss(path + ": cannot keep the file's mode: " + Errno(errno));
    } else if (::geteuid() == 0 && (st.st_uid != 0 || st.st_gid != 0)) {
      // Root rewriting someone's file keeps it theirs (best effort).
      (void)::fchown(fd.get(), st.st_uid, st.st_gid);
      (void)::fchmod(fd.get(), st.st_mode & 07777);  // chown may clear set-id bits
    }
  }
  if (st_write.ok() && ::fsync(fd.get()) != 0 && errno != EINVAL) {
    st_write = Status::DataLoss(path + ": fsync failed: " + Errno(errno));
  }
  if (st_write.ok() && ::close(fd.release()) != 0) {
    st_write = Status::DataLoss(path + ": write failed on close: " + Errno(errno));
  }
  if (st_write.ok() && ::rename(tmp.c_str(), target.c_str()) != 0) {
    st_write = Status::DataLoss(path + ": rename failed: " + Errno(errno));
  }
  if (!st_write.ok()) {
    ::unlink(tmp.c_str());
    return st_write;
  }
  // Make the rename durable (best effort: some file systems refuse fsync on a directory).
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

Result<FileIdentity> CaptureFileIdentity(int fd, uint64_t size) {
  FileIdentity id;
  id.size = size;
  id.head.resize(static_cast<size_t>(std::min<uint64_t>(size, 4096)));
  size_t got = 0;
  while (got < id.head.size()) {
    const ssize_t n =
        ::pread(fd, id.head.data() + got, id.head.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  id.head.resize(got);
  return id;
}

Status CheckFileUnchanged(int fd, const FileIdentity& before, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::DataLoss(path + ": cannot stat: " + Errno(errno));
  const Status changed =
      Status::DataLoss(path + ": truncated or rewritten while it was read (log rotation?)");
  if (static_cast<uint64_t>(st.st_size) < before.size) return changed;
  SM_ASSIGN_OR_RETURN(FileIdentity now, CaptureFileIdentity(fd, before.head.size()));
  if (now.head != before.head) return changed;
  return Status::Ok();
}

}  // namespace schedmate
