#include "service/ports.h"

namespace schedmate::service {

std::string_view FailureClassName(FailureClass c) {
  switch (c) {
    case FailureClass::kInfra:
      return "infra";
    case FailureClass::kApp:
      return "app";
    case FailureClass::kUnknown:
      return "unknown";
  }
  return "unknown";
}

Result<FailureClass> ParseFailureClass(std::string_view name) {
  for (FailureClass c : {FailureClass::kInfra, FailureClass::kApp, FailureClass::kUnknown}) {
    if (FailureClassName(c) == name) return c;
  }
  return Status::InvalidArgument("unknown failure class '" + std::string(name) + "'");
}

}  // namespace schedmate::service
