#include "slurm/qos.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/strings.h"
#include "slurm/sacctmgr_table.h"

namespace schedmate::slurm {

Result<std::vector<QosLimits>> ParseSacctmgrQos(std::string_view text) {
  SM_ASSIGN_OR_RETURN(const SacctmgrTable t,
                      ParseSacctmgrTable(text, [](const SacctmgrTable& table) -> std::string {
                        return table.header[0] == "Name" ? ""
                                                         : "expected a header starting with Name";
                      }));
  std::vector<QosLimits> out;
  for (const auto& row : t.rows) {
    QosLimits q;
    q.name = std::string(Trim(row[0]));
    q.limits = t.Values(row, {"Name"});
    out.push_back(std::move(q));
  }
  std::sort(out.begin(), out.end(),
            [](const QosLimits& a, const QosLimits& b) { return a.name < b.name; });
  return out;
}

std::optional<int64_t> TresCount(std::string_view list, std::string_view tres) {
  std::optional<int64_t> typed;
  for (std::string_view part : Split(list, ',')) {
    auto eq = part.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = Trim(part.substr(0, eq));
    auto value = ParseInt(Trim(part.substr(eq + 1)));
    if (!value) continue;
    if (key == tres) return value;
    if (StartsWith(key, tres) && key.size() > tres.size() && key[tres.size()] == ':')
      typed = typed.value_or(0) + *value;
  }
  return typed;
}

}  // namespace schedmate::slurm
