#pragma once
// SlurmConfig: the parts of a site's slurm.conf (and gres.conf) that the `slurm` policy models.
//
// Read from slurm.conf:
//   Priority:  PriorityType (priority/multifactor | priority/basic), PriorityWeightAge,
//              PriorityWeightFairshare, PriorityWeightJobSize, PriorityWeightPartition,
//              PriorityWeightQOS, PriorityMaxAge, PriorityDecayHalfLife, PriorityFavorSmall,
//              PriorityCalcPeriod.
//   Scheduler: SchedulerType (sched/backfill | sched/builtin); SchedulerParameters bf_window
//              (minutes), bf_max_job_test, bf_interval (seconds), bf_continue.
//   Cluster:   NodeName lines (node ranges such as gpu[01-16] count as 16 nodes; Gres=gpu:8 or
//              gpu:a100:8 gives GPUs per node), PartitionName lines (PriorityJobFactor, Default).
//   gres.conf: GPUs of nodes whose NodeName line has no Gres (Count=, else File=/dev/nvidia[0-7]).
// Known but not modelled (accepted, listed in `unmodelled` so callers can say so):
//   PriorityWeightAssoc, PriorityWeightTRES, PriorityFlags, PriorityUsageResetPeriod,
//   PriorityMaxAge-independent site factors (PrioritySiteFactorPlugin, ...Parameters), and the
//   SchedulerParameters options listed in slurm_config.cc (kNoEffectSchedulerParameters).
// Errors (kInvalidArgument "file:line: ..."): a Priority* key or a SchedulerParameters option the
// model does not know (the simulation could silently differ from the site), a value that is not a
// number or out of range, an unknown SchedulerType/PriorityType. Other keys (SlurmctldHost,
// AuthType, ...) are ignored: they do not change scheduling.
// Defaults are Slurm 22.05's documented defaults.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"
#include "core/status.h"

namespace schedmate::policy {

struct SlurmConfig {
  bool multifactor = true;  // PriorityType=priority/multifactor (false: basic, FIFO by submit)
  // Priority weights (uint32 in Slurm).
  int64_t weight_age = 0;
  int64_t weight_fairshare = 0;
  int64_t weight_job_size = 0;
  int64_t weight_partition = 0;
  int64_t weight_qos = 0;
  Duration max_age = Duration::Hours(7 * 24);
  Duration decay_half_life = Duration::Hours(7 * 24);  // 0: no decay
  bool favor_small = false;
  Duration calc_period = Duration::Minutes(5);  // priorities are recomputed this often
  // Scheduler.
  bool backfill = true;  // sched/backfill (false: sched/builtin)
  Duration bf_window = Duration::Minutes(1440);
  int64_t bf_max_job_test = 500;
  Duration bf_interval = Duration::Seconds(30);
  bool bf_continue = false;
  // Partitions: PriorityJobFactor by name (default 1).
  std::map<std::string, int64_t> partition_factor;
  // QOS priorities by name (not in slurm.conf: sacctmgr's; set with Set("qos.NAME", N)).
  std::map<std::string, int64_t> qos_priority;
  // Live start estimates (service/start_estimator.h), not slurm.conf: Slurm's own priorities by
  // job id replace the multifactor formula for the jobs listed (Slurm knows factors the model
  // does not), and a job listed in `excluded_nodes` never runs on those nodes (partition node
  // indices; its ExcNodeList). Empty for replays.
  std::unordered_map<std::string, int64_t> given_priority;
  std::unordered_map<std::string, std::vector<int32_t>> excluded_nodes;
  // Keys seen that are known but not modelled, "Key" or "SchedulerParameters=opt".
  std::vector<std::string> unmodelled;
};

// The cluster a slurm.conf describes.
struct SlurmNodes {
  int32_t nodes = 0;
  int32_t gpus_per_node = 0;  // the largest node's GPUs (see `heterogeneous`)
  int64_t total_gpus = 0;
  bool heterogeneous = false;           // nodes differ in GPUs
  std::vector<std::string> partitions;  // PartitionName order
};

struct SlurmConfFile {
  SlurmConfig config;
  SlurmNodes nodes;
};

// Parses slurm.conf text; `source` names it in errors. `gres_conf` (may be empty) supplies GPU
// counts of nodes whose NodeName line has none.
Result<SlurmConfFile> ParseSlurmConf(std::string_view contents, std::string_view source,
                                     std::string_view gres_conf = {},
                                     std::string_view gres_source = "gres.conf");
// Reads `path`, and gres.conf beside it when present.
Result<SlurmConfFile> ReadSlurmConf(const std::string& path);

// Applies one `Key=Value` override (`--set`): any slurm.conf key the parser knows
// (PriorityWeightAge=...), a SchedulerParameters option (bf_window=...), SchedulerType=..., or
// qos.NAME=priority / partition.NAME=PriorityJobFactor. kInvalidArgument naming the key when it
// is unknown or the value bad.
Status ApplySlurmSetting(SlurmConfig& config, std::string_view key, std::string_view value);

// The slurm.conf lines that would configure `config` (for `tune` and reports).
std::vector<std::string> SlurmConfLines(const SlurmConfig& config);

// Counts the names of a Slurm host list: "gpu[01-04,7],login" -> 6. kInvalidArgument if malformed.
Result<int64_t> CountHostList(std::string_view list);

}  // namespace schedmate::policy
