#pragma once
// Fluent builders for hand-made job tables and clusters in simulator and policy tests.

#include <string>
#include <utility>

#include "core/job.h"
#include "policy/policy_registry.h"
#include "sim/simulator.h"

namespace schedmate::testing {

class JobBuilder {
 public:
  JobBuilder& Id(std::string id) {
    j_.id = std::move(id);
    return *this;
  }
  JobBuilder& Vc(std::string vc) {
    j_.vc = std::move(vc);
    return *this;
  }
  JobBuilder& User(std::string u) {
    j_.user = std::move(u);
    return *this;
  }
  JobBuilder& Gpus(int64_t g) {
    j_.gpus = GpuAmount::Whole(g);
    return *this;
  }
  JobBuilder& SubmitAt(int64_t s) {
    j_.submit = SimTime::FromSeconds(s);
    return *this;
  }
  JobBuilder& Runtime(int64_t s) {
    j_.duration = Duration::Seconds(s);
    return *this;
  }
  JobBuilder& Estimate(int64_t s) {
    j_.estimate = Duration::Seconds(s);
    return *this;
  }
  JobBuilder& Model(std::string m, std::string ds, int bs, int amp) {
    j_.model = std::move(m);
    j_.dataset = std::move(ds);
    j_.batch_size = bs;
    j_.amp = static_cast<int8_t>(amp);
    return *this;
  }
  JobBuilder& Gmem(double mib) {
    j_.gmem_mib = mib;
    return *this;
  }
  JobRecord Build() const { return j_; }

 private:
  JobRecord j_;
};

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

inline JobTable Table(std::initializer_list<JobBuilder> jobs) {
  JobTable t;
  int i = 0;
  for (const auto& b : jobs) {
    JobRecord r = b.Build();
    if (r.id.empty()) r.id = "j" + std::to_string(i);
    ++i;
    t.jobs.push_back(std::move(r));
  }
  return t;
}

}  // namespace schedmate::testing
