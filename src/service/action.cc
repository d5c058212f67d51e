#include "service/action.h"

#include <array>
#include <string>
#include <utility>

namespace schedmate::service {
namespace {

// One table per set: the names as stored in service_actions and shown by the API.
constexpr std::array<std::pair<ActionKind, std::string_view>, 8> kKindNames{{
    {ActionKind::kDrainNode, "drain"},
    {ActionKind::kRequeue, "requeue"},
    {ActionKind::kHold, "hold"},
    {ActionKind::kNotifyUser, "notify"},
    {ActionKind::kNotifyAdmin, "notify_admin"},
    {ActionKind::kResume, "resume"},
    {ActionKind::kPriority, "priority"},
    {ActionKind::kRestore, "restore"},
}};

constexpr std::array<std::pair<ActionOutcome, std::string_view>, 7> kOutcomeNames{{
    {ActionOutcome::kPlanned, "planned"},
    {ActionOutcome::kDone, "done"},
    {ActionOutcome::kDryRun, "dry-run"},
    {ActionOutcome::kSkipped, "skipped"},
    {ActionOutcome::kFailed, "failed"},
    {ActionOutcome::kInterrupted, "interrupted"},
    {ActionOutcome::kNotRecorded, "not_recorded"},
}};

template <typename E, size_t N>
std::string_view NameIn(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";  // unreachable: every enumerator is in its table (tests check)
}

template <typename E, size_t N>
Result<E> ParseIn(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view name,
                  std::string_view what) {
  for (const auto& [v, n] : table)
    if (n == name) return v;
  return Status::InvalidArgument("unknown " + std::string(what) + " '" + std::string(name) + "'");
}

}  // namespace

std::string_view ActionKindName(ActionKind k) { return NameIn(kKindNames, k); }
Result<ActionKind> ParseActionKind(std::string_view name) {
  return ParseIn(kKindNames, name, "action kind");
}
std::string_view ActionOutcomeName(ActionOutcome o) { return NameIn(kOutcomeNames, o); }
Result<ActionOutcome> ParseActionOutcome(std::string_view name) {
  return ParseIn(kOutcomeNames, name, "action outcome");
}

}  // namespace schedmate::service
