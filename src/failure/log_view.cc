#include "failure/log_view.h"

#include <sys/mman.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace schedmate::failure {

Result<LogView> LogView::OpenFile(const std::string& path) {
  SM_ASSIGN_OR_RETURN(std::unique_ptr<GuardedMapping> map, GuardedMapping::Open(path));
  LogView view;
  view.size_ = map->data().size();
  if (view.size_ > 0) {
    // The locator reads the tail first and jumps backwards; random access is the honest hint.
    ::madvise(const_cast<char*>(map->data().data()), view.size_, MADV_RANDOM);
    view.data_ = map->data().data();
  }
  view.map_ = std::move(map);
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
  map_ = std::move(other.map_);
  size_ = std::exchange(other.size_, 0);
  if (map_ != nullptr) {
    data_ = map_->data().data();
  } else {
    owned_ = std::move(other.owned_);
    data_ = owned_.data();
  }
  other.data_ = nullptr;
  return *this;
}

LogView::~LogView() { Release(); }

void LogView::Release() {
  map_.reset();
  data_ = nullptr;
  size_ = 0;
  owned_.clear();
}

Status LogView::CheckIntact() const { return map_ == nullptr ? Status::Ok() : map_->CheckIntact(); }

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
  offset = std::min(offset, size_);
  if (map_ == nullptr) return 1 + CountNewlines({data_, offset});
  // Count a mapped file in windows and drop each window's page mappings afterwards: the pages
  // stay in the page cache, but the process does not hold the whole file resident.
  constexpr size_t kWindow = size_t{32} << 20;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  int64_t count = 0;
  size_t pos = 0;
  while (pos < offset) {
    size_t end = std::min(offset, pos + kWindow);
    count += CountNewlines({data_ + pos, end - pos});
    size_t release_end = end / page * page;  // whole pages only; pos is page-aligned
    if (release_end > pos) {
      ::madvise(const_cast<char*>(data_) + pos, release_end - pos, MADV_DONTNEED);
    }
    pos = end;
  }
  return 1 + count;
}

int64_t CountNewlines(std::string_view text) {
  const char* p = text.data();
  size_t n = text.size();
  int64_t count = 0;
#if defined(__SSE2__)
  // 16 bytes per step: compare with '\n' (0xFF per hit), subtract into byte counters, and fold
  // them with psadbw before they can overflow (at most 255 steps).
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (n >= 16) {
    size_t steps = std::min<size_t>(n / 16, 255);
    __m128i acc = zero;
    for (size_t k = 0; k < steps; ++k) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
      p += 16;
    }
    __m128i sums = _mm_sad_epu8(acc, zero);
    count += _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
    n -= steps * 16;
  }
#endif
  for (size_t k = 0; k < n; ++k) count += (p[k] == '\n');
  return count;
}

}  // namespace schedmate::failure
