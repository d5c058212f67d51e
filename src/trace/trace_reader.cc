#include "trace/trace_reader.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "core/file_util.h"
#include "core/strings.h"
#include "trace/csv.h"
#include "trace/reader_internal.h"

namespace schedmate::trace {
namespace {

// Every format: its reader and its description (help text order).
struct FormatInfo {
  TraceFormat format;
  Status (*read)(std::string_view contents, internal::ReadContext& ctx);
  const char* description;
};
constexpr FormatInfo kFormats[] = {
    {TraceFormat::kLucid, internal::ReadLucidCsv,
     "Lucid/Helios CSV: job_id,user,vc,gpu_num,...,submit_s|submit_time,duration_s|duration"},
    {TraceFormat::kGpw, internal::ReadGpwCsv,
     "DIR-LAB GPW CSV: u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,"
     "new_status (or SDSC95 Job_Number,Interval,Run_Time,Number_of_Allocated_Processors)"},
    {TraceFormat::kChronus, internal::ReadChronusCsv,
     "Chronus/Tiresias CSV: job_id,[user,]num_gpu,submit_time,[iterations,model_name,]duration"},
    {TraceFormat::kGavel, internal::ReadGavelTrace,
     "Gavel .trace: 7 tab-separated fields, no header (durations only with Gavel throughputs)"},
    {TraceFormat::kPollux, internal::ReadPolluxCsv,
     "Pollux/Sia CSV: name,time,application,num_replicas,batch_size (no durations)"},
    {TraceFormat::kOpenb, internal::ReadOpenbCsv,
     "Alibaba openb pod list CSV: name,...,num_gpu,gpu_milli,...,creation_time,deletion_time,"
     "scheduled_time"},
    {TraceFormat::kSwf, internal::ReadSwf,
     "Standard Workload Format (.swf): 18 whitespace-separated fields, ';' "
     "comments"},
    {TraceFormat::kSacct, internal::ReadSacct,
     "Slurm accounting: sacct -P -o JobID,User,Account,Partition,QOS,Submit,Eligible,Start,End,"
     "Elapsed,Timelimit,AllocTRES,ReqTRES,NNodes,State (or sacct --json)"},
};

std::string Printable(std::string_view s) {
  std::string out(s.substr(0, 60));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

bool AllNumeric(const std::vector<std::string_view>& fields) {
  for (auto f : fields) {
    double v;
    if (!internal::ParseRealField(f, v)) return false;
  }
  return true;
}

}  // namespace

std::string DescribeTraceFormats() {
  std::string out;
  for (const auto& f : kFormats) {
    out += fmt::format("  {:<8} {}\n", TraceFormatName(f.format), f.description);
  }
  return out;
}

bool FormatHasDurations(TraceFormat format) {
  return format != TraceFormat::kPollux && format != TraceFormat::kGavel;
}

Result<TraceFormat> DetectTraceFormat(std::string_view contents, std::string_view path) {
  const std::string_view head = contents.substr(0, 4096);
  if (head.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(
        fmt::format("{}: looks like a binary file, not a job trace", path));
  }
  const std::string lower_path = ToLower(path);
  if (EndsWith(lower_path, ".swf")) return TraceFormat::kSwf;
  if (EndsWith(lower_path, ".trace")) return TraceFormat::kGavel;
  // First non-blank line.
  std::string_view first;
  size_t pos = 0;
  if (contents.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  while (pos < contents.size()) {
    size_t e = contents.find('\n', pos);
    if (e == std::string_view::npos) e = contents.size();
    std::string_view line = Trim(contents.substr(pos, e - pos));
    pos = e + 1;
    if (!line.empty()) {
      first = line;
      break;
    }
  }
  if (first.empty()) {
    return Status::InvalidArgument(fmt::format("{}:1: empty file: no header row", path));
  }
  if (first.front() == ';') return TraceFormat::kSwf;
  if (internal::LooksLikeSacctJson(head)) return TraceFormat::kSacct;
  if (internal::LooksLikeSacct(first)) return TraceFormat::kSacct;
  if (first.find('\t') != std::string_view::npos && Split(first, '\t').size() == 7) {
    return TraceFormat::kGavel;
  }
  if (auto ws = SplitWhitespace(first); ws.size() == 18 && AllNumeric(ws)) return TraceFormat::kSwf;

  CsvCursor cursor(first, ',');
  std::vector<std::string_view> fields;
  cursor.Next(fields);
  internal::HeaderMap h(fields);
  auto has = [&](std::initializer_list<std::string_view> names) { return h.Find(names) >= 0; };
  if (has({"job_id"}) && has({"gpu_num"}) && has({"submit_s", "submit_time"}) &&
      has({"duration_s", "duration"})) {
    return TraceFormat::kLucid;
  }
  if ((has({"u_id"}) && has({"interval"}) && has({"run_time"})) ||
      (has({"job_number"}) && has({"interval"}) && has({"run_time"}))) {
    return TraceFormat::kGpw;
  }
  if (has({"job_id"}) && has({"num_gpu"}) && has({"submit_time"}) && has({"duration"})) {
    return TraceFormat::kChronus;
  }
  if (has({"application"}) && has({"num_replicas"}) && has({"time"})) return TraceFormat::kPollux;
  if (has({"name"}) && has({"num_gpu"}) && has({"gpu_milli"}) && has({"cpu_milli"})) {
    return TraceFormat::kOpenb;
  }
  return Status::InvalidArgument(fmt::format(
      "{}:1: cannot tell the trace format from the first line '{}'; pass a format explicitly. "
      "Supported formats:\n{}",
      path, Printable(first), DescribeTraceFormats()));
}

Result<JobTable> ParseTrace(std::string_view contents, std::string_view source,
                            const TraceReadOptions& options) {
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) {
    SM_ASSIGN_OR_RETURN(format, DetectTraceFormat(contents, source));
  } else if (contents.substr(0, 4096).find('\0') != std::string_view::npos) {
    return Status::InvalidArgument(
        fmt::format("{}: looks like a binary file, not a job trace", source));
  }
  JobTable table;
  table.source = std::string(source);
  table.format = format;
  internal::ReadContext ctx(source, options, table);
  Status s = Status::Internal("unresolved trace format");
  for (const FormatInfo& f : kFormats) {
    if (f.format == format) s = f.read(contents, ctx);
  }
  if (!s.ok()) return s;
  return table;
}

Result<JobTable> ReadTrace(const std::string& path, const TraceReadOptions& options) {
  SM_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  return ParseTrace(contents, path, options);
}

}  // namespace schedmate::trace
