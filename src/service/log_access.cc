#include "service/log_access.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "core/strings.h"

namespace schedmate::service {

namespace {

// Owns one file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::optional<uid_t> UidOf(const std::string& user) {
  if (user.empty()) return std::nullopt;
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* out = nullptr;
  if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &out) != 0 || out == nullptr) {
    return std::nullopt;
  }
  return out->pw_uid;
}

std::string DirName(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The path with every symlink and ".." resolved, or nullopt (errno says why).
std::optional<std::string> RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::nullopt;
  std::string out(resolved);
  free(resolved);
  return out;
}

// Both canonical (RealPath).
bool InsideCanonical(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

bool PlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// Opens `name` inside the canonical directory `dir`, walking `dir` from "/" one component at a
// time without following symlinks: `dir` came from realpath, so any symlink met now was swapped
// in after the check and the open fails.
Result<Fd> OpenBeneath(const std::string& dir, const std::string& name, int flags,
                       const std::string& shown) {
  Fd cur(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (cur.get() < 0) return Status::Unavailable(fmt::format("cannot open /: {}", strerror(errno)));
  for (const auto& part : Split(dir, '/')) {
    if (part.empty()) continue;
    std::string component(part);
    Fd next(openat(cur.get(), component.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      if (errno == ENOENT) return Status::NotFound("no log at " + shown);
      if (errno == ELOOP || errno == ENOTDIR) {
        return Status::FailedPrecondition(fmt::format(
            "a directory of {} changed into a symlink while it was checked: not read", shown));
      }
      return Status::Unavailable(fmt::format("cannot open {}: {}", shown, strerror(errno)));
    }
    cur = std::move(next);
  }
  Fd fd(openat(cur.get(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return Status::NotFound("no log at " + shown);
    if (errno == ELOOP) return Status::FailedPrecondition("log is a symlink, not read: " + shown);
    return Status::Unavailable(fmt::format("cannot open {}: {}", shown, strerror(errno)));
  }
  return fd;
}

Result<LogTail> ReadTail(int fd, const struct stat& st, size_t max_bytes) {
  LogTail tail;
  tail.size = static_cast<int64_t>(st.st_size);
  int64_t start = std::max<int64_t>(0, tail.size - static_cast<int64_t>(max_bytes));
  tail.truncated = start > 0;
  tail.text.resize(static_cast<size_t>(tail.size - start));
  size_t got = 0;
  while (got < tail.text.size()) {
    ssize_t n = pread(fd, tail.text.data() + got, tail.text.size() - got,
                      static_cast<off_t>(start + static_cast<int64_t>(got)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // truncated while read: what was there
    got += static_cast<size_t>(n);
  }
  tail.text.resize(got);
  return tail;
}

// The directory of `path`, resolved; kNotFound when it does not exist.
Result<std::string> ResolvedParent(const std::string& path) {
  auto parent = RealPath(DirName(path));
  if (!parent) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::NotFound("no log at " + path);
    return Status::Unavailable(fmt::format("cannot resolve {}: {}", path, strerror(errno)));
  }
  return *parent;
}

// Opens a job's log after every check in the header comment; `st` receives its fstat.
Result<Fd> OpenJobLog(const std::string& path, const JobLogScope& scope, struct stat& st) {
  if (path.empty() || path.front() != '/') {
    return Status::InvalidArgument("log path must be absolute: '" + path + "'");
  }
  std::string name = BaseName(path);
  if (!PlainName(name)) return Status::InvalidArgument("log path names no file: '" + path + "'");
  if (scope.user.empty()) {
    return Status::FailedPrecondition("the job's user is unknown: its log " + path +
                                      " is not read");
  }
  auto uid = UidOf(scope.user);
  if (!uid) {
    return Status::FailedPrecondition(
        fmt::format("the job's user '{}' does not resolve on this host: its log {} is not read",
                    scope.user, path));
  }
  SM_ASSIGN_OR_RETURN(std::string parent, ResolvedParent(path));
  std::vector<std::string> bounds;
  auto bound = [&](const std::string& dir) {
    if (dir.empty() || dir.front() != '/') return;
    if (auto real = RealPath(dir)) bounds.push_back(*real);
  };
  bound(scope.work_dir);
  if (!scope.std_out.empty()) bound(DirName(scope.std_out));
  if (!scope.std_err.empty()) bound(DirName(scope.std_err));
  if (bounds.empty()) {
    return Status::FailedPrecondition(
        "neither the job's working directory nor its output directory is known: log " + path +
        " is not read");
  }
  bool inside = std::any_of(bounds.begin(), bounds.end(),
                            [&](const std::string& b) { return InsideCanonical(parent, b); });
  if (!inside) {
    return Status::FailedPrecondition(
        fmt::format("log {} lies in {}, outside the job's working and output directories: not read",
                    path, parent));
  }
  SM_ASSIGN_OR_RETURN(Fd fd, OpenBeneath(parent, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, path));
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition("log is not a regular file: " + path);
  }
  if (st.st_uid != *uid) {
    return Status::FailedPrecondition(
        fmt::format("log {} is owned by uid {}, not by the job's user {} (uid {}): not read", path,
                    st.st_uid, scope.user, *uid));
  }
  return fd;
}

}  // namespace

JobLogScope LogScopeOf(const slurm::SlurmJob& job) {
  return JobLogScope{job.user, job.work_dir, job.std_out, job.std_err};
}

Status CheckJobLog(const std::string& path, const JobLogScope& scope) {
  struct stat st {};
  return OpenJobLog(path, scope, st).status();
}

Result<LogTail> ReadJobLogTail(const std::string& path, const JobLogScope& scope,
                               size_t max_bytes) {
  struct stat st {};
  SM_ASSIGN_OR_RETURN(Fd fd, OpenJobLog(path, scope, st));
  return ReadTail(fd.get(), st, max_bytes);
}

Status EnsurePrivateDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Unavailable(fmt::format("cannot create {}: {}", dir, ec.message()));
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    return Status::Unavailable(fmt::format("cannot stat {}: {}", dir, strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status::FailedPrecondition(dir + " is not a directory (a symlink is refused)");
  }
  if (st.st_uid != geteuid()) {
    return Status::FailedPrecondition(fmt::format(
        "{} is owned by uid {}, not by the service's user (uid {})", dir, st.st_uid, geteuid()));
  }
  if ((st.st_mode & 07777) != 0700 && chmod(dir.c_str(), 0700) != 0) {
    return Status::Unavailable(fmt::format("cannot chmod 0700 {}: {}", dir, strerror(errno)));
  }
  return Status::Ok();
}

Result<std::string> WriteCapturedLog(const std::string& dir, const std::string& name,
                                     std::string_view text) {
  if (!PlainName(name)) return Status::InvalidArgument("not a plain file name: '" + name + "'");
  std::string path = dir + "/" + name;
  Fd fd(
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    return Status::Unavailable(fmt::format("cannot write {}: {}", path, strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    return Status::FailedPrecondition(path + " is not a regular file of the service's user");
  }
  if ((st.st_mode & 07777) != 0600 && fchmod(fd.get(), 0600) != 0) {
    return Status::Unavailable(fmt::format("cannot chmod 0600 {}: {}", path, strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Unavailable(fmt::format("writing {}: {}", path, strerror(errno)));
    done += static_cast<size_t>(n);
  }
  return path;
}

Result<LogTail> ReadCapturedLogTail(const std::string& path, const std::string& dir,
                                    size_t max_bytes) {
  if (path.empty() || path.front() != '/' || !PlainName(BaseName(path))) {
    return Status::InvalidArgument("captured log path must be absolute: '" + path + "'");
  }
  if (!PathIsInside(path, dir)) {
    return Status::FailedPrecondition("captured log " + path + " is outside " + dir);
  }
  SM_ASSIGN_OR_RETURN(std::string parent, ResolvedParent(path));
  SM_ASSIGN_OR_RETURN(Fd fd,
                      OpenBeneath(parent, BaseName(path), O_RDONLY | O_NONBLOCK | O_NOCTTY, path));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition("captured log is not a regular file: " + path);
  }
  if (st.st_uid != geteuid()) {
    return Status::FailedPrecondition(
        fmt::format("captured log {} is owned by uid {}, not by the service's user: not read", path,
                    st.st_uid));
  }
  return ReadTail(fd.get(), st, max_bytes);
}

bool PathIsInside(const std::string& path, const std::string& root) {
  std::error_code ec1, ec2;
  auto p = std::filesystem::weakly_canonical(path, ec1);
  auto r = std::filesystem::weakly_canonical(root, ec2);
  if (ec1 || ec2) return false;
  auto rs = r.string();
  auto ps = p.string();
  if (!rs.empty() && rs.back() != '/') rs += '/';
  return ps.compare(0, rs.size(), rs) == 0;
}

}  // namespace schedmate::service
