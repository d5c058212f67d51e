#pragma once
// Cluster configuration files that come with traces.

#include <string>

#include "core/job.h"
#include "core/result.h"

namespace schedmate::trace {

// Lucid's vc_config.csv: a header row (",num": the first column is unnamed) then one row per
// VC: "<vc name>,<number of nodes>". Each VC becomes a VcSpec with `nodes` nodes of
// `gpus_per_node` GPUs (Lucid's Venus nodes have 8). VCs keep file order. A header whose first
// cell is non-empty is accepted too ("vc,num"). Errors (kInvalidArgument "path:line: reason"):
// missing/extra fields, non-integer or negative node counts, duplicate VC names, empty file.
Result<ClusterSpec> ReadVcConfig(const std::string& path, int32_t gpus_per_node = 8);
// Same, from contents in memory; `source` names it in errors.
Result<ClusterSpec> ParseVcConfig(std::string_view contents, std::string_view source,
                                  int32_t gpus_per_node = 8);

}  // namespace schedmate::trace
