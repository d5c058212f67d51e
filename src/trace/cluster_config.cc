#include "trace/cluster_config.h"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "core/file_util.h"
#include "core/strings.h"
#include "trace/csv.h"
#include "trace/reader_internal.h"

namespace schedmate::trace {

Result<ClusterSpec> ParseVcConfig(std::string_view contents, std::string_view source,
                                  int32_t gpus_per_node) {
  if (gpus_per_node <= 0) {
    return Status::InvalidArgument(
        fmt::format("gpus_per_node must be positive, got {}", gpus_per_node));
  }
  CsvCursor cursor(contents, ',');
  std::vector<std::string_view> f;
  if (!cursor.NextNonBlank(f))
    return Status::InvalidArgument(fmt::format("{}:1: empty VC config", source));
  if (f.size() != 2) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: expected a 2-column header (',num'), got {} fields", source,
                    cursor.line(), f.size()));
  }
  ClusterSpec spec;
  std::set<std::string, std::less<>> seen;
  while (cursor.Next(f)) {
    if (CsvCursor::IsBlank(f)) continue;
    const int64_t line = cursor.line();
    if (f.size() != 2) {
      return Status::InvalidArgument(
          fmt::format("{}:{}: expected 2 fields (vc,num), got {}", source, line, f.size()));
    }
    std::string name(Trim(f[0]));
    int64_t nodes = 0;
    if (name.empty()) {
      return Status::InvalidArgument(fmt::format("{}:{}: empty VC name", source, line));
    }
    if (!internal::ParseIntField(f[1], nodes) || nodes < 0 || nodes > 1'000'000) {
      return Status::InvalidArgument(fmt::format("{}:{}: VC {}: '{}' is not a node count", source,
                                                 line, name, Trim(f[1]).substr(0, 40)));
    }
    if (!seen.insert(name).second) {
      return Status::InvalidArgument(fmt::format("{}:{}: duplicate VC {}", source, line, name));
    }
    spec.vcs.push_back(VcSpec{name, static_cast<int32_t>(nodes), gpus_per_node, 0});
  }
  return spec;
}

Result<ClusterSpec> ReadVcConfig(const std::string& path, int32_t gpus_per_node) {
  SM_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return ParseVcConfig(contents, path, gpus_per_node);
}

}  // namespace schedmate::trace
