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

}  // namespace schedmate::service
