#pragma once
// FirstErrorLocator: finds the root-cause line of a failed job's log, the first line stating the
// ORIGINATING error rather than the cascade after it, by bisection over log chunks guided by a
// LineJudge (after the SchedMate paper's failure handler).
//
// Rationale. A failed job's log ends in its failure report; the report starts at the originating
// error and continues with the cascade (chained exceptions, re-raises, other ranks timing out,
// launcher and scheduler summaries). The locator therefore
//   1. gallops backwards from the end over chunks of doubling size until a chunk holds failure
//      lines (the end of the report),
//   2. keeps stepping back, again with doubling chunks, while the preceding chunk holds failure
//      lines; the first clean chunk is the gap before the report (gap tolerance = chunk size),
//   3. bisects the earliest failure chunk down to one that fits the judge's scoring budget
//      (one ContainsFailure call per halving),
//   4. asks the judge for the role of every line of that window (one call) and takes the earliest
//      kOrigin line, else the earliest kWeak, else the earliest kWrapper (so a DataLoader
//      re-raise, a watchdog cascade or a torchrun summary is the answer only when the log holds
//      nothing better), else the first kTrace line.
// Each phase makes O(log n) judge calls and reads only the bytes of the chunks it asks about;
// the one full pass is counting newlines before the root cause for its line number.
//
// Thread-safety: Locate() is const but calls the judge, which need not be thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/result.h"
#include "failure/diagnosis.h"
#include "failure/line_judge.h"
#include "failure/log_view.h"

namespace schedmate::failure {

struct LocatorOptions {
  size_t initial_chunk_bytes = size_t{64} << 10;  // first gallop step, doubled each step
  int64_t context_lines = 500;                    // size of the context window around the root
  int max_followers = 20;          // failure lines after the root passed on as evidence
  int64_t follower_horizon = 200;  // ... looked for within this many lines after the root
};

struct LocatedLine {
  LogLine line;
  LineRole role = LineRole::kNone;
  size_t offset = 0;  // byte offset of the line start
};

struct Location {
  std::optional<LocatedLine> root;  // nullopt: the log holds no failure report
  // The physical line after the root, when the root ends with ':' (a message split over two
  // lines, "killed by signal:" / "Bus error. ..."); empty otherwise.
  std::string root_continuation;
  std::vector<LocatedLine> followers;  // failure lines (wrapper or stronger) after the root
  std::vector<LocatedLine> preceding;  // wrapper/weak lines of the report before the root
  int64_t context_first_line = 0;      // 1-based inclusive; 0 when there is no root
  int64_t context_last_line = 0;
  int judge_calls = 0;
  size_t bytes_judged = 0;  // bytes of all chunks handed to the judge
};

class FirstErrorLocator {
 public:
  FirstErrorLocator(LineJudge& judge, LocatorOptions options = {});

  // Errors only come from the judge (e.g. an LLM judge that is unavailable).
  Result<Location> Locate(const LogView& log) const;

 private:
  LineJudge& judge_;
  LocatorOptions options_;
};

}  // namespace schedmate::failure
