#pragma once
// Trace readers: every supported job-trace format into one core JobTable, in FILE ORDER (rows that
// share a submit time keep the order they have in the file; the simulator's tie rule relies on it).
//
// Formats (TraceFormat, see core/job.h) and how their columns map to JobRecord:
//   kLucid    Lucid/Helios CSV, by header name. Two variants:
//             - venus_sept2020_jobs.csv: submit_s, duration_s (seconds, integer or decimal);
//             - Lucid's cluster_full_log.csv: submit_time "YYYY-MM-DD HH:MM:SS" (read as UTC) and
//               duration. Submit times become seconds since the EARLIEST submit_time in the file.
//               That file carries an anchor row (job_id 0, user anchor_user_not_in_trace, at
//               2020-04-01 00:00:00) which is kept as an ordinary job; because it is the earliest
//               row, times are Lucid's normalized seconds (= venus submit_s + 13,219,200).
//             Columns: job_id, gpu_num, submit_*, duration* required; user, vc, jobname, cpu_num,
//             state, dataset, model, batchsize, amp, speed, gpu_util, gmem_util, gmem optional.
//             gpu_num may be decimal (fractional GPUs; the writer emits that for shared-GPU jobs).
//   kGpw      DIR-LAB Gen-Parallel-Workloads CSV: u_id,user,gpu_num,cpu_num,node_num,interval,
//             run_time,wall_time,new_status. submit = cumulative sum of interval (s);
//             duration = run_time; time_limit = wall_time when > 0; state from new_status.
//             Also the SDSC95 variant Job_Number,Interval,Run_Time,Number_of_Allocated_Processors
//             (Run_Time -1 = unknown: such rows are skipped and counted, see below).
//   kChronus  Chronus (trace_job_Philly_*.csv) and Tiresias sample CSVs: job_id, num_gpu,
//             submit_time (s), duration (s) required; user (Chronus: the Philly VC, so it fills
//             both user and vc), iterations, model_name optional.
//   kGavel    Gavel .trace: tab-separated, no header, 7 fields job_type, command, num_steps_arg,
//             needs_data_dir, total_steps, arrival_time (s), scale_factor (= GPUs). The file has
//             NO duration: it is left 0 (FormatHasDurations() is false) unless a Gavel
//             throughput file is applied afterwards (gavel_throughputs.h), iterations =
//             total_steps, model/batch_size from job_type "ResNet-50 (batch size 64)",
//             name = command, id = 0-based row index. Gavel's newer 10-field rows are rejected.
//   kPollux   Pollux/Sia workload CSV: name,time,application,num_replicas,batch_size. The file
//             has NO duration: duration is left 0 (FormatHasDurations() is false), model =
//             application, gpus = num_replicas. A simulator must reject such jobs or supply its
//             own duration model.
//   kOpenb    Alibaba openb pod lists: name, cpu_milli, num_gpu, gpu_milli, gpu_spec, qos,
//             pod_phase, creation_time, deletion_time, scheduled_time. gpus = num_gpu * gpu_milli
//             milli-GPU (gpu_milli is the per-GPU share; 1000 = whole); submit = creation_time;
//             duration = deletion - scheduled, or deletion - creation when never scheduled;
//             cpus = ceil(cpu_milli / 1000). Rows with a missing creation/deletion time are
//             skipped and counted; so are all rows of the multigpu* lists, which have no time
//             columns at all (static packing inputs, not job traces).
//   kSwf      Standard Workload Format: 18 whitespace-separated fields, ';' comments. submit =
//             field 2, duration = field 4, processors = field 5 (field 8 when 5 is -1),
//             time_limit = field 9, state from field 11, user = field 12. Rows with run time -1
//             are skipped and counted.
//   kSacct    Slurm accounting exports, either `sacct -P -o ...` (pipe-separated, header row;
//             JobID, Submit, Start, Elapsed or End, AllocTRES or ReqTRES required; User, Account,
//             Partition, QOS, JobName, Eligible, End, Timelimit, NNodes, State optional; other
//             columns such as Priority ignored) or `sacct --json` (a "jobs" array; numbers plain
//             or {set, infinite, number}). id = JobID ("123", array task "123_4", het "123+1");
//             steps ("123.batch", "123.0", "123_4.extern") are not jobs: skipped, not counted;
//             vc = Partition; gpus = gres/gpu of AllocTRES (else ReqTRES; typed gres/gpu:a100
//             entries summed when there is no plain one); cpus = cpu=, nodes = NNodes (else
//             node=); duration = Elapsed (else End - Start); time_limit = Timelimit
//             ("[D-]HH:MM:SS", minutes, UNLIMITED = none; JSON: minutes). submit = Eligible when
//             known and not before Submit (holds, dependencies, --begin), else Submit, as seconds
//             since the earliest Submit in the file; observed_wait = Start - that. Jobs that never
//             started, jobs still pending or running and pending array ranges ("123_[1-9]") are
//             skipped and counted. JSON errors name the line of the job's "job_id".
//
// Fields: text fields are trimmed of outer blanks (also inside quotes); empty optional fields take
// the JobRecord defaults.
//
// Errors: a row that cannot be parsed (missing/extra columns, non-numeric numbers, negative
// duration or GPU count, bad date, quoting error) or that holds a value out of range is
// "malformed": with skip_malformed == false the
// read fails with kInvalidArgument "path:line: reason"; with skip_malformed == true the row is
// skipped, counted in JobTable::rows_skipped and its reason kept (first max_skip_reasons). Rows
// that are well-formed but unusable by design of the format (unknown run time, missing pod
// times) are ALWAYS skipped and counted the same way, never an error. Blank lines are ignored.
// A file whose header matches no format fails with kInvalidArgument listing the formats.
//
// Ranges: numbers must be finite, and "path:line: <field>: value V out of range (lo..hi)" is the
// error for GPUs per job outside 0..kMaxTraceJobGpus, times (submit times, durations, intervals,
// time limits, pod times) outside 0..kMaxTraceSeconds (Lucid's submit_time: 1970-01-01 plus that
// span), counts (CPUs, nodes, batch sizes, SWF/SDSC processors) outside 0..INT32_MAX, and
// cpu_milli/gpu_milli outside what their scale allows. The bounds keep every value exact in the
// fixed-point types (GpuAmount, int64 microseconds) with room for the simulator's arithmetic.
//
// Thread-safety: all functions are reentrant; they share no state.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/job.h"
#include "core/result.h"

namespace schedmate::trace {

// Largest GPU count of one job a trace may give (SWF/SDSC processors too, when they count as GPUs).
inline constexpr int64_t kMaxTraceJobGpus = 1'000'000;
// Largest time in seconds a trace may give (submit times, durations, limits): about 317 years.
inline constexpr double kMaxTraceSeconds = 1e10;

struct TraceReadOptions {
  TraceFormat format = TraceFormat::kAuto;  // kAuto: sniff by header row / extension
  bool skip_malformed = false;
  int64_t max_jobs = 0;          // stop after this many jobs (0 = no limit)
  size_t max_skip_reasons = 10;  // how many skip reasons to keep in JobTable::skip_reasons
  // SWF and SDSC95 describe CPU jobs. When true (default) each processor also counts as one GPU
  // slot, so a GPU simulator can replay HPC logs; cpus is filled either way.
  bool processors_as_gpus = true;
};

// Reads the whole file at `path`. kNotFound when missing.
Result<JobTable> ReadTrace(const std::string& path, const TraceReadOptions& options = {});

// Same, from contents already in memory; `source` names it in errors and JobTable::source.
Result<JobTable> ParseTrace(std::string_view contents, std::string_view source,
                            const TraceReadOptions& options = {});

// The format of `contents` (its first lines) given its file name `path` (extension hints: .swf,
// .trace). kInvalidArgument naming the formats when nothing matches.
Result<TraceFormat> DetectTraceFormat(std::string_view contents, std::string_view path);

// False for formats whose files carry no run time (Pollux/Sia): their durations are 0.
bool FormatHasDurations(TraceFormat format);

// "lucid (Lucid/Helios CSV: job_id,...,submit_s|submit_time,duration_s|duration)", one line per
// format, for help texts and detection errors.
std::string DescribeTraceFormats();

}  // namespace schedmate::trace
