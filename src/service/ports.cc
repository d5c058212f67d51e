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

std::string_view PlannedActionKindName(PlannedAction::Kind k) {
  switch (k) {
    case PlannedAction::Kind::kDrainNode:
      return "drain";
    case PlannedAction::Kind::kRequeue:
      return "requeue";
    case PlannedAction::Kind::kHold:
      return "hold";
    case PlannedAction::Kind::kNotifyUser:
      return "notify";
    case PlannedAction::Kind::kNotifyAdmin:
      return "notify_admin";
  }
  return "notify";
}

}  // namespace schedmate::service
