#include "service/log_access.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

namespace schedmate::service {

namespace {
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
}  // namespace

Result<LogTail> ReadJobLogTail(const std::string& path, const std::string& owner,
                               size_t max_bytes) {
  if (path.empty() || path.front() != '/') {
    return Status::InvalidArgument("log path must be absolute: '" + path + "'");
  }
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no log at " + path);
    if (errno == ELOOP) return Status::FailedPrecondition("log is a symlink, not read: " + path);
    return Status::Unavailable(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition("log is not a regular file: " + path);
  }
  uid_t expected = getuid();
  if (auto uid = UidOf(owner)) expected = *uid;
  if (st.st_uid != expected) {
    return Status::FailedPrecondition(
        fmt::format("log {} is owned by uid {}, not the job's user: not read", path, st.st_uid));
  }
  LogTail tail;
  tail.size = static_cast<int64_t>(st.st_size);
  int64_t start = std::max<int64_t>(0, tail.size - static_cast<int64_t>(max_bytes));
  tail.truncated = start > 0;
  tail.text.resize(static_cast<size_t>(tail.size - start));
  size_t got = 0;
  while (got < tail.text.size()) {
    ssize_t n = pread(fd, tail.text.data() + got, tail.text.size() - got,
                      static_cast<off_t>(start + static_cast<int64_t>(got)));
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  tail.text.resize(got);
  return tail;
}

Status CheckJobLog(const std::string& path, const std::string& owner) {
  return ReadJobLogTail(path, owner, 0).status();
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
