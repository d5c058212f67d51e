#include "trace/trace_writer.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/file_util.h"

namespace schedmate::trace {
namespace {

using Buffer = fmt::memory_buffer;

void AppendText(Buffer& out, std::string_view s) {
  bool quote =
      !s.empty() && (s.front() == ' ' || s.back() == ' ' || s.front() == '\t' || s.back() == '\t');
  if (!quote) {
    for (char c : s) {
      if (c == ',' || c == '"' || c == '\n' || c == '\r') {
        quote = true;
        break;
      }
    }
  }
  if (!quote) {
    out.append(s.data(), s.data() + s.size());
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

// Fixed point with `scale` units per whole (1e6 for micros, 1000 for milli), trailing zeros cut.
void AppendFixed(Buffer& out, int64_t value, int64_t scale, int digits) {
  // The magnitude as unsigned: exact even for INT64_MIN.
  uint64_t magnitude = static_cast<uint64_t>(value);
  if (value < 0) {
    out.push_back('-');
    magnitude = 0 - magnitude;
  }
  const uint64_t whole = magnitude / static_cast<uint64_t>(scale);
  uint64_t frac = magnitude % static_cast<uint64_t>(scale);
  fmt::format_to(std::back_inserter(out), "{}", whole);
  if (frac == 0) return;
  while (frac % 10 == 0) {
    frac /= 10;
    --digits;
  }
  fmt::format_to(std::back_inserter(out), ".{:0{}}", frac, digits);
}

void AppendReal(Buffer& out, double v) { fmt::format_to(std::back_inserter(out), "{}", v); }

}  // namespace

std::string FormatLucidCsv(const JobTable& table) {
  Buffer out;
  constexpr std::string_view kHeader =
      "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,amp,"
      "speed,gpu_util,gmem_util,gmem\n";
  out.append(kHeader.data(), kHeader.data() + kHeader.size());
  for (const JobRecord& j : table.jobs) {
    AppendText(out, j.id);
    out.push_back(',');
    AppendText(out, j.user);
    out.push_back(',');
    AppendText(out, j.vc);
    out.push_back(',');
    AppendFixed(out, j.gpus.milli(), GpuAmount::kUnit, 3);
    fmt::format_to(std::back_inserter(out), ",{},{},", j.cpus, JobStateName(j.state));
    AppendFixed(out, j.submit.micros(), 1'000'000, 6);
    out.push_back(',');
    AppendFixed(out, j.duration.micros(), 1'000'000, 6);
    out.push_back(',');
    AppendText(out, j.dataset);
    out.push_back(',');
    AppendText(out, j.model);
    fmt::format_to(std::back_inserter(out), ",{},", j.batch_size);
    if (j.amp >= 0) fmt::format_to(std::back_inserter(out), "{}", static_cast<int>(j.amp));
    out.push_back(',');
    AppendReal(out, j.speed);
    out.push_back(',');
    AppendReal(out, j.gpu_util);
    out.push_back(',');
    AppendReal(out, j.gmem_util);
    out.push_back(',');
    AppendReal(out, j.gmem_mib);
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

Status WriteOutputFile(const std::string& path, std::string_view data) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
      !std::filesystem::is_directory(st)) {
    std::ofstream out(path, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) return Status::DataLoss("cannot write " + path);
    return Status::Ok();
  }
  return WriteStringToFile(path, data);
}

Status WriteLucidCsv(const JobTable& table, const std::string& path) {
  return WriteOutputFile(path, FormatLucidCsv(table));
}

}  // namespace schedmate::trace
