// Readers for the headerless text formats: Gavel .trace (tab-separated) and SWF (whitespace).

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/strings.h"
#include "trace/csv.h"
#include "trace/reader_internal.h"

namespace schedmate::trace::internal {
namespace {

bool IsBlankLine(std::string_view s) { return Trim(s).empty(); }

std::string Excerpt(std::string_view s) {
  std::string out(s.substr(0, 40));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

// "ResNet-50 (batch size 64)" -> model "ResNet-50", batch 64. Other shapes: model = whole text.
void SplitGavelJobType(std::string_view type, JobRecord& job) {
  type = Trim(type);
  const std::string_view marker = "(batch size ";
  size_t at = type.find(marker);
  if (at != std::string_view::npos && type.back() == ')') {
    int64_t b = 0;
    std::string_view num = type.substr(at + marker.size(), type.size() - 1 - at - marker.size());
    if (ParseIntField(num, b) && b > 0 && b <= INT32_MAX) {
      job.model = std::string(Trim(type.substr(0, at)));
      job.batch_size = static_cast<int32_t>(b);
      return;
    }
  }
  job.model = std::string(type);
}

}  // namespace

Status ReadGavelTrace(std::string_view contents, ReadContext& ctx) {
  LineCursor cursor(contents);
  std::string_view line;
  JobTable& table = ctx.table();
  ctx.ReserveForLines(contents);
  int64_t index = 0;  // data row index, the job id
  while (!ctx.Full() && cursor.Next(line)) {
    if (IsBlankLine(line)) continue;
    ++table.rows_read;
    const int64_t row_index = index++;
    std::vector<std::string_view> f = Split(line, '\t');
    if (f.size() != 7) {
      SM_RETURN_IF_ERROR(ctx.Malformed(
          cursor.line(), fmt::format("expected 7 tab-separated fields, got {}", f.size())));
      continue;
    }
    JobRecord job;
    job.id = std::to_string(row_index);
    SplitGavelJobType(f[0], job);
    job.name = std::string(Trim(f[1]));
    int64_t steps = 0, gpus = 0;
    double arrival = 0;
    std::string why;
    if (!ParseIntField(f[4], steps)) {
      why = fmt::format("total_steps: '{}' is not an integer", Excerpt(f[4]));
    } else if (steps < 0) {
      why = OutOfRange("total_steps", static_cast<double>(steps), 0, 9e15);
    } else if (!ParseRealField(f[5], arrival)) {
      why = fmt::format("arrival_time: '{}' is not a finite number", Excerpt(f[5]));
    } else if (arrival < 0 || arrival > kMaxTraceSeconds) {
      why = OutOfRange("arrival_time", arrival, 0, kMaxTraceSeconds);
    } else if (!ParseIntField(f[6], gpus)) {
      why = fmt::format("scale_factor: '{}' is not a GPU count", Excerpt(f[6]));
    } else if (gpus < 0 || gpus > kMaxTraceJobGpus) {
      why = OutOfRange("scale_factor", static_cast<double>(gpus), 0,
                       static_cast<double>(kMaxTraceJobGpus));
    }
    int64_t us = 0;
    if (why.empty() && !SecondsToMicros(arrival, us)) why = "arrival_time out of range";
    if (!why.empty()) {
      SM_RETURN_IF_ERROR(ctx.Malformed(cursor.line(), why));
      continue;
    }
    job.iterations = steps;
    job.submit = SimTime::FromMicros(us);
    job.gpus = GpuAmount::Whole(gpus);
    job.duration = Duration::Zero();  // not in the file (FormatHasDurations(kGavel) == false)
    table.jobs.push_back(std::move(job));
  }
  return Status::Ok();
}

Status ReadSwf(std::string_view contents, ReadContext& ctx) {
  LineCursor cursor(contents);
  std::string_view line;
  JobTable& table = ctx.table();
  ctx.ReserveForLines(contents);
  const bool procs_as_gpus = ctx.options().processors_as_gpus;
  std::vector<std::string_view> f;
  f.reserve(20);
  while (!ctx.Full() && cursor.Next(line)) {
    std::string_view t = Trim(line);
    if (t.empty() || t.front() == ';') continue;
    ++table.rows_read;
    SplitWhitespace(t, f);
    if (f.size() != 18) {
      SM_RETURN_IF_ERROR(
          ctx.Malformed(cursor.line(), fmt::format("expected 18 SWF fields, got {}", f.size())));
      continue;
    }
    double v[18];
    std::string why;
    for (size_t k = 0; k < 18; ++k) {
      if (!ParseRealField(f[k], v[k])) {
        why = fmt::format("field {}: '{}' is not a number", k + 1, Excerpt(f[k]));
        break;
      }
    }
    if (why.empty() && (v[1] < 0 || v[1] > kMaxTraceSeconds)) {
      why = OutOfRange("field 2 (submit time)", v[1], 0, kMaxTraceSeconds);
    }
    if (!why.empty()) {
      SM_RETURN_IF_ERROR(ctx.Malformed(cursor.line(), why));
      continue;
    }
    if (v[3] == -1) {
      ctx.Unusable(cursor.line(), "run time unknown (-1)");
      continue;
    }
    if (v[3] < 0 || v[3] > kMaxTraceSeconds) {
      SM_RETURN_IF_ERROR(ctx.Malformed(
          cursor.line(), OutOfRange("field 4 (run time)", v[3], 0, kMaxTraceSeconds)));
      continue;
    }
    // Field 9 (requested time): <= 0 means none.
    if (v[8] > kMaxTraceSeconds) {
      SM_RETURN_IF_ERROR(ctx.Malformed(
          cursor.line(), OutOfRange("field 9 (requested time)", v[8], 0, kMaxTraceSeconds)));
      continue;
    }
    const bool field5 = v[4] >= 0;
    const double procs = field5 ? v[4] : v[7];
    if (procs < 0) {
      ctx.Unusable(cursor.line(), "processor count unknown (fields 5 and 8 are -1)");
      continue;
    }
    // As GPUs each processor is one GPU slot: the job GPU bound applies.
    const double max_procs = procs_as_gpus ? static_cast<double>(kMaxTraceJobGpus) : INT32_MAX;
    if (procs > max_procs) {
      SM_RETURN_IF_ERROR(ctx.Malformed(
          cursor.line(),
          OutOfRange(field5 ? "field 5 (allocated processors)" : "field 8 (requested processors)",
                     procs, 0, max_procs)));
      continue;
    }
    JobRecord job;
    job.id = std::string(f[0]);
    int64_t submit_us = 0, run_us = 0;
    if (!SecondsToMicros(v[1], submit_us) || !SecondsToMicros(v[3], run_us)) {
      SM_RETURN_IF_ERROR(ctx.Malformed(cursor.line(), "time out of range"));
      continue;
    }
    job.submit = SimTime::FromMicros(submit_us);
    job.duration = Duration::Micros(run_us);
    job.cpus = static_cast<int32_t>(procs);
    if (procs_as_gpus) job.gpus = GpuAmount::Whole(job.cpus);
    if (v[8] > 0) {
      int64_t limit_us = 0;
      if (SecondsToMicros(v[8], limit_us)) job.time_limit = Duration::Micros(limit_us);
    }
    // Field 11: 1 completed, 0 failed, 5 cancelled (SWF v2); others unknown.
    if (v[10] == 1)
      job.state = JobState::kCompleted;
    else if (v[10] == 0)
      job.state = JobState::kFailed;
    else if (v[10] == 5)
      job.state = JobState::kCancelled;
    if (v[11] >= 0) job.user = std::string(f[11]);
    table.jobs.push_back(std::move(job));
  }
  return Status::Ok();
}

}  // namespace schedmate::trace::internal
