#pragma once
// Job and cluster value types shared by trace readers, the simulator, the advisor and the
// Slurm companion. A JobTable is what every trace reader produces.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu_amount.h"
#include "core/sim_time.h"

namespace schedmate {

// Final state of a job as recorded by the source (trace or scheduler).
enum class JobState : uint8_t {
  kUnknown,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kPreempted,
  kOutOfMemory,
};
std::string_view JobStateName(JobState s);      // "COMPLETED", ...
JobState ParseJobState(std::string_view text);  // case-insensitive; "Pass" -> kCompleted, ...

// One job as read from a trace or a scheduler. Times are relative to the trace's own origin.
struct JobRecord {
  std::string id;       // the source's job id, verbatim
  std::string user;     // "" when unknown
  std::string vc;       // virtual cluster / partition; "" = the single default cluster
  std::string name;     // job name or command, "" when unknown
  std::string account;  // accounting account (Slurm), "" when unknown
  std::string qos;      // quality of service (Slurm), "" when unknown
  GpuAmount gpus;       // total GPUs requested (fractional for shared-GPU traces)
  int32_t cpus = 0;     // total CPUs requested, 0 when unknown
  int32_t nodes = 0;    // nodes requested, 0 when unknown (derive from gpus)
  SimTime submit;       // submission time
  Duration duration;    // actual run time when running alone (the trace's runtime)
  std::optional<Duration> time_limit;  // requested wall-clock limit, if the trace has one
  std::optional<Duration> estimate;    // a per-job duration estimate supplied with the trace
  // Quantiles of a predictive distribution supplied with the estimate (a `history replay` CSV).
  struct EstimateQuantiles {
    Duration p10, p50, p90;
  };
  std::optional<EstimateQuantiles> estimate_quantiles;
  // Queue wait the source recorded (Slurm: Start - Eligible), for validating a replay.
  std::optional<Duration> observed_wait;
  JobState state = JobState::kUnknown;
  // Workload description, where the trace has one (Venus: Lucid's labels; Gavel/Pollux: job type).
  std::string model;       // e.g. "ResNet18"
  std::string dataset;     // e.g. "CIFAR-10"
  int32_t batch_size = 0;  // 0 when unknown
  int8_t amp = -1;         // mixed precision: 1 yes, 0 no, -1 unknown
  int64_t iterations = 0;  // total steps/iterations, 0 when unknown
  // Lucid profile columns (Venus): throughput alone and GPU utilisation; 0 when unknown.
  double speed = 0;
  double gpu_util = 0;
  double gmem_util = 0;
  double gmem_mib = 0;
};

enum class TraceFormat : uint8_t {
  kAuto,
  kLucid,
  kGpw,
  kChronus,
  kGavel,
  kPollux,
  kOpenb,
  kSwf,
  kSacct,
};
std::string_view TraceFormatName(TraceFormat f);  // "lucid", ...
std::optional<TraceFormat> ParseTraceFormat(std::string_view name);

// All jobs of one trace, in file order (the order ties on submit time keep).
struct JobTable {
  std::string source;  // path it was read from
  TraceFormat format = TraceFormat::kAuto;
  std::vector<JobRecord> jobs;
  int64_t rows_read = 0;                  // data rows seen
  int64_t rows_skipped = 0;               // malformed rows skipped (only in skip-and-count mode)
  std::vector<std::string> skip_reasons;  // first few "file:line: reason" of skipped rows
};

// One virtual cluster (partition): `nodes` nodes of `gpus_per_node` GPUs each.
struct VcSpec {
  std::string name;
  int32_t nodes = 0;
  int32_t gpus_per_node = 8;
  int32_t cpus_per_node = 0;  // 0 = not modelled
};

// The cluster a simulation runs on. A single-VC cluster has one VcSpec with name "".
struct ClusterSpec {
  std::vector<VcSpec> vcs;
  int64_t total_gpus() const {
    int64_t n = 0;
    for (const auto& v : vcs) n += static_cast<int64_t>(v.nodes) * v.gpus_per_node;
    return n;
  }
};

}  // namespace schedmate
