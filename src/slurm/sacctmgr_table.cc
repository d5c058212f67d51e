#include "slurm/sacctmgr_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/strings.h"

namespace schedmate::slurm {

int SacctmgrTable::Column(std::string_view name) const {
  auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

std::map<std::string, std::string> SacctmgrTable::Values(
    const std::vector<std::string_view>& row, std::initializer_list<std::string_view> skip) const {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < row.size() && i < header.size(); ++i) {
    if (Trim(row[i]).empty() || std::find(skip.begin(), skip.end(), header[i]) != skip.end()) {
      continue;
    }
    out[header[i]] = std::string(Trim(row[i]));
  }
  return out;
}

Result<SacctmgrTable> ParseSacctmgrTable(
    std::string_view text, const std::function<std::string(const SacctmgrTable&)>& check_header) {
  SacctmgrTable t;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    if (Trim(line).empty()) continue;
    std::vector<std::string_view> f = Split(line, '|');
    if (t.header.empty()) {
      for (std::string_view name : f) t.header.emplace_back(Trim(name));
      if (std::string why = check_header(t); !why.empty()) {
        return Status::InvalidArgument(fmt::format("sacctmgr:{}: {}", line_no, why));
      }
      continue;
    }
    if (f.size() != t.header.size()) {
      return Status::InvalidArgument(fmt::format("sacctmgr:{}: {} fields, the header has {}",
                                                 line_no, f.size(), t.header.size()));
    }
    t.rows.push_back(std::move(f));
  }
  return t;
}

}  // namespace schedmate::slurm
