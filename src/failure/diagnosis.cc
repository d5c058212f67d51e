#include "failure/diagnosis.h"

#include "core/strings.h"
#include "failure/line_judge.h"

namespace schedmate::failure {

std::string_view FailureLabelName(FailureLabel label) {
  switch (label) {
    case FailureLabel::kInfrastructure:
      return "infrastructure";
    case FailureLabel::kApplication:
      return "application";
    case FailureLabel::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<FailureLabel> ParseFailureLabel(std::string_view name) {
  std::string s = ToLower(Trim(name));
  if (s == "infrastructure" || s == "infra") return FailureLabel::kInfrastructure;
  if (s == "application" || s == "app") return FailureLabel::kApplication;
  if (s == "unknown") return FailureLabel::kUnknown;
  return std::nullopt;
}

std::string_view LineRoleName(LineRole role) {
  switch (role) {
    case LineRole::kNone:
      return "none";
    case LineRole::kBenign:
      return "benign";
    case LineRole::kTrace:
      return "trace";
    case LineRole::kWrapper:
      return "wrapper";
    case LineRole::kWeak:
      return "weak";
    case LineRole::kOrigin:
      return "origin";
  }
  return "none";
}

}  // namespace schedmate::failure
