#pragma once
// SignatureSet: the failure handler's knowledge base of general failure signatures (regular
// expressions with a locator role, a label and a category) and the category table the recovery
// planner reads. Loaded from YAML (config/failure_signatures.yaml is compiled in as the default;
// operators add files, and an entry whose id exists replaces it). Matching uses one RE2::Set
// for all patterns, so a line costs one linear-time pass whatever the number of signatures.
//
// Thread-safety: after Compile(), const methods are safe for concurrent use.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/status.h"
#include "failure/diagnosis.h"
#include "failure/line_judge.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace schedmate::failure {

struct Signature {
  std::string id;
  LineRole role = LineRole::kOrigin;
  int priority = 50;
  FailureLabel label = FailureLabel::kUnknown;  // kUnknown: role only, says nothing of the class
  std::string category;
  double weight = 0.7;
  // A consequence of another failure (a peer or process went away: collective timeouts, resets):
  // when it is not the root cause, it speaks for the root cause's label, never against it.
  bool symptom = false;
  std::vector<std::string> patterns;
  std::string origin;  // "file:line" of the entry, for messages
};

struct CategoryInfo {
  std::string name;
  FailureLabel label = FailureLabel::kUnknown;
  bool drain = false;
  bool transient = false;
  std::string explanation;
  std::string hint;
};

// What the signatures say about one line.
struct LineMatch {
  LineRole role = LineRole::kNone;
  // The labelled signature that speaks for this line (highest priority, then weight, then file
  // order); -1 if no labelled signature matched or the line is benign.
  int labelled = -1;
};

class SignatureSet {
 public:
  SignatureSet();
  SignatureSet(SignatureSet&&) noexcept;
  SignatureSet& operator=(SignatureSet&&) noexcept;
  ~SignatureSet();

  // The compiled-in default knowledge base (config/failure_signatures.yaml), compiled.
  static Result<SignatureSet> Builtin();

  // Adds the entries of a YAML document. `source` names it in errors ("x.yaml:12: ...").
  // Invalidates a previous Compile().
  Status AddYaml(std::string_view yaml, std::string_view source);
  Status AddFile(const std::string& path);
  // Compiles every pattern; errors name the entry and the pattern.
  Status Compile();

  // REQUIRES: Compile() succeeded. Lines longer than kMaxLineBytes are matched in overlapping
  // windows of that size.
  LineMatch MatchLine(std::string_view line) const;
  // False only if no non-benign pattern can match anywhere in `text` (a fast pre-filter over
  // many lines at once); true means "look line by line".
  bool MayContainFailure(std::string_view text) const;

  const std::vector<Signature>& signatures() const { return signatures_; }
  // Category info by name; nullptr if the category has no entry.
  const CategoryInfo* FindCategory(std::string_view name) const;
  const std::map<std::string, CategoryInfo, std::less<>>& categories() const { return categories_; }

  static constexpr size_t kMaxLineBytes = size_t{1} << 20;

 private:
  struct Compiled;
  std::vector<Signature> signatures_;
  std::map<std::string, CategoryInfo, std::less<>> categories_;
  std::unique_ptr<Compiled> compiled_;
};

// `line` without ANSI escape sequences (terminal colours).
std::string StripAnsi(std::string_view line);

// The text of config/failure_signatures.yaml as compiled into the binary.
std::string_view BuiltinSignatureYaml();

}  // namespace schedmate::failure
