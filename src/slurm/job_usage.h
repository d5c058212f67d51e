#pragma once
// What a running job uses, as Slurm reports it: `sstat` per step (CPU time and memory from
// TRESUsageInTot, which jobacct_gather/linux fills every JobAcctGatherFrequency) and which GPU
// indices it holds on each node (`scontrol show job -d`: "Nodes=gpu1 CPU_IDs=0-3 Mem=0
// GRES=gpu:4(IDX:0-3)"). The service compares them with what the job asked for
// (service/anomalies.h: over_requested).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace schedmate::slurm {

// One step of `sstat -n -P --allsteps -o JobID,TRESUsageInTot`.
struct StepUsage {
  std::string step;                   // "12.batch", "12.0", "12.extern"
  std::optional<double> cpu_seconds;  // cpu= (total CPU time of the step's tasks)
  std::optional<int64_t> mem_bytes;   // mem= (summed resident memory of the step's tasks)
};

// The argv's output format (what ParseSstat reads).
inline constexpr const char* kSstatFormat = "JobID,TRESUsageInTot";

// Parses `sstat -n -P -o JobID,TRESUsageInTot` output. Empty lines are skipped; a line without
// '|' or a cpu=/mem= value that does not parse is kInvalidArgument naming "sstat:LINE".
Result<std::vector<StepUsage>> ParseSstat(std::string_view text);

// "01:02:03", "1-02:03:04", "02:03.456", "5.2": sstat's CPU time forms, in seconds.
std::optional<double> ParseCpuTime(std::string_view text);
// "1234K", "12M", "3.5G", "1024" (bytes): sstat's and TRES memory sizes, in bytes.
std::optional<int64_t> ParseMemorySize(std::string_view text, char default_unit = 'B');

// Node -> the GPU indices the job holds there, from `scontrol show job -d` text. Nodes listed as
// a range ("Nodes=gpu[1-2] ... GRES=gpu:8(IDX:0-7)") are expanded, each getting the indices.
// A job without GPUs gives an empty map.
std::map<std::string, std::vector<int>> ParseJobGpuIndices(std::string_view scontrol_detail);

// The mem= of a TRES string ("cpu=8,mem=16000M,node=1") in MiB; nullopt when absent.
std::optional<int64_t> TresMemoryMib(std::string_view tres);

}  // namespace schedmate::slurm
