#include "failure/log_view.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace schedmate::failure {

Result<LogView> LogView::OpenFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::DataLoss(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::DataLoss(path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  LogView view;
  size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return Status::DataLoss(path + ": cannot map: " + std::strerror(err));
    }
    // The locator reads the tail first and jumps backwards; random access is the honest hint.
    ::madvise(map, size, MADV_RANDOM);
    view.map_ = map;
    view.map_size_ = size;
    view.data_ = static_cast<const char*>(map);
    view.size_ = size;
  }
  ::close(fd);
  return view;
}

LogView LogView::FromString(std::string text) {
  LogView view;
  view.owned_ = std::move(text);
  view.data_ = view.owned_.data();
  view.size_ = view.owned_.size();
  return view;
}

LogView::LogView(LogView&& other) noexcept { *this = std::move(other); }

LogView& LogView::operator=(LogView&& other) noexcept {
  if (this == &other) return *this;
  Release();
  map_ = std::exchange(other.map_, nullptr);
  map_size_ = std::exchange(other.map_size_, 0);
  size_ = std::exchange(other.size_, 0);
  if (map_ != nullptr) {
    data_ = static_cast<const char*>(map_);
  } else {
    owned_ = std::move(other.owned_);
    data_ = owned_.data();
  }
  other.data_ = nullptr;
  return *this;
}

LogView::~LogView() { Release(); }

void LogView::Release() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  data_ = nullptr;
  size_ = 0;
  owned_.clear();
}

size_t LogView::LineStart(size_t offset) const {
  offset = std::min(offset, size_);
  if (offset == 0) return 0;
  const void* p = ::memrchr(data_, '\n', offset);
  return p == nullptr ? 0 : static_cast<size_t>(static_cast<const char*>(p) - data_) + 1;
}

size_t LogView::NextLineStart(size_t offset) const {
  if (offset == 0) return 0;
  if (offset >= size_) return size_;
  if (data_[offset - 1] == '\n') return offset;
  const void* p = std::memchr(data_ + offset, '\n', size_ - offset);
  return p == nullptr ? size_ : static_cast<size_t>(static_cast<const char*>(p) - data_) + 1;
}

size_t LogView::LineEnd(size_t start) const {
  if (start >= size_) return size_;
  const void* p = std::memchr(data_ + start, '\n', size_ - start);
  return p == nullptr ? size_ : static_cast<size_t>(static_cast<const char*>(p) - data_);
}

std::string_view LogView::LineAt(size_t offset) const {
  size_t start = LineStart(offset);
  size_t end = LineEnd(start);
  if (end > start && data_[end - 1] == '\r') --end;
  return {data_ + start, end - start};
}

int64_t LogView::LineNumber(size_t offset) const {
  return 1 + CountNewlines({data_, std::min(offset, size_)});
}

int64_t CountNewlines(std::string_view text) {
  // A plain counting loop over bytes; GCC vectorises it, which beats hopping with memchr on
  // logs with short lines.
  int64_t n = 0;
  for (char c : text) n += (c == '\n');
  return n;
}

}  // namespace schedmate::failure
