#pragma once
// QOS limits as `sacctmgr -P show qos format=...` prints them (slurmdbd sites), so `why` can name
// the limit a job waits on and its value ("MaxTRESPU gres/gpu=3").

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace schedmate::slurm {

struct QosLimits {
  std::string name;
  // sacctmgr's column -> value, only non-empty ones: "MaxTRESPU" -> "gres/gpu=3,cpu=8".
  std::map<std::string, std::string> limits;
};

// The columns SlurmBackend::ListQos asks for (Name first).
inline constexpr const char* kQosFormat =
    "Name,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpSubmit,GrpWall,MaxTRES,MaxTRESPerNode,"
    "MaxTRESMins,MaxTRESPU,MaxTRESPA,MaxJobsPU,MaxJobsPA,MaxSubmitPU,MaxSubmitPA,MaxWall,MinTRES";

// Parses `sacctmgr -P show qos format=...` (a header line naming the columns, then one line per
// QOS). kInvalidArgument naming "sacctmgr:LINE" for a line whose field count differs from the
// header's, or a header without Name. Sorted by name.
Result<std::vector<QosLimits>> ParseSacctmgrQos(std::string_view text);

// The amount of `tres` ("gres/gpu", "cpu", "node", "mem") in a TRES list ("cpu=8,gres/gpu=3"):
// "gres/gpu" also matches typed entries ("gres/gpu:a100=2") when the plain one is absent.
std::optional<int64_t> TresCount(std::string_view list, std::string_view tres);

}  // namespace schedmate::slurm
