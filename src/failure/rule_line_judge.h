#pragma once
// RuleLineJudge: the built-in LineJudge. Rationale: the locator only needs to know, for a chunk,
// whether any line belongs to a failure report, and for a small chunk, each line's role. Both
// follow from the signature knowledge base: a line's role is that of its highest-priority
// matching signature (benign warnings override everything). Chunk questions first run one
// multi-line RE2::Set pass over 64 KiB blocks and only look line by line inside blocks that
// may match, so a clean 100 MB chunk costs one linear DFA pass.
//
// Thread-safety: stateless apart from the referenced SignatureSet; safe for concurrent calls.

#include "failure/line_judge.h"
#include "failure/signature_set.h"

namespace schedmate::failure {

class RuleLineJudge : public LineJudge {
 public:
  static constexpr size_t kDefaultMaxScoringBytes = size_t{256} << 10;

  // `signatures` must be compiled and outlive the judge.
  explicit RuleLineJudge(const SignatureSet& signatures,
                         size_t max_scoring_bytes = kDefaultMaxScoringBytes);

  std::string_view Name() const override { return "builtin"; }
  Result<bool> ContainsFailure(const LogChunk& chunk) override;
  Result<std::vector<LineRole>> ScoreLines(const LogChunk& chunk) override;
  size_t MaxScoringBytes() const override { return max_scoring_bytes_; }

 private:
  const SignatureSet& signatures_;
  size_t max_scoring_bytes_;
};

// A Python traceback frame line: `File "x.py", line 12, in f` (any prefix).
bool IsPythonFrameLine(std::string_view line);
// True if the line, after one optional "[rank3]:" / "(pid=12)" prefix, starts with blanks and
// has content: the source-code line Python prints under a frame.
bool IsIndentedAfterPrefix(std::string_view line);

}  // namespace schedmate::failure
