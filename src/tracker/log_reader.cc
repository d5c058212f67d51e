#include "tracker/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace schedmate::tracker {
namespace {

// Word-at-a-time byte tests (8 bytes per step) for the per-line scans below; each answers "is
// there any such byte in the word" exactly.
constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighs = 0x8080808080808080ull;
inline uint64_t Load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  return w;
}
inline uint64_t HasZeroByte(uint64_t w) { return (w - kOnes) & ~w & kHighs; }
inline uint64_t HasByte(uint64_t w, unsigned char b) { return HasZeroByte(w ^ (kOnes * b)); }
inline uint64_t HasByteBelow(uint64_t w, unsigned char n) {  // REQUIRES: n <= 128
  return (w - kOnes * n) & ~w & kHighs;
}
// Some byte is not printable ASCII (0x20..0x7E); tab and '\r' are reported too.
inline bool MaybeSpecial(uint64_t w) {
  return ((w & kHighs) | HasByteBelow(w, 0x20) | HasByte(w, 0x7F)) != 0;
}
// Printable ASCII, tab or '\r': copied as they are.
inline bool PlainByte(unsigned char c) { return (c >= 0x20 && c < 0x7F) || c == '\t' || c == '\r'; }

// Length of the valid UTF-8 sequence at s[i], or 0 when invalid.
size_t Utf8SeqLen(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

}  // namespace

std::string_view SanitizeLine(std::string_view raw, std::string& scratch, ReaderStats& stats,
                              const ReaderOptions& options, bool& binary) {
  binary = false;
  ++stats.lines;
  stats.bytes += raw.size() + 1;
  // Fast path: printable ASCII (plus tab and '\r') within the cap.
  bool clean = raw.size() <= options.max_line_bytes;
  if (clean) {
    size_t k = 0;
    while (k + 8 <= raw.size() && !MaybeSpecial(Load8(raw.data() + k))) k += 8;
    for (; k < raw.size(); ++k) {
      if (!PlainByte(static_cast<unsigned char>(raw[k]))) {
        clean = false;
        break;
      }
    }
  }
  if (clean) {
    while (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    return raw;
  }
  scratch.clear();
  scratch.reserve(std::min(raw.size(), options.max_line_bytes));
  size_t bad = 0;
  size_t i = 0;
  const size_t n = raw.size();
  bool truncated = false;
  while (i < n) {
    if (scratch.size() >= options.max_line_bytes) {
      truncated = true;
      break;
    }
    const unsigned char c = static_cast<unsigned char>(raw[i]);
    if (PlainByte(c)) {  // a run of plain bytes is copied at once, up to the cap
      size_t e = i + 1;
      while (e + 8 <= n && !MaybeSpecial(Load8(raw.data() + e))) e += 8;
      while (e < n && PlainByte(static_cast<unsigned char>(raw[e]))) ++e;
      const size_t take = std::min(e - i, options.max_line_bytes - scratch.size());
      scratch.append(raw.data() + i, take);
      i += take;
      continue;
    }
    if (c == 0x1B) {  // ANSI escape
      ++stats.ansi_sequences;
      ++i;
      if (i < n && raw[i] == '[') {
        ++i;
        while (i < n && !(static_cast<unsigned char>(raw[i]) >= 0x40 &&
                          static_cast<unsigned char>(raw[i]) <= 0x7E))
          ++i;
        if (i < n) ++i;
      } else if (i < n && raw[i] == ']') {
        ++i;
        while (i < n && raw[i] != '\a' && !(raw[i] == 0x1B && i + 1 < n && raw[i + 1] == '\\')) ++i;
        if (i < n) i += raw[i] == '\a' ? 1 : 2;
      } else if (i < n) {
        ++i;
      }
      continue;
    }
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\r') {
        ++stats.control_bytes;
        ++bad;
        scratch.push_back(' ');
      } else if (c == 0x7F) {
        ++stats.control_bytes;
        ++bad;
      } else {
        scratch.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    size_t len = Utf8SeqLen(raw, i);
    if (len == 0) {
      ++stats.invalid_utf8_bytes;
      ++bad;
      ++i;
      continue;
    }
    if (scratch.size() + len > options.max_line_bytes) {
      truncated = true;
      break;
    }
    scratch.append(raw.data() + i, len);
    i += len;
  }
  if (truncated) ++stats.truncated_lines;
  const size_t considered = truncated ? i : n;
  if (considered >= 8 && bad * 10 > considered * 3) {
    binary = true;
    ++stats.binary_lines_skipped;
    return {};
  }
  std::string_view out(scratch);
  while (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return out;
}

void SplitSegments(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t seg_start = 0;
  size_t open_bracket = std::string_view::npos;
  const size_t n = line.size();
  auto push = [&](size_t b, size_t e) {
    std::string_view s = line.substr(b, e - b);
    size_t k = 0;
    while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
    if (k < s.size()) out.push_back(s);
  };
  for (size_t i = 0; i < n; ++i) {
    if (i + 8 <= n) {  // skip 8 bytes at a time while none of them is '\r', '[' or ']'
      const uint64_t w = Load8(line.data() + i);
      if ((HasByte(w, '\r') | HasByte(w, '[') | HasByte(w, ']')) == 0) {
        i += 7;
        continue;
      }
    }
    const char c = line[i];
    if (c == '\r') {
      push(seg_start, i);
      seg_start = i + 1;
      open_bracket = std::string_view::npos;
    } else if (c == '[') {
      open_bracket = i;
    } else if (c == ']' && open_bracket != std::string_view::npos && open_bracket >= seg_start &&
               i - open_bracket < 200 && i + 1 < n) {
      std::string_view inside = line.substr(open_bracket + 1, i - open_bracket - 1);
      const bool tqdm_stats = inside.find('<') != std::string_view::npos &&
                              (inside.find("it/s") != std::string_view::npos ||
                               inside.find("s/it") != std::string_view::npos);
      size_t k = i + 1;
      while (k < n && (line[k] == ' ' || line[k] == '\t')) ++k;
      if (tqdm_stats && k < n && line[k] != '\r') {
        push(seg_start, i + 1);
        seg_start = i + 1;
      }
      open_bracket = std::string_view::npos;
    }
  }
  if (seg_start < n) push(seg_start, n);
}

Result<std::unique_ptr<LogFile>> LogFile::Open(const std::string& path) {
  // Judge the path before opening it: opening a FIFO would wait for a writer, and some devices
  // act when opened.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) return Status::NotFound(path + ": no such file");
    return Status::InvalidArgument(path + ": cannot access: " + std::strerror(e));
  }
  auto refuse = [&](mode_t mode) -> Status {
    if (S_ISDIR(mode)) return Status::InvalidArgument(path + ": is a directory");
    if (!S_ISREG(mode)) {
      return Status::InvalidArgument(path + ": not a regular file (" +
                                     (S_ISFIFO(mode)                   ? "a FIFO"
                                      : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
                                                                       : "a socket") +
                                     "); logs are read from regular files");
    }
    return Status::Ok();
  };
  SM_RETURN_IF_ERROR(refuse(st.st_mode));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::InvalidArgument(path + ": cannot open: " + std::strerror(e));
  }
  std::unique_ptr<LogFile> f(new LogFile());
  f->fd_ = fd;
  f->path_ = path;
  if (::fstat(fd, &st) != 0) {
    return Status::InvalidArgument(path + ": cannot stat: " + std::strerror(errno));
  }
  SM_RETURN_IF_ERROR(refuse(st.st_mode));
  f->device_ = st.st_dev;
  f->inode_ = st.st_ino;
  SM_ASSIGN_OR_RETURN(f->identity_, CaptureFileIdentity(fd, static_cast<uint64_t>(st.st_size)));
  return f;
}

LogFile::~LogFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status LogFile::ReadInto(uint64_t offset, char* out, size_t len) const {
  size_t done = 0;
  while (done < len) {
    const ssize_t n = ::pread(fd_, out + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::DataLoss(path_ + ": read error: " + std::strerror(errno));
    }
    if (n == 0) {
      return Status::DataLoss(path_ + ": truncated while it was read (log rotation?): it ends at " +
                              std::to_string(offset + done) + " of " + std::to_string(size()) +
                              " bytes");
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> LogFile::Read(uint64_t offset, size_t len) const {
  if (offset >= size()) return std::string();
  len = static_cast<size_t>(std::min<uint64_t>(len, size() - offset));
  std::string out(len, '\0');
  SM_RETURN_IF_ERROR(ReadInto(offset, out.data(), len));
  return out;
}

Status LogFile::CheckUnchanged() const { return CheckFileUnchanged(fd_, identity_, path_); }

namespace {
constexpr size_t kReadChunk = size_t{1} << 20;
}  // namespace

Status ForEachLineInFile(const LogFile& file, uint64_t begin, uint64_t end,
                         const std::function<void(std::string_view, uint64_t)>& fn) {
  end = std::min(end, file.size());
  std::string buf;
  // buf[i] is file byte buf_off + i, except while `skipping`: then buf holds the first
  // kMaxPhysicalLineBytes of a longer line that starts at buf_off, and the rest is dropped.
  uint64_t buf_off = begin;
  bool skipping = false;
  uint64_t pos = begin;
  while (pos < end) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kReadChunk, end - pos));
    const size_t carry = buf.size();
    buf.resize(carry + want);
    SM_RETURN_IF_ERROR(file.ReadInto(pos, buf.data() + carry, want));
    const uint64_t chunk_off = pos;
    pos += want;
    size_t start = 0;
    size_t search = carry;  // the carried bytes hold no '\n'
    if (skipping) {
      const void* nl = std::memchr(buf.data() + carry, '\n', want);
      if (nl == nullptr) {
        buf.resize(carry);
        continue;
      }
      fn(std::string_view(buf.data(), carry), buf_off);
      start = static_cast<size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
      search = start;
      buf_off = chunk_off - carry;  // buf[i] is file byte buf_off + i again for i >= carry
      skipping = false;
    }
    while (search < buf.size()) {
      const void* nl = std::memchr(buf.data() + search, '\n', buf.size() - search);
      if (nl == nullptr) break;
      const size_t e = static_cast<size_t>(static_cast<const char*>(nl) - buf.data());
      fn(std::string_view(buf.data() + start, e - start), buf_off + start);
      start = e + 1;
      search = start;
    }
    buf.erase(0, start);
    buf_off += start;
    if (buf.size() > kMaxPhysicalLineBytes) {
      buf.resize(kMaxPhysicalLineBytes);
      skipping = true;
    }
  }
  if (!buf.empty()) fn(buf, buf_off);
  return Status::Ok();
}

Result<uint64_t> NextLineStartInFile(const LogFile& file, uint64_t offset) {
  std::string buf;
  while (offset < file.size()) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(64 << 10, file.size() - offset));
    buf.resize(want);
    SM_RETURN_IF_ERROR(file.ReadInto(offset, buf.data(), want));
    if (const void* nl = std::memchr(buf.data(), '\n', want); nl != nullptr) {
      return offset + static_cast<uint64_t>(static_cast<const char*>(nl) - buf.data()) + 1;
    }
    offset += want;
  }
  return file.size();
}

Result<uint64_t> CountNewlinesInFile(const LogFile& file, uint64_t begin, uint64_t end) {
  end = std::min(end, file.size());
  std::string buf;
  uint64_t count = 0;
  while (begin < end) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kReadChunk, end - begin));
    buf.resize(want);
    SM_RETURN_IF_ERROR(file.ReadInto(begin, buf.data(), want));
    count += CountNewlines(buf);
    begin += want;
  }
  return count;
}

uint64_t CountNewlines(std::string_view data) {
  uint64_t count = 0;
  const char* p = data.data();
  const char* end = p + data.size();
  while (p < end) {
    const void* nl = memchr(p, '\n', static_cast<size_t>(end - p));
    if (!nl) break;
    ++count;
    p = static_cast<const char*>(nl) + 1;
  }
  return count;
}

FileFollower::FileFollower(std::string path, ReaderOptions options)
    : path_(std::move(path)), options_(options) {}

FileFollower::~FileFollower() {
  if (fd_ >= 0) ::close(fd_);
}

void FileFollower::ResetPosition() {
  head_.clear();
  offset_ = 0;
  line_start_ = 0;
  line_no_ = 1;
  pending_.clear();
  pending_emitted_ = 0;
}

void FileFollower::Reopen() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  // O_NONBLOCK: a FIFO put at the path must not block the open (it is then refused below).
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return;
  }
  fd_ = fd;
  inode_ = st.st_ino;
  device_ = st.st_dev;
  ResetPosition();
  if (first_open_ && start_at_end_) {
    // Skip existing content but keep absolute line numbers.
    char buf[1 << 16];
    uint64_t off = 0;
    while (off < static_cast<uint64_t>(st.st_size)) {
      ssize_t r = ::pread(fd_, buf, sizeof(buf), static_cast<off_t>(off));
      if (r <= 0) break;
      std::string_view chunk(buf, static_cast<size_t>(r));
      for (size_t k = 0; k < chunk.size(); ++k) {
        if (chunk[k] == '\n') {
          ++line_no_;
          line_start_ = off + k + 1;
        }
      }
      off += static_cast<uint64_t>(r);
    }
    offset_ = line_start_;
  }
  first_open_ = false;
}

// The first bytes already consumed, read again: different means the file was truncated and
// rewritten between two polls (copytruncate followed by new output), which the size alone misses.
bool FileFollower::HeadChanged() {
  if (head_.empty()) return false;
  std::string now(head_.size(), '\0');
  const ssize_t r = ::pread(fd_, now.data(), now.size(), 0);
  return r != static_cast<ssize_t>(now.size()) || now != head_;
}

void FileFollower::RememberHead() {
  constexpr size_t kHeadBytes = 64;
  if (head_.size() >= kHeadBytes || offset_ <= head_.size()) return;
  std::string head(static_cast<size_t>(std::min<uint64_t>(kHeadBytes, offset_)), '\0');
  const ssize_t r = ::pread(fd_, head.data(), head.size(), 0);
  if (r > 0) head_.assign(head.data(), static_cast<size_t>(r));
}

Status FileFollower::Poll(const LineFn& fn) {
  if (fd_ < 0) {
    Reopen();
    if (fd_ < 0) return Status::Ok();  // not there yet: wait
  }
  auto drain = [&]() {
    char buf[1 << 16];
    while (true) {
      ssize_t r = ::pread(fd_, buf, sizeof(buf), static_cast<off_t>(offset_));
      if (r <= 0) break;
      std::string_view chunk(buf, static_cast<size_t>(r));
      size_t pos = 0;
      while (pos < chunk.size()) {
        const void* nl = memchr(chunk.data() + pos, '\n', chunk.size() - pos);
        if (!nl) {
          pending_.append(chunk.data() + pos, chunk.size() - pos);
          break;
        }
        size_t end = static_cast<size_t>(static_cast<const char*>(nl) - chunk.data());
        pending_.append(chunk.data() + pos, end - pos);
        fn(std::string_view(pending_).substr(pending_emitted_), line_no_, line_start_, true);
        ++line_no_;
        line_start_ = offset_ + end + 1;
        pending_.clear();
        pending_emitted_ = 0;
        pos = end + 1;
      }
      offset_ += static_cast<uint64_t>(r);
      // States of the line still being written (tqdm bars): report up to the last '\r'.
      size_t cr = pending_.rfind('\r');
      if (cr != std::string::npos && cr + 1 > pending_emitted_) {
        fn(std::string_view(pending_).substr(pending_emitted_, cr + 1 - pending_emitted_), line_no_,
           line_start_, false);
        pending_.erase(0, cr + 1);
        pending_emitted_ = 0;
      }
      if (pending_.size() > options_.max_line_bytes * 2) {
        fn(pending_, line_no_, line_start_, false);
        pending_.clear();
        pending_emitted_ = 0;
      }
    }
  };
  struct stat st {};
  if ((::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) < offset_) || HeadChanged()) {
    ++truncations_;
    ResetPosition();
  }
  drain();
  RememberHead();
  struct stat pst {};
  if (::stat(path_.c_str(), &pst) == 0 && (pst.st_ino != inode_ || pst.st_dev != device_)) {
    // Rotated: finish the old file's last line, then follow the new file from its start.
    if (!pending_.empty()) fn(pending_, line_no_, line_start_, true);
    ++rotations_;
    Reopen();
    if (fd_ >= 0) {
      drain();
      RememberHead();
    }
  }
  return Status::Ok();
}

}  // namespace schedmate::tracker
