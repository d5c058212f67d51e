#pragma once
// Hand-made clusters and policy runs for simulator and policy tests (jobs: testing/job_builder.h).

#include <string>
#include <utility>

#include "core/job.h"
#include "policy/colocation_model.h"
#include "policy/policy_registry.h"
#include "sim/simulator.h"
#include "testing/job_builder.h"
#include "testing/test_util.h"

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

// The co-location fixture (Lucid-format colocate_info.csv + single_data.csv in tests/data/sim/).
inline Result<policy::ColocationModel> FixtureColocationModel() {
  return policy::ColocationModel::Load(TestDataPath("sim/colocate_info.csv"),
                                       TestDataPath("sim/single_data.csv"));
}

// A ResNet18/CIFAR-10 job as the fixture measures it (3 GB of GPU memory).
inline JobBuilder ResNet18Job() {
  return JobBuilder().Model("ResNet18", "CIFAR-10", 64, 0).Gmem(3000);
}

// RunPolicy with the fixture co-location model given to the policy and the simulator.
inline Result<sim::SimResult> RunPolicyColocated(const std::string& policy_name,
                                                 const JobTable& table,
                                                 const ClusterSpec& cluster) {
  auto model = FixtureColocationModel();
  if (!model.ok()) return model.status();
  policy::PolicyConfig pc;
  pc.colocation = &*model;
  sim::SimOptions so;
  so.colocation = &*model;
  return RunPolicy(policy_name, table, cluster, pc, so);
}

}  // namespace schedmate::testing
