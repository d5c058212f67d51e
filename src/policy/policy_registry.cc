#include "policy/policy_registry.h"

#include <fmt/format.h>

#include "policy/fifo_policy.h"
#include "policy/lucid_policy.h"
#include "policy/qssf_policy.h"
#include "policy/schedmate_policy.h"
#include "policy/sjf_policy.h"
#include "policy/slurm_policy.h"
#include "policy/srtf_policy.h"
#include "policy/test_policies.h"
#include "policy/tiresias_policy.h"

namespace schedmate::policy {

Result<std::unique_ptr<SchedulingPolicy>> PolicyRegistry::Create(const std::string& name,
                                                                 const PolicyConfig& config) const {
  SM_ASSIGN_OR_RETURN(const PolicyFactory* factory, Find(name));
  return (*factory)(config);
}

Status RegisterBuiltinPolicies(PolicyRegistry& r) {
  SM_RETURN_IF_ERROR(
      r.Register("fifo", "first come first served, no backfill",
                 [](const PolicyConfig& c) { return std::make_unique<FifoPolicy>(c); }));
  SM_RETURN_IF_ERROR(
      r.Register("sjf", "shortest job first (oracle durations)",
                 [](const PolicyConfig& c) { return std::make_unique<SjfPolicy>(c); }));
  SM_RETURN_IF_ERROR(
      r.Register("srtf", "shortest remaining time first, preemptive (oracle)",
                 [](const PolicyConfig& c) { return std::make_unique<SrtfPolicy>(c); }));
  SM_RETURN_IF_ERROR(
      r.Register("qssf", "quasi-shortest service first: estimate x GPUs",
                 [](const PolicyConfig& c) { return std::make_unique<QssfPolicy>(c); }));
  SM_RETURN_IF_ERROR(
      r.Register("tiresias", "discretised 2D least attained service (Lucid's variant), preemptive",
                 [](const PolicyConfig& c) { return std::make_unique<TiresiasPolicy>(c); }));
  SM_RETURN_IF_ERROR(
      r.Register("lucid", "interference-aware packing, estimate-ordered queue",
                 [](const PolicyConfig& c) { return std::make_unique<LucidPolicy>(c); }));
  SM_RETURN_IF_ERROR(r.Register("schedmate",
                                "estimator-ordered queue, packing that un-packs, failure-aware",
                                [](const PolicyConfig& c) {
                                  SchedmateOptions o;
                                  o.preemption_cost = c.preemption_cost;
                                  o.preemption_cost_large = c.preemption_cost_large;
                                  o.large_above_gpus = c.preemption_large_above_gpus;
                                  return std::make_unique<SchedmatePolicy>(c, o);
                                }));
  SM_RETURN_IF_ERROR(
      r.Register("slurm", "Slurm multifactor priority + backfill on time limits (from slurm.conf)",
                 [](const PolicyConfig& c) {
                   return std::make_unique<SlurmPolicy>(c, c.slurm ? *c.slurm : SlurmConfig{});
                 }));
  SM_RETURN_IF_ERROR(
      r.Register("reject-all", "test policy: rejects every job",
                 [](const PolicyConfig&) { return std::make_unique<RejectAllPolicy>(); }));
  SM_RETURN_IF_ERROR(
      r.Register("one-at-a-time", "test policy: one job at a time",
                 [](const PolicyConfig&) { return std::make_unique<OneAtATimePolicy>(); }));
  SM_RETURN_IF_ERROR(r.Register(
      "kill-after-n", "test policy: kills jobs after a fixed run time",
      [](const PolicyConfig& c) { return std::make_unique<KillAfterPolicy>(c.kill_after); }));
  return Status::Ok();
}

std::vector<std::string> DefaultPolicyNames() {
  return {"fifo", "sjf", "srtf", "qssf", "tiresias", "lucid", "schedmate"};
}

}  // namespace schedmate::policy
