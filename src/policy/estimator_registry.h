#pragma once
// EstimatorRegistry: DurationEstimators by name, so the CLI can pick one with --estimator NAME
// and other components (the advisor's learned estimator) can be registered from the CLI layer
// without editing the policy component. Duplicate names fail with kAlreadyExists.
//
// Built-ins (RegisterBuiltinEstimators):
//   file       JobRecord::estimate (the trace's or --estimates file's column), per job as given;
//              jobs without one get the mean duration of jobs finished so far (1 h before any).
//   oracle     the true duration (an upper bound on what estimates can achieve).
//   user-mean  online: mean duration of the same user's finished jobs with the same GPU count,
//              else of the user's finished jobs, else of all finished jobs, else 1 h.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/duration_estimator.h"
#include "core/result.h"
#include "core/status.h"
#include "policy/named_registry.h"

namespace schedmate::policy {

using EstimatorFactory = std::function<Result<std::unique_ptr<DurationEstimator>>()>;

class EstimatorRegistry : public NamedRegistry<EstimatorFactory> {
 public:
  EstimatorRegistry() : NamedRegistry("estimator") {}
  // kNotFound listing the known names.
  Result<std::unique_ptr<DurationEstimator>> Create(const std::string& name) const;
};

Status RegisterBuiltinEstimators(EstimatorRegistry& registry);

// The process-wide registry `schedmate simulate --estimator` resolves names in. Built-ins are
// registered on first use; other components add theirs explicitly from the CLI layer (e.g. the
// advise command group's registration function) before arguments are parsed. Not thread-safe.
EstimatorRegistry& DefaultEstimatorRegistry();

}  // namespace schedmate::policy
