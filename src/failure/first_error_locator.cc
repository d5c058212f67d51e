#include "failure/first_error_locator.h"

#include <algorithm>
#include <cstring>

namespace schedmate::failure {
namespace {

// A byte range [lo, hi) of the log.
struct Span {
  size_t lo = 0;
  size_t hi = 0;
};

// One line of the scored window.
struct WindowLine {
  std::string_view text;
  size_t offset;
};

// The judge calls of one Locate(): each ContainsFailure or ScoreLines call is counted, with its
// bytes, in `loc`.
class ChunkSearch {
 public:
  ChunkSearch(const LogView& log, LineJudge& judge, size_t initial_chunk_bytes, Location& loc)
      : log_(log), judge_(judge), initial_(initial_chunk_bytes), loc_(loc) {}

  Result<bool> Contains(size_t lo, size_t hi) {
    ++loc_.judge_calls;
    loc_.bytes_judged += hi - lo;
    return judge_.ContainsFailure(LogChunk{log_.data().substr(lo, hi - lo), lo});
  }

  // Phase 1: gallops back from the end to the last chunk holding failure lines; nullopt when
  // no chunk does.
  Result<std::optional<Span>> LastFailureChunk() {
    size_t size = initial_;
    size_t hi = log_.size();
    while (hi > 0) {
      size_t lo = ChunkStart(hi, size);
      SM_ASSIGN_OR_RETURN(bool has, Contains(lo, hi));
      if (has) return std::optional<Span>(Span{lo, hi});
      hi = lo;
      size = Doubled(size);
    }
    return std::optional<Span>();
  }

  // Phase 2: steps back from `found` while the preceding chunk also holds failure lines; the
  // earliest failure chunk.
  Result<Span> EarliestFailureChunk(Span found) {
    size_t size = initial_;
    size_t hi = found.lo;
    while (hi > 0) {
      size_t lo = ChunkStart(hi, size);
      SM_ASSIGN_OR_RETURN(bool has, Contains(lo, hi));
      if (!has) break;
      found = Span{lo, hi};
      hi = lo;
      size = Doubled(size);
    }
    return found;
  }

  // Phase 3: bisects `s` (which holds a failure) until it fits `budget` bytes or is one line.
  Result<Span> Bisect(Span s, size_t budget) {
    while (s.hi - s.lo > budget) {
      size_t mid = log_.NextLineStart(s.lo + (s.hi - s.lo) / 2);
      if (mid >= s.hi) mid = log_.LineStart(s.lo + (s.hi - s.lo) / 2);
      if (mid <= s.lo || mid >= s.hi) break;  // one line longer than the budget
      SM_ASSIGN_OR_RETURN(bool left, Contains(s.lo, mid));
      if (left) {
        s.hi = mid;
      } else {
        s.lo = mid;  // [lo, hi) holds a failure and [lo, mid) does not
      }
    }
    return s;
  }

 private:
  // Start of the chunk of about `size` bytes that ends at `hi` (a line start or n); always < hi.
  size_t ChunkStart(size_t hi, size_t size) const {
    return hi > size ? log_.LineStart(hi - size) : 0;
  }
  static size_t Doubled(size_t size) { return size > (SIZE_MAX >> 2) ? size : size * 2; }

  const LogView& log_;
  LineJudge& judge_;
  const size_t initial_;
  Location& loc_;
};

// The window scored in phase 4: from the start of the earliest failure chunk `s`, `budget`
// bytes cut at a line start (at least one line, and never short of `s.hi`).
LogChunk ScoringWindow(const LogView& log, Span s, size_t budget) {
  const size_t n = log.size();
  size_t wend = n;
  if (s.lo + budget < n) {
    wend = log.LineStart(s.lo + budget);
    if (wend <= s.lo) wend = std::min(n, log.LineEnd(s.lo) + 1);  // a single over-long line
  }
  wend = std::max(wend, s.hi);
  return LogChunk{log.data().substr(s.lo, wend - s.lo), s.lo};
}

// The earliest kOrigin line, else the earliest kWeak, kWrapper, kTrace; nullopt if none.
std::optional<size_t> PickRoot(const std::vector<LineRole>& roles, size_t count) {
  for (LineRole want : {LineRole::kOrigin, LineRole::kWeak, LineRole::kWrapper, LineRole::kTrace}) {
    for (size_t i = 0; i < count; ++i) {
      if (roles[i] == want) return i;
    }
  }
  return std::nullopt;
}

// The root's continuation, followers and preceding report lines, from the scored window.
void CollectEvidence(const std::vector<WindowLine>& lines, const std::vector<LineRole>& roles,
                     size_t count, size_t best, int64_t first_line_no,
                     const LocatorOptions& options, Location& loc) {
  auto located = [&](size_t i) {
    return LocatedLine{LogLine{first_line_no + static_cast<int64_t>(i), std::string(lines[i].text)},
                       roles[i], lines[i].offset};
  };
  std::string_view trimmed = lines[best].text;
  while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t')) {
    trimmed.remove_suffix(1);
  }
  if (!trimmed.empty() && trimmed.back() == ':' && best + 1 < lines.size()) {
    loc.root_continuation = std::string(lines[best + 1].text);
  }
  for (size_t i = best + 1;
       i < count && static_cast<int>(loc.followers.size()) < options.max_followers; ++i) {
    if (static_cast<int64_t>(i - best) > options.follower_horizon) break;
    if (roles[i] >= LineRole::kWrapper) loc.followers.push_back(located(i));
  }
  const size_t horizon = static_cast<size_t>(options.follower_horizon);
  for (size_t i = best > horizon ? best - horizon : 0; i < best; ++i) {
    if (roles[i] >= LineRole::kWrapper) loc.preceding.push_back(located(i));
  }
  if (static_cast<int>(loc.preceding.size()) > options.max_followers) {
    loc.preceding.erase(loc.preceding.begin(),
                        loc.preceding.end() - options.max_followers);  // keep the nearest
  }
}

// Context window around the root line: about half before, the rest after, clipped to the log.
void SetContext(const LogView& log, int64_t root_no, size_t root_offset, int64_t context_lines,
                Location& loc) {
  const std::string_view data = log.data();
  const size_t n = log.size();
  const int64_t before = (context_lines - 1) / 2;
  const int64_t after = context_lines - 1 - before;
  loc.context_first_line = std::max<int64_t>(1, root_no - before);
  int64_t last = root_no;
  size_t pos = root_offset;
  for (int64_t k = 0; k < after; ++k) {
    const void* nl = std::memchr(data.data() + pos, '\n', n - pos);
    if (nl == nullptr) break;
    pos = static_cast<size_t>(static_cast<const char*>(nl) - data.data()) + 1;
    if (pos >= n) break;  // the final '\n' does not start another line
    ++last;
  }
  loc.context_last_line = last;
}

}  // namespace

FirstErrorLocator::FirstErrorLocator(LineJudge& judge, LocatorOptions options)
    : judge_(judge), options_(options) {
  options_.initial_chunk_bytes = std::max<size_t>(options_.initial_chunk_bytes, 256);
  options_.context_lines = std::max<int64_t>(options_.context_lines, 1);
}

Result<Location> FirstErrorLocator::Locate(const LogView& log) const {
  Location loc;
  if (log.size() == 0) return loc;
  ChunkSearch search(log, judge_, options_.initial_chunk_bytes, loc);
  SM_ASSIGN_OR_RETURN(std::optional<Span> last, search.LastFailureChunk());
  if (!last) return loc;
  SM_ASSIGN_OR_RETURN(Span earliest, search.EarliestFailureChunk(*last));
  const size_t budget = std::max<size_t>(judge_.MaxScoringBytes(), 1);
  SM_ASSIGN_OR_RETURN(Span s, search.Bisect(earliest, budget));

  // Phase 4: score the window that starts at the first failure chunk.
  const LogChunk window = ScoringWindow(log, s, budget);
  ++loc.judge_calls;
  loc.bytes_judged += window.text.size();
  SM_ASSIGN_OR_RETURN(std::vector<LineRole> roles, judge_.ScoreLines(window));
  std::vector<WindowLine> lines;
  ForEachLine(window, [&](std::string_view line, size_t off) { lines.push_back({line, off}); });
  const size_t count = std::min(lines.size(), roles.size());
  const std::optional<size_t> best = PickRoot(roles, count);
  if (!best) return loc;

  const int64_t first_line_no = log.LineNumber(s.lo);
  const int64_t root_no = first_line_no + static_cast<int64_t>(*best);
  loc.root = LocatedLine{LogLine{root_no, std::string(lines[*best].text)}, roles[*best],
                         lines[*best].offset};
  CollectEvidence(lines, roles, count, *best, first_line_no, options_, loc);
  SetContext(log, root_no, loc.root->offset, options_.context_lines, loc);
  return loc;
}

}  // namespace schedmate::failure
