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

// The fields of one CSV row in order, a comma before each but the first.
class RowWriter {
 public:
  explicit RowWriter(Buffer& out) : out_(out) {}
  RowWriter& Text(std::string_view s) {
    Separate();
    AppendText(out_, s);
    return *this;
  }
  RowWriter& Fixed(int64_t value, int64_t scale, int digits) {
    Separate();
    AppendFixed(out_, value, scale, digits);
    return *this;
  }
  RowWriter& Real(double v) {
    Separate();
    AppendReal(out_, v);
    return *this;
  }
  // An integer, or an empty field when `present` is false.
  RowWriter& Int(int64_t v, bool present = true) {
    Separate();
    if (present) fmt::format_to(std::back_inserter(out_), "{}", v);
    return *this;
  }
  void End() { out_.push_back('\n'); }

 private:
  void Separate() {
    if (!first_) out_.push_back(',');
    first_ = false;
  }
  Buffer& out_;
  bool first_ = true;
};

}  // namespace

std::string FormatLucidCsv(const JobTable& table) {
  Buffer out;
  constexpr std::string_view kHeader =
      "job_id,user,vc,gpu_num,cpu_num,state,submit_s,duration_s,dataset,model,batchsize,amp,"
      "speed,gpu_util,gmem_util,gmem\n";
  out.append(kHeader.data(), kHeader.data() + kHeader.size());
  for (const JobRecord& j : table.jobs) {
    RowWriter(out)
        .Text(j.id)
        .Text(j.user)
        .Text(j.vc)
        .Fixed(j.gpus.milli(), GpuAmount::kUnit, 3)
        .Int(j.cpus)
        .Text(JobStateName(j.state))
        .Fixed(j.submit.micros(), 1'000'000, 6)
        .Fixed(j.duration.micros(), 1'000'000, 6)
        .Text(j.dataset)
        .Text(j.model)
        .Int(j.batch_size)
        .Int(j.amp, /*present=*/j.amp >= 0)
        .Real(j.speed)
        .Real(j.gpu_util)
        .Real(j.gmem_util)
        .Real(j.gmem_mib)
        .End();
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
