#include "policy/colocation_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "core/file_util.h"
#include "core/strings.h"

namespace schedmate::policy {
namespace {

// A header-indexed CSV row view over one line (the Lucid files carry no quoted fields).
struct Table {
  std::vector<std::string> header;
  std::vector<std::pair<int64_t, std::vector<std::string_view>>> rows;  // (line, fields)
  std::string text;
  int Col(std::string_view name) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  }
  // The indexes of `names`, in order; kInvalidArgument "path:1: missing column X" for the first
  // one the header lacks.
  Result<std::vector<int>> Columns(std::span<const char* const> names,
                                   const std::string& path) const {
    std::vector<int> cols;
    for (const char* name : names) {
      cols.push_back(Col(name));
      if (cols.back() < 0) {
        return Status::InvalidArgument(fmt::format("{}:1: missing column {}", path, name));
      }
    }
    return cols;
  }
};

Result<Table> ReadTable(const std::string& path) {
  Table t;
  SM_ASSIGN_OR_RETURN(t.text, ReadFileToString(path));
  int64_t line_no = 0;
  for (std::string_view line : Split(t.text, '\n')) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) continue;
    auto fields = Split(line, ',');
    if (t.header.empty()) {
      for (auto f : fields) t.header.emplace_back(Trim(f));
      continue;
    }
    if (fields.size() != t.header.size()) {
      return Status::InvalidArgument(fmt::format("{}:{}: expected {} fields, found {}", path,
                                                 line_no, t.header.size(), fields.size()));
    }
    t.rows.emplace_back(line_no, std::move(fields));
  }
  if (t.header.empty()) return Status::InvalidArgument(path + ": empty file");
  return t;
}

Result<double> Num(const std::string& path, int64_t line, std::string_view field,
                   std::string_view name) {
  auto v = ParseDouble(field);
  if (!v) {
    return Status::InvalidArgument(
        fmt::format("{}:{}: column {}: not a number: '{}'", path, line, name, field));
  }
  return *v;
}

double UtilOrFull(const JobRecord& j) { return j.gpu_util > 0 ? j.gpu_util : 100.0; }

}  // namespace

Result<ColocationModel> ColocationModel::Load(const std::string& colocate_info_csv,
                                              const std::string& single_data_csv) {
  ColocationModel m;
  {
    SM_ASSIGN_OR_RETURN(Table t, ReadTable(colocate_info_csv));
    const char* names[] = {"model1", "dataset1", "batchsize1", "amp1", "speed1",
                           "model2", "dataset2", "batchsize2", "amp2", "speed2"};
    SM_ASSIGN_OR_RETURN(const std::vector<int> c, t.Columns(names, colocate_info_csv));
    for (const auto& [line, f] : t.rows) {
      // numeric columns: batchsize1, amp1, speed1, batchsize2, amp2, speed2
      const int numeric[] = {2, 3, 4, 7, 8, 9};
      double v[6];
      for (int i = 0; i < 6; ++i) {
        SM_ASSIGN_OR_RETURN(v[i],
                            Num(colocate_info_csv, line, f[c[numeric[i]]], names[numeric[i]]));
      }
      Key a{std::string(Trim(f[c[0]])), std::string(Trim(f[c[1]])), static_cast<int32_t>(v[0]),
            static_cast<int32_t>(v[1])};
      Key b{std::string(Trim(f[c[5]])), std::string(Trim(f[c[6]])), static_cast<int32_t>(v[3]),
            static_cast<int32_t>(v[4])};
      // First row wins on duplicates, as a lookup of the first match would.
      m.pairs_.emplace(std::make_pair(a, b), std::make_pair(v[2], v[5]));
    }
  }
  {
    SM_ASSIGN_OR_RETURN(Table t, ReadTable(single_data_csv));
    const char* names[] = {"model", "dataset", "batchsize", "amp", "label"};
    SM_ASSIGN_OR_RETURN(const std::vector<int> c, t.Columns(names, single_data_csv));
    for (const auto& [line, f] : t.rows) {
      SM_ASSIGN_OR_RETURN(double bs, Num(single_data_csv, line, f[c[2]], "batchsize"));
      SM_ASSIGN_OR_RETURN(double amp, Num(single_data_csv, line, f[c[3]], "amp"));
      SM_ASSIGN_OR_RETURN(double label, Num(single_data_csv, line, f[c[4]], "label"));
      Key k{std::string(Trim(f[c[0]])), std::string(Trim(f[c[1]])), static_cast<int32_t>(bs),
            static_cast<int32_t>(amp)};
      m.labels_.emplace(k, static_cast<int>(label));
    }
  }
  return m;
}

PairRates ColocationModel::Rates(const JobRecord& a, const JobRecord& b) const {
  if (!pairs_.empty()) {
    const Key ka = KeyOf(a), kb = KeyOf(b);
    if (auto it = pairs_.find({ka, kb}); it != pairs_.end()) {
      return {it->second.first, it->second.second, true};
    }
    if (auto it = pairs_.find({kb, ka}); it != pairs_.end()) {
      return {it->second.second, it->second.first, true};
    }
  }
  const double sum = UtilOrFull(a) + UtilOrFull(b);
  const double r = sum <= 100.0 ? 1.0 : 100.0 / sum;
  return {r, r, false};
}

int ColocationModel::ShareScore(const JobRecord& job) const {
  if (auto it = labels_.find(KeyOf(job)); it != labels_.end()) return it->second;
  return (job.gpu_util > 0 && job.gpu_util <= 50.0) ? 1 : 2;
}

}  // namespace schedmate::policy
