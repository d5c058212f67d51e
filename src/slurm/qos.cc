#include "slurm/qos.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/strings.h"

namespace schedmate::slurm {

Result<std::vector<QosLimits>> ParseSacctmgrQos(std::string_view text) {
  std::vector<std::string_view> header;
  std::vector<QosLimits> out;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    if (Trim(line).empty()) continue;
    std::vector<std::string_view> f = Split(line, '|');
    if (header.empty()) {
      header = f;
      if (Trim(header[0]) != "Name") {
        return Status::InvalidArgument(
            fmt::format("sacctmgr:{}: expected a header starting with Name", line_no));
      }
      continue;
    }
    if (f.size() != header.size()) {
      return Status::InvalidArgument(fmt::format("sacctmgr:{}: {} fields, the header has {}",
                                                 line_no, f.size(), header.size()));
    }
    QosLimits q;
    q.name = std::string(Trim(f[0]));
    for (size_t i = 1; i < f.size(); ++i) {
      if (!Trim(f[i]).empty()) q.limits[std::string(Trim(header[i]))] = std::string(Trim(f[i]));
    }
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
