#include "slurm/job_usage.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "core/strings.h"
#include "slurm/slurm_parsers.h"

namespace schedmate::slurm {
namespace {

// "a=1,b=2" -> value of `key` ("" when absent).
std::string_view TresValue(std::string_view tres, std::string_view key) {
  for (std::string_view part : Split(tres, ',')) {
    auto eq = part.find('=');
    if (eq != std::string_view::npos && Trim(part.substr(0, eq)) == key) {
      return Trim(part.substr(eq + 1));
    }
  }
  return {};
}

// "0-3,5" -> {0,1,2,3,5}; at most 1024 indices.
std::vector<int> ExpandIndices(std::string_view text) {
  std::vector<int> out;
  for (std::string_view part : Split(text, ',')) {
    auto dash = part.find('-');
    auto lo = ParseInt(Trim(part.substr(0, dash)));
    auto hi = dash == std::string_view::npos ? lo : ParseInt(Trim(part.substr(dash + 1)));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi >= 1024) continue;
    for (int64_t i = *lo; i <= *hi && out.size() < 1024; ++i) out.push_back(static_cast<int>(i));
  }
  return out;
}

}  // namespace

std::optional<double> ParseCpuTime(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  double days = 0;
  auto dash = text.find('-');
  if (dash != std::string_view::npos) {
    auto d = ParseInt(text.substr(0, dash));
    if (!d || *d < 0) return std::nullopt;
    days = static_cast<double>(*d);
    text = text.substr(dash + 1);
  }
  std::vector<std::string_view> parts = Split(text, ':');
  if (parts.empty() || parts.size() > 3) return std::nullopt;
  double seconds = 0;
  for (std::string_view p : parts) {
    auto v = ParseDouble(p);
    if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
    seconds = seconds * 60 + *v;
  }
  return days * 86400 + seconds;
}

std::optional<int64_t> ParseMemorySize(std::string_view text, char default_unit) {
  text = Trim(text);
  if (text.empty()) return std::nullopt;
  char unit = default_unit;
  if (std::isalpha(static_cast<unsigned char>(text.back()))) {
    unit = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    text.remove_suffix(1);
  }
  auto v = ParseDouble(text);
  if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
  double scale = 1;
  switch (unit) {
    case 'B':
      break;
    case 'K':
      scale = 1024.0;
      break;
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    case 'T':
      scale = 1024.0 * 1024 * 1024 * 1024;
      break;
    default:
      return std::nullopt;
  }
  double bytes = *v * scale;
  if (bytes > 9.0e18) return std::nullopt;
  return static_cast<int64_t>(bytes);
}

Result<std::vector<StepUsage>> ParseSstat(std::string_view text) {
  std::vector<StepUsage> out;
  int line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    line = Trim(line);
    if (line.empty()) continue;
    auto bar = line.find('|');
    if (bar == std::string_view::npos) {
      return Status::InvalidArgument(fmt::format(
          "sstat:{}: expected JobID|TRESUsageInTot, got '{}'", line_no, Utf8Prefix(line, 80)));
    }
    StepUsage s;
    s.step = std::string(Trim(line.substr(0, bar)));
    std::string_view tres = line.substr(bar + 1);
    if (auto bar2 = tres.find('|'); bar2 != std::string_view::npos) tres = tres.substr(0, bar2);
    if (std::string_view cpu = TresValue(tres, "cpu"); !cpu.empty()) {
      s.cpu_seconds = ParseCpuTime(cpu);
      if (!s.cpu_seconds) {
        return Status::InvalidArgument(
            fmt::format("sstat:{}: cpu: '{}' is not a CPU time", line_no, Utf8Prefix(cpu, 40)));
      }
    }
    if (std::string_view mem = TresValue(tres, "mem"); !mem.empty()) {
      s.mem_bytes = ParseMemorySize(mem);
      if (!s.mem_bytes) {
        return Status::InvalidArgument(
            fmt::format("sstat:{}: mem: '{}' is not a size", line_no, Utf8Prefix(mem, 40)));
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, std::vector<int>> ParseJobGpuIndices(std::string_view detail) {
  std::map<std::string, std::vector<int>> out;
  for (std::string_view line : Split(detail, '\n')) {
    std::string node_text, gres_text;
    for (auto& [k, v] : ParseKeyValueLine(line)) {
      if (k == "Nodes") node_text = v;
      if (k == "GRES") gres_text = v;
    }
    if (node_text.empty() || gres_text.empty()) continue;
    // "gpu:4(IDX:0-3)" or "gpu:a100:2(IDX:4-5),gpu:v100:1(IDX:0)".
    std::vector<int> indices;
    size_t pos = 0;
    while ((pos = gres_text.find("gpu", pos)) != std::string::npos) {
      size_t idx = gres_text.find("(IDX:", pos);
      if (idx == std::string::npos) break;
      size_t close = gres_text.find(')', idx);
      if (close == std::string::npos) break;
      for (int i : ExpandIndices(std::string_view(gres_text).substr(idx + 5, close - idx - 5)))
        indices.push_back(i);
      pos = close;
    }
    if (indices.empty()) continue;
    for (const auto& n : ExpandNodeList(node_text, 1024)) out[n] = indices;
  }
  return out;
}

std::optional<int64_t> TresMemoryMib(std::string_view tres) {
  std::string_view mem = TresValue(tres, "mem");
  if (mem.empty()) return std::nullopt;
  auto bytes = ParseMemorySize(mem, 'M');
  if (!bytes) return std::nullopt;
  return *bytes / (1024 * 1024);
}

}  // namespace schedmate::slurm
