#include "failure/rule_line_judge.h"

#include <algorithm>

namespace schedmate::failure {

namespace {
constexpr size_t kBlockBytes = size_t{64} << 10;
}  // namespace

RuleLineJudge::RuleLineJudge(const SignatureSet& signatures, size_t max_scoring_bytes)
    : signatures_(signatures), max_scoring_bytes_(std::max<size_t>(max_scoring_bytes, 1024)) {}

Result<bool> RuleLineJudge::ContainsFailure(const LogChunk& chunk) {
  std::string_view text = chunk.text;
  size_t pos = 0;
  while (pos < text.size()) {
    // Blocks end at a line end so that every line is judged whole.
    size_t end = std::min(text.size(), pos + kBlockBytes);
    if (end < text.size()) {
      size_t nl = text.find('\n', end);
      end = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    std::string_view block = text.substr(pos, end - pos);
    if (signatures_.MayContainFailure(block)) {
      bool found = false;
      ForEachLine(LogChunk{block, chunk.begin + pos}, [&](std::string_view line, size_t) {
        if (!found && IsFailureRole(signatures_.MatchLine(line).role)) found = true;
      });
      if (found) return true;
    }
    pos = end;
  }
  return false;
}

Result<std::vector<LineRole>> RuleLineJudge::ScoreLines(const LogChunk& chunk) {
  std::vector<LineRole> roles;
  ForEachLine(chunk, [&](std::string_view line, size_t) {
    roles.push_back(signatures_.MatchLine(line).role);
  });
  return roles;
}

}  // namespace schedmate::failure
