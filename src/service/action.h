#pragma once
// The closed sets of the companion's action path, shared by the planner (PlannedAction in
// ports.h), the store (service_store.h: the text columns of service_actions) and the API
// (api/json_codecs.h). Each value has one name, written and read in one place (action.cc); a
// stored name this build does not know is an error naming it, never a silent default.

#include <ostream>
#include <string_view>

#include "core/result.h"

namespace schedmate::service {

// What an action does. The recovery kinds (drain .. notify_admin) come from a failure's plan;
// resume comes from the API; priority and restore from the order mode.
enum class ActionKind {
  kDrainNode,    // "drain": scontrol update NodeName=... State=DRAIN
  kRequeue,      // "requeue": the failed job runs again (delay, excluded nodes)
  kHold,         // "hold": requeued held, for a person to release
  kNotifyUser,   // "notify": a notice for the job's user (a record, nothing runs)
  kNotifyAdmin,  // "notify_admin": a notice for the operators (a record)
  kResume,       // "resume": a node schedmate drained is resumed (API)
  kPriority,     // "priority": the order mode sets a pending job's priority
  kRestore,      // "restore": the order mode puts a job's original priority back
};
std::string_view ActionKindName(ActionKind k);
// kInvalidArgument naming `name` when it is none of the names above.
Result<ActionKind> ParseActionKind(std::string_view name);

// Where an action stands. Only kPlanned is replaced later (by the outcome of running it, or by
// kInterrupted at the next start when the process died in between).
enum class ActionOutcome {
  kPlanned,      // "planned": recorded, about to run
  kDone,         // "done"
  kDryRun,       // "dry-run": recorded with what it would do, Slurm untouched
  kSkipped,      // "skipped": policy or the job's state said no (detail says which)
  kFailed,       // "failed": Slurm refused (detail has its answer)
  kInterrupted,  // "interrupted": recorded, then schedmate stopped; never retried
  kNotRecorded,  // "not_recorded": its record could not be written, so it was not executed
};
std::string_view ActionOutcomeName(ActionOutcome o);
Result<ActionOutcome> ParseActionOutcome(std::string_view name);

// For test failure messages and logs.
inline std::ostream& operator<<(std::ostream& os, ActionKind k) { return os << ActionKindName(k); }
inline std::ostream& operator<<(std::ostream& os, ActionOutcome o) {
  return os << ActionOutcomeName(o);
}

}  // namespace schedmate::service
