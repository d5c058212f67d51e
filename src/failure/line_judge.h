#pragma once
// LineJudge: the classifier the locator consults while it bisects a log. One implementation is
// built in (RuleLineJudge, signature rules); an LLM-backed judge can implement the same two
// questions later, which is why the locator asks few, bounded questions: O(log n) calls per log.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace schedmate::failure {

// What a line is to the locator, weakest first. Order matters: the locator prefers kOrigin, then
// kWeak, then kWrapper as root cause; kTrace marks a failure report but never is the cause.
enum class LineRole : uint8_t {
  kNone = 0,  // ordinary output
  kBenign,    // a warning: explicitly not a failure
  kTrace,     // Traceback headers, stack frames, chained-exception separators
  kWrapper,   // re-raise / launcher summary of another error
  kWeak,      // an error that is usually a consequence (timeouts, generic ERROR lines)
  kOrigin,    // states an originating error
};
std::string_view LineRoleName(LineRole role);
// True for roles that belong to a failure report (kTrace and stronger).
inline bool IsFailureRole(LineRole r) { return r >= LineRole::kTrace; }

// A run of whole lines of a log: `text` starts at a line start and ends after a '\n' or at the end
// of the log. `begin` is the byte offset of text[0] in the log.
struct LogChunk {
  std::string_view text;
  size_t begin = 0;
};

// Splits a chunk into lines (without '\n' and a trailing '\r'); calls fn(line, offset_in_log).
template <typename Fn>
void ForEachLine(const LogChunk& chunk, Fn&& fn) {
  size_t pos = 0;
  const std::string_view t = chunk.text;
  while (pos < t.size()) {
    size_t nl = t.find('\n', pos);
    size_t end = nl == std::string_view::npos ? t.size() : nl;
    std::string_view line = t.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(line, chunk.begin + pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
}

class LineJudge {
 public:
  virtual ~LineJudge() = default;
  // Stable name used in output ("builtin", "llm:<model>").
  virtual std::string_view Name() const = 0;
  // Does `chunk` hold at least one line of a failure report (a role of kTrace or stronger)?
  // The chunk may be large (up to the whole log); implementations may sample or summarise it
  // but must not claim a failure that is not there.
  virtual Result<bool> ContainsFailure(const LogChunk& chunk) = 0;
  // The role of every line of `chunk`, in order (one entry per line as ForEachLine splits it).
  // REQUIRES: chunk.text.size() <= MaxScoringBytes() (or the chunk is a single line).
  virtual Result<std::vector<LineRole>> ScoreLines(const LogChunk& chunk) = 0;
  // The largest chunk ScoreLines accepts; the locator bisects until a chunk fits.
  virtual size_t MaxScoringBytes() const = 0;
};

}  // namespace schedmate::failure
