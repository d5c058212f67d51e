#pragma once
// Recovery plans as values: what should happen after a failed job, for the Slurm helper (or any
// executor) to carry out. The failure handler only plans; it never acts.
//
// A plan is an ordered list of actions; an executor runs them in order and may stop at the first
// one it cannot perform. Every action carries a reason meant for people (logs, notifications).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sim_time.h"

namespace schedmate::failure {

struct RecoveryAction {
  enum class Kind {
    kDrainNode,  // take `node` out of service (scontrol update state=drain reason=...)
    kRequeue,  // requeue the job after `delay`, from `checkpoint` if set, avoiding `exclude_nodes`
    kHold,     // keep the job queued but not eligible until a person releases it
    kNotifyUser,   // tell the job's owner `reason`, with `hint` as the next step
    kNotifyAdmin,  // tell the operators `reason` (nodes to check, repeated failures)
  };
  Kind kind = Kind::kNotifyUser;
  std::string node;                        // kDrainNode
  std::string reason;                      // every kind
  std::string hint;                        // kNotifyUser / kNotifyAdmin: concrete next step
  std::optional<std::string> checkpoint;   // kRequeue: resume from here (path as in the log)
  Duration delay = Duration::Zero();       // kRequeue: wait this long before requeueing
  int attempt = 0;                         // kRequeue: 1-based retry number
  std::vector<std::string> exclude_nodes;  // kRequeue: nodes the retry must avoid
};

// "drain_node", "requeue", "hold", "notify_user", "notify_admin".
std::string_view RecoveryActionKindName(RecoveryAction::Kind kind);

using RecoveryPlan = std::vector<RecoveryAction>;

// What the planner knows about the job besides its log.
struct JobContext {
  std::string job_id;
  std::vector<std::string> nodes;         // the job's allocation (Slurm NodeList, expanded)
  int restarts = 0;                       // requeues of this job so far
  std::optional<std::string> checkpoint;  // newest checkpoint found in the job dir, if any
};

struct RecoveryPolicy {
  int max_infra_retries = 3;                      // requeues before holding for a person
  Duration backoff_base = Duration::Seconds(60);  // delay of the first retry; doubles per retry
  Duration backoff_cap = Duration::Minutes(30);
  bool drain_suspect_nodes = true;  // drain nodes the diagnosis implicates
};

}  // namespace schedmate::failure
