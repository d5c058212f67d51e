#pragma once
// FailureClassifier: the interface that turns a located failure report into infrastructure vs
// application, a finer category, a confidence and the evidence lines. The built-in engine is
// SignatureClassifier (signatures + the site's examples); an LLM-backed classifier can implement
// the same call (one question per failure) and be passed to FailureHandler.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "failure/diagnosis.h"
#include "failure/first_error_locator.h"

namespace schedmate::failure {

// What the locator found: the root-cause line and the report around it. Views; valid during the
// call only.
struct FailureReport {
  const LocatedLine& root;
  std::span<const LocatedLine> followers;  // failure lines after the root (cascade)
  std::span<const LocatedLine> preceding;  // wrapper/weak lines of the report before the root
  std::string_view continuation;           // next line if the root's message continues there
};

struct Classification {
  FailureLabel label = FailureLabel::kUnknown;
  std::string category;     // best guess even when the label is kUnknown; "" if nothing matched
  double confidence = 0.0;  // 0..1; an implementation returns kUnknown below its threshold
  std::vector<Evidence> evidence;
  std::string decided_by;  // e.g. "signature:<id>", "examples", "llm:<model>"; "" if nothing
};

class FailureClassifier {
 public:
  virtual ~FailureClassifier() = default;
  // Stable engine name for output ("builtin").
  virtual std::string_view Name() const = 0;
  // Errors only for engines that can fail (an unreachable LLM); the caller may fall back.
  virtual Result<Classification> Classify(const FailureReport& report) const = 0;
};

}  // namespace schedmate::failure
