#pragma once
// PolicyRegistry: policies by name, registered explicitly (no static self-registration, which
// static libraries silently drop). RegisterBuiltinPolicies() is the one visible list.
//
// A factory builds one policy instance per partition from a PolicyConfig. Registering a name
// twice fails with kAlreadyExists. Not thread-safe for registration; Create() is const.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/duration_estimator.h"
#include "core/result.h"
#include "core/status.h"
#include "policy/colocation_model.h"
#include "policy/named_registry.h"
#include "policy/placer.h"
#include "policy/scheduling_policy.h"

namespace schedmate::policy {

struct SlurmConfig;  // policy/slurm_config.h

// Everything a built-in policy may need. Pointers are not owned and must outlive the policies.
struct PolicyConfig {
  PlacementKind placement = PlacementKind::kConsolidate;
  // Follow Lucid's policy semantics exactly (queue tie rules, QSSF's first-step order, ...).
  bool lucid_compat = false;
  // Duration estimates for qssf, lucid and schedmate; may be null (then: JobRecord::estimate,
  // else the true duration for sjf-like use is NOT taken: see each policy's comment).
  DurationEstimator* estimator = nullptr;
  // Co-location measurements for lucid and schedmate; may be null (utilisation model).
  const ColocationModel* colocation = nullptr;
  // What a preemption costs the victim (checkpoint + restore), as the simulator charges it; the
  // schedmate policy weighs it against the wait a preemption saves. Jobs with more than
  // `preemption_large_above_gpus` GPUs pay the large cost.
  Duration preemption_cost = Duration::Seconds(40);
  Duration preemption_cost_large = Duration::Seconds(60);
  int32_t preemption_large_above_gpus = 8;
  // The site's Slurm configuration for "slurm"; may be null (Slurm's defaults). Not owned.
  const SlurmConfig* slurm = nullptr;
  // kill-after-N test policy: preempt-and-reject a job after it ran this long.
  Duration kill_after = Duration::Hours(1);
};

using PolicyFactory = std::function<std::unique_ptr<SchedulingPolicy>(const PolicyConfig&)>;

class PolicyRegistry : public NamedRegistry<PolicyFactory> {
 public:
  PolicyRegistry() : NamedRegistry("policy") {}
  // kNotFound listing the known names.
  Result<std::unique_ptr<SchedulingPolicy>> Create(const std::string& name,
                                                   const PolicyConfig& config) const;
};

// fifo, sjf, srtf, qssf, tiresias, lucid, schedmate, and the engine-test policies reject-all,
// one-at-a-time, kill-after-n. Returns the first registration error.
Status RegisterBuiltinPolicies(PolicyRegistry& registry);

// The policies `--policy all` means: fifo, sjf, srtf, qssf, tiresias, lucid, schedmate.
std::vector<std::string> DefaultPolicyNames();

}  // namespace schedmate::policy
