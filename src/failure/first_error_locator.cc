#include "failure/first_error_locator.h"

#include <algorithm>
#include <cstring>

namespace schedmate::failure {

FirstErrorLocator::FirstErrorLocator(LineJudge& judge, LocatorOptions options)
    : judge_(judge), options_(options) {
  options_.initial_chunk_bytes = std::max<size_t>(options_.initial_chunk_bytes, 256);
  options_.context_lines = std::max<int64_t>(options_.context_lines, 1);
}

Result<Location> FirstErrorLocator::Locate(const LogView& log) const {
  Location loc;
  const size_t n = log.size();
  if (n == 0) return loc;
  const std::string_view data = log.data();

  auto contains = [&](size_t lo, size_t hi) -> Result<bool> {
    ++loc.judge_calls;
    loc.bytes_judged += hi - lo;
    return judge_.ContainsFailure(LogChunk{data.substr(lo, hi - lo), lo});
  };
  // Start of the chunk of about `size` bytes that ends at `hi` (a line start or n); always < hi.
  auto chunk_start = [&](size_t hi, size_t size) -> size_t {
    return hi > size ? log.LineStart(hi - size) : 0;
  };

  // 1. Gallop back from the end to the last chunk holding failure lines.
  size_t size = options_.initial_chunk_bytes;
  size_t hi = n;
  size_t found_lo = 0, found_hi = 0;
  bool found = false;
  while (hi > 0) {
    size_t lo = chunk_start(hi, size);
    SM_ASSIGN_OR_RETURN(bool has, contains(lo, hi));
    if (has) {
      found_lo = lo;
      found_hi = hi;
      found = true;
      break;
    }
    hi = lo;
    size = size > (SIZE_MAX >> 2) ? size : size * 2;
  }
  if (!found) return loc;

  // 2. Step back while the preceding chunk also holds failure lines.
  size = options_.initial_chunk_bytes;
  hi = found_lo;
  while (hi > 0) {
    size_t lo = chunk_start(hi, size);
    SM_ASSIGN_OR_RETURN(bool has, contains(lo, hi));
    if (!has) break;
    found_lo = lo;
    found_hi = hi;
    hi = lo;
    size = size > (SIZE_MAX >> 2) ? size : size * 2;
  }

  // 3. Bisect the earliest failure chunk until it fits the scoring budget.
  const size_t budget = std::max<size_t>(judge_.MaxScoringBytes(), 1);
  size_t lo = found_lo;
  hi = found_hi;
  while (hi - lo > budget) {
    size_t mid = log.NextLineStart(lo + (hi - lo) / 2);
    if (mid >= hi) mid = log.LineStart(lo + (hi - lo) / 2);
    if (mid <= lo || mid >= hi) break;  // one line longer than the budget
    SM_ASSIGN_OR_RETURN(bool left, contains(lo, mid));
    if (left) {
      hi = mid;
    } else {
      lo = mid;  // [lo, hi) holds a failure and [lo, mid) does not
    }
  }

  // 4. Score the window that starts at the first failure chunk.
  size_t wend = n;
  if (lo + budget < n) {
    wend = log.LineStart(lo + budget);
    if (wend <= lo) wend = std::min(n, log.LineEnd(lo) + 1);  // a single over-long line
  }
  wend = std::max(wend, hi);
  LogChunk window{data.substr(lo, wend - lo), lo};
  ++loc.judge_calls;
  loc.bytes_judged += window.text.size();
  SM_ASSIGN_OR_RETURN(std::vector<LineRole> roles, judge_.ScoreLines(window));

  struct WindowLine {
    std::string_view text;
    size_t offset;
  };
  std::vector<WindowLine> lines;
  ForEachLine(window, [&](std::string_view line, size_t off) { lines.push_back({line, off}); });
  const size_t count = std::min(lines.size(), roles.size());

  std::optional<size_t> best;
  for (LineRole want : {LineRole::kOrigin, LineRole::kWeak, LineRole::kWrapper, LineRole::kTrace}) {
    for (size_t i = 0; i < count; ++i) {
      if (roles[i] == want) {
        best = i;
        break;
      }
    }
    if (best) break;
  }
  if (!best) return loc;

  const int64_t first_line_no = log.LineNumber(lo);
  const int64_t root_no = first_line_no + static_cast<int64_t>(*best);
  LocatedLine root;
  root.line = LogLine{root_no, std::string(lines[*best].text)};
  root.role = roles[*best];
  root.offset = lines[*best].offset;
  loc.root = std::move(root);
  std::string_view trimmed = lines[*best].text;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) {
    trimmed.remove_suffix(1);
  }
  if (!trimmed.empty() && trimmed.back() == ':' && *best + 1 < lines.size()) {
    loc.root_continuation = std::string(lines[*best + 1].text);
  }

  for (size_t i = *best + 1;
       i < count && static_cast<int>(loc.followers.size()) < options_.max_followers; ++i) {
    if (static_cast<int64_t>(i - *best) > options_.follower_horizon) break;
    if (roles[i] >= LineRole::kWrapper) {
      loc.followers.push_back(
          LocatedLine{LogLine{first_line_no + static_cast<int64_t>(i), std::string(lines[i].text)},
                      roles[i], lines[i].offset});
    }
  }

  for (size_t i = *best > static_cast<size_t>(options_.follower_horizon)
                      ? *best - static_cast<size_t>(options_.follower_horizon)
                      : 0;
       i < *best; ++i) {
    if (roles[i] >= LineRole::kWrapper) {
      loc.preceding.push_back(
          LocatedLine{LogLine{first_line_no + static_cast<int64_t>(i), std::string(lines[i].text)},
                      roles[i], lines[i].offset});
    }
  }
  if (static_cast<int>(loc.preceding.size()) > options_.max_followers) {
    loc.preceding.erase(loc.preceding.begin(),
                        loc.preceding.end() - options_.max_followers);  // keep the nearest
  }

  // Context window: about half before, the rest after, clipped to the log.
  const int64_t before = (options_.context_lines - 1) / 2;
  const int64_t after = options_.context_lines - 1 - before;
  loc.context_first_line = std::max<int64_t>(1, root_no - before);
  int64_t last = root_no;
  size_t pos = loc.root->offset;
  for (int64_t k = 0; k < after; ++k) {
    const void* nl = std::memchr(data.data() + pos, '\n', n - pos);
    if (nl == nullptr) break;
    pos = static_cast<size_t>(static_cast<const char*>(nl) - data.data()) + 1;
    if (pos >= n) break;  // the final '\n' does not start another line
    ++last;
  }
  loc.context_last_line = last;
  return loc;
}

}  // namespace schedmate::failure
