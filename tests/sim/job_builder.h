#pragma once
// Hand-made clusters and policy runs for simulator and policy tests (jobs: testing/job_builder.h).

#include <string>
#include <utility>

#include "core/job.h"
#include "policy/policy_registry.h"
#include "sim/simulator.h"
#include "testing/job_builder.h"

namespace schedmate::testing {

inline ClusterSpec OneVc(int32_t nodes, int32_t gpus_per_node = 8, std::string name = "") {
  ClusterSpec c;
  c.vcs.push_back(VcSpec{std::move(name), nodes, gpus_per_node, 0});
  return c;
}

// Runs `policy_name` from the built-in registry.
inline Result<sim::SimResult> RunPolicy(const std::string& policy_name, const JobTable& table,
                                        const ClusterSpec& cluster,
                                        const policy::PolicyConfig& config = {},
                                        const sim::SimOptions& options = {}) {
  auto registry = std::make_shared<policy::PolicyRegistry>();
  if (Status st = policy::RegisterBuiltinPolicies(*registry); !st.ok()) return st;
  return sim::Simulate(
      table, cluster,
      [&]() -> Result<std::unique_ptr<policy::SchedulingPolicy>> {
        return registry->Create(policy_name, config);
      },
      options);
}

}  // namespace schedmate::testing
