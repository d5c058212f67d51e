#pragma once
// Slurm's pending-reason codes in plain words (config/slurm_pending_reasons.yaml, compiled in).
//
// A reason is looked up as squeue gives it: the code, optionally followed by details after a
// comma ("ReqNodeNotAvail, UnavailableNodes:gpu1"). Explicit codes come from the file's list;
// limit codes are read as a family — <scope><Grp|Max|Min><resource>[Mins|Minutes|RunMinutes]
// [PerJob|PerNode|PerUser][Limit|NotSatisfied] with scope Assoc or QOS, and Max<resource>PerAccount
// — so AssocGrpGRES, QOSMaxWallDurationPerJobLimit or a newer code of the same shape get words
// composed from their parts. Anything else is returned as Slurm wrote it (known = false).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace schedmate::service {

enum class ReasonKind {
  kResources,    // not enough free GPUs/nodes now
  kPriority,     // higher-priority jobs first
  kDependency,   // another job must reach a state
  kBeginTime,    // a start time not reached
  kHeld,         // held by a user or an admin
  kPartition,    // the partition's state or limits
  kNodes,        // required nodes unavailable
  kReservation,  // an advanced reservation
  kAccount,      // account/QOS invalid or not allowed
  kLimitGroup,   // an aggregate limit already in use by other jobs
  kLimitJob,     // the request itself is over (or under) a limit
  kTransient,    // being set up; wait
  kFailure,      // the job failed and was requeued/held
  kUnknown,
};
std::string_view ReasonKindName(ReasonKind k);  // "resources", "limit_group", ...

struct ReasonInfo {
  std::string code;    // "AssocGrpGRES"
  std::string detail;  // what followed the code after a comma ("UnavailableNodes:gpu1")
  ReasonKind kind = ReasonKind::kUnknown;
  std::string words;   // plain words
  bool known = false;  // false: shown as Slurm wrote it
  // Limit families only:
  std::string scope;     // "Assoc", "QOS" or "Account"
  std::string limit;     // "Grp", "Max" or "Min"
  std::string resource;  // as in the code: "GRES", "WallDuration", "Cpu", ...
  std::string per;       // "PerJob", "PerNode", "PerUser", "PerAccount" or ""
  bool minutes = false;  // a resource x minutes limit
};

class ReasonCatalogue {
 public:
  // Parses the YAML of config/slurm_pending_reasons.yaml; errors name `source` and the line.
  static Result<ReasonCatalogue> Parse(std::string_view yaml, std::string_view source);
  // The compiled-in catalogue (checked by tests; parsing it cannot fail at run time).
  static const ReasonCatalogue& Builtin();

  ReasonInfo Lookup(std::string_view reason) const;
  size_t explicit_count() const { return explicit_.size(); }

 private:
  struct Entry {
    ReasonKind kind;
    std::string words;
  };
  bool ReadFamily(const std::string& code, ReasonInfo& info) const;
  std::map<std::string, Entry> explicit_;
  std::map<std::string, std::string> scopes_;     // "Assoc" -> words
  std::map<std::string, std::string> resources_;  // "GRES" -> words
};

// The embedded file (generated from config/slurm_pending_reasons.yaml).
std::string_view BuiltinPendingReasonsYaml();

}  // namespace schedmate::service
