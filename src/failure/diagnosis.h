#pragma once
// Value types of a failure diagnosis: what the failure handler returns and the recovery planner
// (and the Slurm helper) consume. Plain data, no behaviour beyond naming.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace schedmate::failure {

// Whose fault a failure is. kUnknown: the handler is not sure; never act on it automatically.
enum class FailureLabel { kUnknown, kInfrastructure, kApplication };

// "infrastructure" | "application" | "unknown".
std::string_view FailureLabelName(FailureLabel label);
// Parses the names above (also "infra" / "app"); nullopt otherwise.
std::optional<FailureLabel> ParseFailureLabel(std::string_view name);

// One physical line of the log.
struct LogLine {
  int64_t line_no = 0;  // 1-based
  std::string text;
};

// A line that supports the classification, with the rule (or "example:<n>") that read it.
struct Evidence {
  int64_t line_no = 0;
  std::string text;
  std::string source;  // signature id, or "examples" for the nearest-neighbour model
};

struct Diagnosis {
  // The first line stating the originating error; nullopt when the log shows no failure.
  std::optional<LogLine> root_cause;
  FailureLabel label = FailureLabel::kUnknown;
  std::string category;            // e.g. "gpu_hardware", "cuda_oom"; empty when nothing was found
  double confidence = 0.0;         // 0..1; below the classifier's threshold the label is kUnknown
  std::vector<Evidence> evidence;  // root line first when it carried a signature
  std::string explanation;         // one sentence for people (from the category table)
  std::string hint;                // a concrete next step (from the category table)
  bool drain_suspect = false;      // the category implicates the node (hardware, driver)
  bool transient = false;          // a retry on other or the same resources can succeed
  // Context window around the root cause (1-based, inclusive); 0/0 when there is no root cause.
  int64_t context_first_line = 0;
  int64_t context_last_line = 0;
  std::vector<std::string> nodes;         // node names mentioned near the failure, sorted
  std::optional<std::string> checkpoint;  // latest checkpoint the log says was saved
  int classifier_calls = 0;               // judge calls (locator probes + scoring + classify)
  std::string engine = "builtin";
};

}  // namespace schedmate::failure
