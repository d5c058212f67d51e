// The header-driven CSV readers: Lucid/Helios, GPW (+SDSC95), Chronus/Tiresias, Pollux/Sia and
// Alibaba openb. Column meanings are documented in trace_reader.h.

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/strings.h"
#include "trace/csv.h"
#include "trace/reader_internal.h"

namespace schedmate::trace::internal {
namespace {

// What a row callback decided.
enum class RowOutcome { kAccept, kUnusable };

struct RowHandlers {
  // Checks the header (required columns); returns a reason on failure, "" when fine.
  std::function<std::string(const HeaderMap&)> check_header;
  // Fills `job`; problems go to `p` (malformed) or the returned kUnusable + `unusable_reason`.
  std::function<RowOutcome(RowParser& p, JobRecord& job, std::string& unusable_reason)> parse_row;
};

std::string MissingColumns(const HeaderMap& h,
                           std::initializer_list<std::initializer_list<std::string_view>> groups) {
  std::string missing;
  for (auto names : groups) {
    if (h.Find(names) >= 0) continue;
    if (!missing.empty()) missing += ", ";
    bool first = true;
    for (auto n : names) {
      if (!first) missing += "|";
      missing += n;
      first = false;
    }
  }
  return missing.empty() ? "" : "header lacks required column(s): " + missing;
}

Status ReadCsv(std::string_view contents, ReadContext& ctx, const RowHandlers& handlers) {
  CsvCursor cursor(contents, ',');
  std::vector<std::string_view> fields;
  fields.reserve(32);
  // Header: the first non-blank record.
  bool have_header = false;
  while (cursor.Next(fields)) {
    if (!CsvCursor::IsBlank(fields)) {
      have_header = true;
      break;
    }
  }
  if (!have_header) return ctx.FileError(1, "empty file: no header row");
  if (!cursor.error().empty()) return ctx.FileError(cursor.line(), "header: " + cursor.error());
  HeaderMap header(fields);
  const int64_t header_line = cursor.line();
  if (std::string why = handlers.check_header(header); !why.empty()) {
    return ctx.FileError(header_line, why);
  }
  const size_t ncols = header.size();
  JobTable& table = ctx.table();
  ctx.ReserveForLines(contents);
  std::string unusable;
  while (!ctx.Full() && cursor.Next(fields)) {
    if (CsvCursor::IsBlank(fields)) continue;
    ++table.rows_read;
    const int64_t line = cursor.line();
    if (!cursor.error().empty()) {
      SM_RETURN_IF_ERROR(ctx.Malformed(line, cursor.error()));
      continue;
    }
    if (fields.size() != ncols) {
      // Tolerate trailing empty fields ("a,b,c,,"), nothing else.
      bool extra_empty =
          fields.size() > ncols &&
          std::all_of(fields.begin() + static_cast<std::ptrdiff_t>(ncols), fields.end(),
                      [](std::string_view f) { return Trim(f).empty(); });
      if (!extra_empty) {
        SM_RETURN_IF_ERROR(
            ctx.Malformed(line, fmt::format("expected {} fields, got {}", ncols, fields.size())));
        continue;
      }
    }
    RowParser p(fields, header);
    JobRecord& job = table.jobs.emplace_back();
    unusable.clear();
    RowOutcome outcome = handlers.parse_row(p, job, unusable);
    if (!p.ok()) {
      table.jobs.pop_back();
      SM_RETURN_IF_ERROR(ctx.Malformed(line, p.error()));
      continue;
    }
    if (outcome == RowOutcome::kUnusable) {
      table.jobs.pop_back();
      ctx.Unusable(line, unusable);
    }
  }
  return Status::Ok();
}

// Shared checks. Out-of-range values leave the field at its default (the row is dropped anyway).
void SetGpus(RowParser& p, JobRecord& job, double gpus, std::string_view column) {
  if (CheckRange(p, column, gpus, 0, static_cast<double>(kMaxTraceJobGpus))) {
    job.gpus = GpuAmount::FromDouble(gpus);
  }
}
// Seconds in 0..kMaxTraceSeconds to microseconds; 0 (and a recorded problem) otherwise.
int64_t CheckedMicros(RowParser& p, double seconds, std::string_view column) {
  int64_t us = 0;
  if (CheckRange(p, column, seconds, 0, kMaxTraceSeconds) && !SecondsToMicros(seconds, us)) {
    p.Fail(OutOfRange(column, seconds, 0, kMaxTraceSeconds));  // not reached for these bounds
  }
  return us;
}
void SetSubmitSeconds(RowParser& p, JobRecord& job, double seconds, std::string_view column) {
  job.submit = SimTime::FromMicros(CheckedMicros(p, seconds, column));
}
void SetDurationSeconds(RowParser& p, JobRecord& job, double seconds, std::string_view column) {
  job.duration = Duration::Micros(CheckedMicros(p, seconds, column));
}

}  // namespace

// ---- Lucid / Helios -------------------------------------------------------------------------

Status ReadLucidCsv(std::string_view contents, ReadContext& ctx) {
  struct Cols {
    int id, user, vc, name, gpus, cpus, state, submit_s, submit_time, dur, dataset, model, batch,
        amp, speed, gpu_util, gmem_util, gmem;
  } c{};
  bool absolute_times = false;
  int64_t min_submit_us = INT64_MAX;
  RowHandlers h;
  h.check_header = [&](const HeaderMap& hm) {
    std::string missing = MissingColumns(
        hm, {{"job_id"}, {"gpu_num"}, {"submit_s", "submit_time"}, {"duration_s", "duration"}});
    if (!missing.empty()) return missing;
    c.id = hm.Find({"job_id"});
    c.user = hm.Find({"user"});
    c.vc = hm.Find({"vc"});
    c.name = hm.Find({"jobname", "job_name", "name"});
    c.gpus = hm.Find({"gpu_num"});
    c.cpus = hm.Find({"cpu_num"});
    c.state = hm.Find({"state", "status"});
    c.submit_s = hm.Find({"submit_s"});
    c.submit_time = hm.Find({"submit_time"});
    c.dur = hm.Find({"duration_s", "duration"});
    c.dataset = hm.Find({"dataset"});
    c.model = hm.Find({"model"});
    c.batch = hm.Find({"batchsize", "batch_size"});
    c.amp = hm.Find({"amp"});
    c.speed = hm.Find({"speed"});
    c.gpu_util = hm.Find({"gpu_util"});
    c.gmem_util = hm.Find({"gmem_util"});
    c.gmem = hm.Find({"gmem"});
    absolute_times = c.submit_s < 0;
    return std::string();
  };
  h.parse_row = [&](RowParser& p, JobRecord& job, std::string&) {
    job.id = std::string(p.Text(c.id));
    if (job.id.empty()) p.Fail("job_id is missing");
    job.user = std::string(p.Text(c.user));
    job.vc = std::string(p.Text(c.vc));
    job.name = std::string(p.Text(c.name));
    SetGpus(p, job, p.Real(c.gpus, /*required=*/true), "gpu_num");
    job.cpus = ToInt32(p, p.Int(c.cpus, false), "cpu_num");
    job.state = ParseJobState(p.Text(c.state));
    if (absolute_times) {
      int64_t us = 0;
      std::string_view t = p.Text(c.submit_time);
      if (t.empty()) {
        p.Fail("submit_time is missing");
      } else if (!ParseDateTimeUtc(t, us)) {
        p.Fail(fmt::format("submit_time: '{}' is not YYYY-MM-DD HH:MM:SS", t.substr(0, 40)));
      } else if (us < 0 || static_cast<double>(us) > kMaxTraceSeconds * 1e6) {
        // Relative times then stay within 0..kMaxTraceSeconds.
        p.Fail(fmt::format("submit_time: value '{}' out of range (1970-01-01 .. +{} s)",
                           t.substr(0, 40), kMaxTraceSeconds));
        us = 0;
      }
      job.submit = SimTime::FromMicros(us);  // absolute for now; made relative after the read
    } else {
      SetSubmitSeconds(p, job, p.Real(c.submit_s, true), "submit_s");
    }
    SetDurationSeconds(p, job, p.Real(c.dur, true), p.ColumnName(c.dur));
    job.dataset = std::string(p.Text(c.dataset));
    job.model = std::string(p.Text(c.model));
    job.batch_size = ToInt32(p, p.Int(c.batch, false), "batchsize");
    const int64_t amp = p.Int(c.amp, false, -1);
    if (amp < -1 || amp > 1) p.Fail(fmt::format("amp: {} is not 0 or 1", amp));
    job.amp = static_cast<int8_t>(amp);
    // Profile columns: any finite value is kept (they are labels for the advisor, not counts).
    job.speed = p.Real(c.speed, false);
    job.gpu_util = p.Real(c.gpu_util, false);
    job.gmem_util = p.Real(c.gmem_util, false);
    job.gmem_mib = p.Real(c.gmem, false);
    if (p.ok() && absolute_times) min_submit_us = std::min(min_submit_us, job.submit.micros());
    return RowOutcome::kAccept;
  };
  SM_RETURN_IF_ERROR(ReadCsv(contents, ctx, h));
  if (absolute_times) {
    for (auto& job : ctx.table().jobs) {
      job.submit = SimTime::FromMicros(job.submit.micros() - min_submit_us);
    }
  }
  return Status::Ok();
}

// ---- DIR-LAB GPW (and SDSC95) ---------------------------------------------------------------

Status ReadGpwCsv(std::string_view contents, ReadContext& ctx) {
  int id = -1, user = -1, gpus = -1, cpus = -1, nodes = -1, interval = -1, run = -1, wall = -1,
      status = -1;
  bool sdsc = false;
  int64_t clock_us = 0;  // cumulative submit time
  const bool procs_as_gpus = ctx.options().processors_as_gpus;
  RowHandlers h;
  h.check_header = [&](const HeaderMap& hm) {
    sdsc = hm.Find({"job_number"}) >= 0;
    if (sdsc) {
      std::string missing = MissingColumns(
          hm, {{"job_number"}, {"interval"}, {"run_time"}, {"number_of_allocated_processors"}});
      if (!missing.empty()) return missing;
      id = hm.Find({"job_number"});
      interval = hm.Find({"interval"});
      run = hm.Find({"run_time"});
      cpus = hm.Find({"number_of_allocated_processors"});
      return std::string();
    }
    std::string missing = MissingColumns(hm, {{"u_id"}, {"gpu_num"}, {"interval"}, {"run_time"}});
    if (!missing.empty()) return missing;
    id = hm.Find({"u_id"});
    user = hm.Find({"user"});
    gpus = hm.Find({"gpu_num"});
    cpus = hm.Find({"cpu_num"});
    nodes = hm.Find({"node_num"});
    interval = hm.Find({"interval"});
    run = hm.Find({"run_time"});
    wall = hm.Find({"wall_time"});
    status = hm.Find({"new_status", "status"});
    return std::string();
  };
  h.parse_row = [&](RowParser& p, JobRecord& job, std::string& unusable) {
    job.id = std::string(p.Text(id));
    if (job.id.empty()) p.Fail("job id is missing");
    const int64_t gap_us = CheckedMicros(p, p.Real(interval, true), "interval");
    const double run_s = p.Real(run, true);
    if (!p.ok()) return RowOutcome::kAccept;
    if (static_cast<double>(clock_us + gap_us) > kMaxTraceSeconds * 1e6) {
      p.Fail(fmt::format("interval: submit time (sum of intervals) {} s out of range (0..{})",
                         static_cast<double>(clock_us + gap_us) / 1e6, kMaxTraceSeconds));
      return RowOutcome::kAccept;
    }
    // The interval counts even when the row is unusable: later jobs keep their submit times.
    clock_us += gap_us;
    job.submit = SimTime::FromMicros(clock_us);
    if (sdsc) {
      if (run_s == -1) {
        unusable = "run time unknown (-1)";
        return RowOutcome::kUnusable;
      }
      SetDurationSeconds(p, job, run_s, "Run_Time");
      job.cpus = ToInt32(p, p.Int(cpus, true), "Number_of_Allocated_Processors");
      if (procs_as_gpus) SetGpus(p, job, job.cpus, "Number_of_Allocated_Processors");
      return RowOutcome::kAccept;
    }
    SetDurationSeconds(p, job, run_s, "run_time");
    job.user = std::string(p.Text(user));
    SetGpus(p, job, p.Real(gpus, true), "gpu_num");
    job.cpus = ToInt32(p, p.Int(cpus, false), "cpu_num");
    job.nodes = ToInt32(p, p.Int(nodes, false), "node_num");
    const double wall_s = p.Real(wall, false);
    // wall_time <= 0: no limit recorded.
    if (wall_s > 0) job.time_limit = Duration::Micros(CheckedMicros(p, wall_s, "wall_time"));
    job.state = ParseJobState(p.Text(status));
    return RowOutcome::kAccept;
  };
  return ReadCsv(contents, ctx, h);
}

// ---- Chronus / Tiresias ---------------------------------------------------------------------

Status ReadChronusCsv(std::string_view contents, ReadContext& ctx) {
  int id = -1, user = -1, gpus = -1, submit = -1, iters = -1, model = -1, dur = -1;
  RowHandlers h;
  h.check_header = [&](const HeaderMap& hm) {
    std::string missing =
        MissingColumns(hm, {{"job_id"}, {"num_gpu"}, {"submit_time"}, {"duration"}});
    if (!missing.empty()) return missing;
    id = hm.Find({"job_id"});
    user = hm.Find({"user"});
    gpus = hm.Find({"num_gpu"});
    submit = hm.Find({"submit_time"});
    iters = hm.Find({"iterations"});
    model = hm.Find({"model_name"});
    dur = hm.Find({"duration"});
    return std::string();
  };
  h.parse_row = [&](RowParser& p, JobRecord& job, std::string&) {
    job.id = std::string(p.Text(id));
    if (job.id.empty()) p.Fail("job_id is missing");
    job.user = std::string(p.Text(user));
    job.vc = job.user;  // Chronus' "user" column is the Philly VC
    SetGpus(p, job, p.Real(gpus, true), "num_gpu");
    SetSubmitSeconds(p, job, p.Real(submit, true), "submit_time");
    SetDurationSeconds(p, job, p.Real(dur, true), "duration");
    job.iterations = p.Int(iters, false);
    CheckRange(p, "iterations", static_cast<double>(job.iterations), 0, 9e15);
    job.model = std::string(p.Text(model));
    return RowOutcome::kAccept;
  };
  return ReadCsv(contents, ctx, h);
}

// ---- Pollux / Sia ---------------------------------------------------------------------------

Status ReadPolluxCsv(std::string_view contents, ReadContext& ctx) {
  int name = -1, time = -1, app = -1, replicas = -1, batch = -1;
  RowHandlers h;
  h.check_header = [&](const HeaderMap& hm) {
    std::string missing =
        MissingColumns(hm, {{"name"}, {"time"}, {"application"}, {"num_replicas"}});
    if (!missing.empty()) return missing;
    name = hm.Find({"name"});
    time = hm.Find({"time"});
    app = hm.Find({"application"});
    replicas = hm.Find({"num_replicas"});
    batch = hm.Find({"batch_size"});
    return std::string();
  };
  h.parse_row = [&](RowParser& p, JobRecord& job, std::string&) {
    job.id = std::string(p.Text(name));
    if (job.id.empty()) p.Fail("name is missing");
    job.name = job.id;
    SetSubmitSeconds(p, job, p.Real(time, true), "time");
    job.model = std::string(p.Text(app));
    SetGpus(p, job, p.Real(replicas, true), "num_replicas");
    job.batch_size = ToInt32(p, p.Int(batch, false), "batch_size");
    job.duration = Duration::Zero();  // not in the file (FormatHasDurations(kPollux) == false)
    return RowOutcome::kAccept;
  };
  return ReadCsv(contents, ctx, h);
}

// ---- Alibaba openb --------------------------------------------------------------------------

Status ReadOpenbCsv(std::string_view contents, ReadContext& ctx) {
  int name = -1, cpu_milli = -1, num_gpu = -1, gpu_milli = -1, phase = -1, created = -1,
      deleted = -1, scheduled = -1;
  RowHandlers h;
  h.check_header = [&](const HeaderMap& hm) {
    // The multigpu* lists carry no time columns at all (static packing inputs): accepted, and
    // every row is then skipped as unusable.
    std::string missing = MissingColumns(hm, {{"name"}, {"num_gpu"}});
    if (!missing.empty()) return missing;
    name = hm.Find({"name"});
    cpu_milli = hm.Find({"cpu_milli"});
    num_gpu = hm.Find({"num_gpu"});
    gpu_milli = hm.Find({"gpu_milli"});
    phase = hm.Find({"pod_phase"});
    created = hm.Find({"creation_time"});
    deleted = hm.Find({"deletion_time"});
    scheduled = hm.Find({"scheduled_time"});
    return std::string();
  };
  h.parse_row = [&](RowParser& p, JobRecord& job, std::string& unusable) {
    job.id = std::string(p.Text(name));
    if (job.id.empty()) p.Fail("name is missing");
    job.name = job.id;
    const int64_t n = p.Int(num_gpu, true);
    const int64_t share = p.Int(gpu_milli, false, 1000);
    if (CheckRange(p, "num_gpu", static_cast<double>(n), 0,
                   static_cast<double>(kMaxTraceJobGpus)) &&
        CheckRange(p, "gpu_milli", static_cast<double>(share), 0, 1000)) {
      job.gpus = GpuAmount::Milli(n * share);
    }
    const int64_t cm = p.Int(cpu_milli, false);
    constexpr double kMaxCpuMilli = 1000.0 * std::numeric_limits<int32_t>::max();
    if (CheckRange(p, "cpu_milli", static_cast<double>(cm), 0, kMaxCpuMilli)) {
      job.cpus = ToInt32(p, (cm + 999) / 1000, "cpu_milli");
    }
    job.state = ParseJobState(p.Text(phase));
    const bool has_created = !p.Text(created).empty();  // Text(-1) is "": column absent
    const bool has_deleted = !p.Text(deleted).empty();
    const double c = p.Real(created, false);
    const double d = p.Real(deleted, false);
    const bool has_sched = !p.Text(scheduled).empty();
    const double s = p.Real(scheduled, false);
    if (!p.ok()) return RowOutcome::kAccept;
    if (created < 0 || deleted < 0) {
      unusable = "no creation_time/deletion_time columns (a static pod list, not a job trace)";
      return RowOutcome::kUnusable;
    }
    if (!has_created || !has_deleted) {
      unusable = has_created ? "deletion_time missing" : "creation_time missing";
      return RowOutcome::kUnusable;
    }
    SetSubmitSeconds(p, job, c, "creation_time");
    CheckRange(p, "deletion_time", d, 0, kMaxTraceSeconds);
    if (has_sched) CheckRange(p, "scheduled_time", s, 0, kMaxTraceSeconds);
    const double start = has_sched ? s : c;
    if (has_sched && s < c) p.Fail("scheduled_time before creation_time");
    if (d < start) {
      p.Fail(fmt::format("deletion_time {} before {} {}", d,
                         has_sched ? "scheduled_time" : "creation_time", start));
    }
    SetDurationSeconds(p, job, d - start, "deletion_time");
    return RowOutcome::kAccept;
  };
  return ReadCsv(contents, ctx, h);
}

}  // namespace schedmate::trace::internal
