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
  bool prev_frame = false;
  ForEachLine(chunk, [&](std::string_view line, size_t) {
    // The indented line after a Python frame is that frame's source code: it may quote an
    // error message (`raise ValueError("NaN loss")`) but states nothing itself.
    if (prev_frame && IsIndentedAfterPrefix(line)) {
      roles.push_back(LineRole::kTrace);
      prev_frame = false;
      return;
    }
    prev_frame = IsPythonFrameLine(line);
    roles.push_back(signatures_.MatchLine(line).role);
  });
  return roles;
}

bool IsPythonFrameLine(std::string_view line) {
  size_t f = line.find("File \"");
  if (f == std::string_view::npos) f = line.find("File '");
  return f != std::string_view::npos && line.find(", line ", f) != std::string_view::npos;
}

bool IsIndentedAfterPrefix(std::string_view line) {
  // Skip one "[rank3]:" / "(pid=12)" style prefix that launchers put before every line.
  if (!line.empty() && (line.front() == '[' || line.front() == '(')) {
    char close = line.front() == '[' ? ']' : ')';
    size_t e = line.find(close);
    if (e != std::string_view::npos && e < 64) {
      line.remove_prefix(e + 1);
      if (!line.empty() && line.front() == ':') line.remove_prefix(1);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    }
  }
  return line.size() >= 2 && (line[0] == ' ' || line[0] == '\t') &&
         line.find_first_not_of(" \t") != std::string_view::npos;
}

}  // namespace schedmate::failure
