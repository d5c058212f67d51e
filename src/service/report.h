#pragma once
// The operator's report over a period (`schedmate report --since 7d`): what the service's store
// recorded, summed up. Everything here is a pure function of a ReportInput (no Slurm, no clock),
// so it is unit-tested on hand-made inputs; LoadReportInput reads one from the stores.
//
// What is counted, and how (all times clipped to [since, until)):
//   GPU-hours   allocated = GPUs x the part of each ended run inside the period (start = finish -
//               run time, as the companion records them); used = allocated x the job's tracked GPU
//               utilisation, only for jobs that have one. A row with no tracked job has used =
//               unknown (null), never an estimate. Jobs that have not ended (running or pending
//               at `until`, or whose end the store never saw) are counted apart, not in GPU-hours.
//   waste       idle_gpus: allocated x (1 - utilisation) of tracked jobs (unknown when none is);
//               over_requested: unknown (the store records no per-GPU use); failed_runs: ended
//               FAILED, NODE_FAIL or OUT_OF_MEMORY; time_limit_kills: ended TIMEOUT; stalled: GPUs
//               x the time from a tracker sample that said "stalled" to the job's next sample (or
//               its end, for its last sample).
//   queueing    start - submit of the runs that started in the period, by partition (avg, p50,
//               p95 with sim::Quantile's linear interpolation).
//   failures    the failure handler's records made in the period, by class (infra, app, unknown)
//               and category; GPU-hours of the job's recorded run when the job is stored.
//   actions     by kind and outcome (dry runs apart).
//   accuracy    COMPLETED runs that ended in the period with a prediction: the latest prediction
//               made at or before the run's start (else the earliest one); within x2 means
//               0.5 <= actual/predicted <= 2; coverage: low (p10) <= actual <= high (p90).
//
// Deterministic: rows sorted by name ("" is shown as "(none)"), categories by name.

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"
#include "service/service_store.h"
#include "store/history_store.h"

namespace schedmate::service {

// A report bound: a duration back from `now` ("7d", "36h", "90m", "2w", "45s"), a UTC date
// ("2026-11-01", midnight) or a UTC date and time ("2026-11-01T06:30", "2026-11-01T06:30:15",
// optionally ending in "Z"), or "now". kInvalidArgument naming `flag` and the accepted forms.
Result<SimTime> ParseReportTime(std::string_view text, SimTime now, std::string_view flag);

struct ReportInput {
  SimTime since, until;
  std::vector<store::StoredJob> jobs;                                       // any order
  std::map<std::string, std::vector<store::StoredPrediction>> predictions;  // by job id
  std::map<std::string, std::vector<MetricSample>> samples;  // by job id, oldest first
  std::vector<FailureRecord> failures;
  std::vector<ActionRecord> actions;
  // Mean GPU utilisation (0..1) per job id, where something tracked it.
  std::map<std::string, double> gpu_utilisation;
  std::vector<std::string> notes;  // what the loader could not read, for people
};

// Reads everything relevant to [since, until) from the stores: jobs submitted before `until`,
// their predictions and tracker samples, failures and actions recorded in the period, and each
// job's mean GPU utilisation over the usage probes recorded in the period (none: unknown, and a
// note says so when no job has any). One cluster's: `service`'s (service_store.h); for another
// cluster than the default one, only its jobs of the shared history.
Result<ReportInput> LoadReportInput(store::HistoryStore& history, ServiceStore& service,
                                    SimTime since, SimTime until);

struct GpuHoursRow {
  std::string name;  // user or partition
  int64_t jobs = 0;  // ended runs with time in the period
  double allocated_gpu_hours = 0;
  std::optional<double> used_gpu_hours;  // over tracked jobs only; nullopt: none tracked
  double tracked_gpu_hours = 0;          // the allocated GPU-hours that have a utilisation
};

struct WasteRow {
  std::string category;  // idle_gpus | over_requested | failed_runs | time_limit_kills | stalled
  std::optional<double> gpu_hours;  // nullopt: unknown
  int64_t jobs = 0;
  std::string basis;  // how it was counted, or why it is unknown
};

struct QueueRow {
  std::string partition;  // "(all)" for the total row
  int64_t jobs = 0;
  double avg_wait_s = 0, p50_wait_s = 0, p95_wait_s = 0, max_wait_s = 0;
};

struct FailureRow {
  std::string cls;  // infra | app | unknown
  std::string category;
  int64_t failures = 0;
  double gpu_hours = 0;
};

struct ActionRow {
  std::string kind, outcome;
  int64_t count = 0, dry_run = 0;
};

struct AccuracySummary {
  int64_t jobs = 0;                      // completed runs with a prediction
  int64_t ended_without_prediction = 0;  // completed runs with none
  int64_t not_completed = 0;             // runs that ended otherwise (not scored)
  std::optional<double> within_2x;       // fraction; nullopt when jobs == 0
  std::optional<double> median_abs_log2;
  std::optional<double> p10_p90_coverage;
  std::vector<double> ratios;  // actual / predicted, ascending (the CDF plot)
};

struct Report {
  SimTime since, until;
  int64_t runs_in_period = 0;   // ended runs with time in the period
  int64_t unfinished_jobs = 0;  // submitted before until, not ended (not in GPU-hours)
  double allocated_gpu_hours = 0;
  std::optional<double> used_gpu_hours;
  double tracked_gpu_hours = 0;
  std::vector<GpuHoursRow> by_user, by_partition;
  std::vector<WasteRow> waste;
  std::vector<QueueRow> queueing;                      // partitions by name, then "(all)"
  std::map<std::string, std::vector<double>> waits_s;  // per partition, ascending (plots)
  std::vector<FailureRow> failures;
  int64_t failures_infra = 0, failures_app = 0, failures_unknown = 0;
  std::vector<ActionRow> actions;
  AccuracySummary accuracy;
  // Allocated GPU-hours per UTC day of the period, per partition (plots): day start -> hours.
  std::map<std::string, std::map<int64_t, double>> daily_gpu_hours;
  std::vector<std::string> notes;
};

Report BuildReport(const ReportInput& input);

// Stable field names: {"since", "until" (Unix seconds), "runs_in_period", "unfinished_jobs",
// "gpu_hours": {"allocated", "used", "tracked"}, "by_user"/"by_partition": [{"name", "jobs",
// "allocated_gpu_hours", "used_gpu_hours", "tracked_gpu_hours"}], "waste": [{"category",
// "gpu_hours", "jobs", "basis"}], "queueing": [{"partition", "jobs", "avg_wait_s", "p50_wait_s",
// "p95_wait_s", "max_wait_s"}], "failures": {"infra", "app", "unknown", "by_cause": [{"class",
// "category", "failures", "gpu_hours"}]}, "actions": [{"kind", "outcome", "count", "dry_run"}],
// "prediction_accuracy": {"jobs", "ended_without_prediction", "not_completed", "within_2x",
// "median_abs_log2_ratio", "p10_p90_coverage"}, "notes": [...]}. Unknown values are null.
nlohmann::json ReportToJson(const Report& r);

// Aligned plain-text tables.
std::string ReportToText(const Report& r);

// One self-contained HTML page: the tables and inline SVG plots (src/plot): allocated GPU-hours
// per day by partition, queueing-time CDFs by partition, the actual/predicted ratio CDF.
std::string ReportToHtml(const Report& r);

}  // namespace schedmate::service
