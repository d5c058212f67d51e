#pragma once
// Configuration checks of a site's slurm.conf and gres.conf that cost GPU time or hide jobs:
//
//   gres_not_on_node      gres.conf gives a node GPUs that its NodeName line does not declare
//                         (Gres=gpu:N): Slurm never schedules those GPUs                  error
//   gres_types_missing    nodes declare Gres=gpu but GresTypes does not list gpu          error
//   partition_no_nodes    a partition has no Nodes= or names none of the defined nodes    error
//   backfill_disabled     SchedulerType=sched/builtin: small jobs never fill the gaps     warning
//   unlimited_default_time  a partition with neither DefaultTime nor a finite MaxTime: jobs
//                         submitted without --time run UNLIMITED and backfill cannot plan
//                         around them                                                    warning
//
// Each finding names the file and line it rests on. NodeName=DEFAULT / PartitionName=DEFAULT
// lines set defaults for the lines after them, as in Slurm. Keys are case-insensitive.

#include <string>
#include <string_view>
#include <vector>

namespace schedmate::slurm {

struct ConfFinding {
  std::string check;     // gres_not_on_node | gres_types_missing | partition_no_nodes | ...
  std::string severity;  // error | warning
  std::string file;
  int line = 0;         // 1-based; 0 when the finding is about something missing
  std::string subject;  // the node or partition concerned ("" for cluster-wide findings)
  std::string evidence;
  std::string suggestion;
};

// `gres_conf` may be empty (no gres.conf). Findings sorted by check, then subject.
std::vector<ConfFinding> CheckSlurmConf(std::string_view slurm_conf, std::string_view slurm_source,
                                        std::string_view gres_conf = {},
                                        std::string_view gres_source = "gres.conf");

}  // namespace schedmate::slurm
