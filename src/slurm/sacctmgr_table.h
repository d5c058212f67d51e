#pragma once
// SacctmgrTable: `sacctmgr -P show ...` output as a table (qos.cc, assoc.cc): a header line naming
// the columns, then one '|'-separated line per record with as many fields; blank lines skipped.

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace schedmate::slurm {

struct SacctmgrTable {
  std::vector<std::string> header;                  // column names, trimmed
  std::vector<std::vector<std::string_view>> rows;  // fields as given (views into the text)

  // The index of column `name`, or -1.
  int Column(std::string_view name) const;
  // The non-empty fields of `row` (trimmed) by column name, except the columns named in `skip`.
  std::map<std::string, std::string> Values(const std::vector<std::string_view>& row,
                                            std::initializer_list<std::string_view> skip) const;
};

// Reads `text`. `check_header` sees the table once its header is read and returns why that header
// will not do ("" when it will). kInvalidArgument "sacctmgr:LINE: <why>" for a refused header, or
// "sacctmgr:LINE: N fields, the header has M" for a row of another width. Empty text: no header,
// no rows. The rows are views into `text`, which must outlive the table.
Result<SacctmgrTable> ParseSacctmgrTable(
    std::string_view text, const std::function<std::string(const SacctmgrTable&)>& check_header);

}  // namespace schedmate::slurm
