#pragma once
// What a running job's GPUs, CPUs and memory are doing, for the anomaly detector (idle GPUs,
// over-requested resources; service/anomalies.h).
//
// GPUs come from one of two sources:
//   nvidia-smi  `nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,
//               nounits` run inside the job's allocation on each of its nodes (`srun --jobid=J
//               --overlap`, SlurmBackend::RunInJob), so no ssh and no agent on the nodes
//   dcgm        a DCGM exporter's Prometheus text (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED with
//               Hostname and gpu labels) fetched from `dcgm_url` with "{node}" replaced
// and are narrowed to the GPU indices Slurm gave the job (`scontrol show job -d`). When a node
// reports exactly as many GPUs as the job holds there (cgroup-constrained devices renumber from
// 0), they are taken as the job's. CPU time and memory come from `sstat` (TRESUsageInTot).

#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/sim_time.h"

namespace schedmate::llm {
class HttpTransport;
}
namespace schedmate::slurm {
class SlurmBackend;
struct SlurmJob;
}  // namespace schedmate::slurm

namespace schedmate::service {

struct GpuSample {
  std::string node;
  int index = 0;
  std::optional<double> utilization_pct;  // nullopt: the device reports none ([N/A], MIG)
  double memory_used_mib = 0;
};

// One probe of one running job.
struct JobUsage {
  SimTime at;                           // when the answer was in (the companion stamps it)
  std::string gpu_source;               // "nvidia-smi" | "dcgm" | "" (GPUs not probed)
  std::vector<GpuSample> gpus;          // the job's GPUs, by node then index
  std::string gpu_error;                // why `gpus` is empty or incomplete ("" = none)
  std::optional<double> cpu_seconds;    // CPU time of all the job's steps so far
  std::optional<int64_t> memory_bytes;  // resident memory of all its steps now
  std::string usage_error;              // why sstat gave nothing ("" = none)
};
nlohmann::json JobUsageToJson(const JobUsage& u);

enum class GpuSource { kOff, kNvidiaSmi, kDcgm };
std::string_view GpuSourceName(GpuSource s);  // "off" | "nvidia-smi" | "dcgm"

struct UsageProbeOptions {
  GpuSource gpu_source = GpuSource::kNvidiaSmi;
  std::string nvidia_smi = "nvidia-smi";  // the command run on the node (its PATH there)
  std::string dcgm_url = "http://{node}:9400/metrics";
  bool sstat = true;  // CPU and memory use (needs JobAcctGatherType=jobacct_gather/linux)
  Duration interval = Duration::Seconds(30);  // per job
  Duration timeout = Duration::Seconds(10);   // per command or request
  int max_jobs_per_pass = 16;                 // longest-unprobed first
  int parallel = 4;                           // probes running at once in a pass
};

// nvidia-smi's `index, utilization.gpu, memory.used` CSV (noheader, nounits) from `node`.
// "[N/A]"/"[Not Supported]" utilisation is kept as unknown. Any other malformed line is
// kInvalidArgument naming `source:line`.
Result<std::vector<GpuSample>> ParseNvidiaSmiCsv(std::string_view text, std::string_view node,
                                                 std::string_view source);
// A DCGM exporter's metrics (Prometheus text format 0.0.4): DCGM_FI_DEV_GPU_UTIL and
// DCGM_FI_DEV_FB_USED samples by (Hostname, gpu), sorted. Other metrics, comments and blank
// lines are skipped; a DCGM sample without Hostname or gpu labels, or whose labels or value do
// not parse, is kInvalidArgument naming `source:line`.
Result<std::vector<GpuSample>> ParseDcgmMetrics(std::string_view text, std::string_view source);

// The samples of the GPUs the job holds on `node` (`indices`, from Slurm): all of them when the
// node reported exactly that many, else those whose index is listed. Sorted by index.
std::vector<GpuSample> JobGpus(const std::vector<GpuSample>& node_samples,
                               const std::vector<int>& indices);

// The port the companion probes through (fakes in tests).
class UsageProbe {
 public:
  virtual ~UsageProbe() = default;
  // One probe of a RUNNING job. Partial answers are results with the error fields set; an error
  // Result only when nothing could be asked. Implementations allow concurrent calls (ProbeAll).
  virtual Result<JobUsage> Probe(const slurm::SlurmJob& job, SimTime now) = 0;
};

// Probes `jobs` with at most `parallel` probes running at once (1: one after the other) and
// returns the results in the order of `jobs`, whichever finishes first: a pass costs about its
// slowest probe, not the sum of them.
std::vector<Result<JobUsage>> ProbeAll(UsageProbe& probe,
                                       const std::vector<const slurm::SlurmJob*>& jobs, SimTime now,
                                       int parallel);

// Through Slurm's tools (and HTTP for DCGM). `backend` and `http` (may be null: dcgm then
// reports an error) must outlive it. Thread-safe (the runner and transport are).
class SlurmUsageProbe final : public UsageProbe {
 public:
  SlurmUsageProbe(slurm::SlurmBackend& backend, llm::HttpTransport* http,
                  UsageProbeOptions options);
  Result<JobUsage> Probe(const slurm::SlurmJob& job, SimTime now) override;

 private:
  // GPUs of the job on `node` into `usage` (appends; errors into usage.gpu_error).
  Result<std::map<std::string, std::vector<int>>> GpuIndices(const slurm::SlurmJob& job);
  void ProbeNode(const slurm::SlurmJob& job, const std::string& node,
                 const std::vector<int>& indices, JobUsage& usage);
  slurm::SlurmBackend& backend_;
  llm::HttpTransport* http_;
  UsageProbeOptions options_;
  // Job id -> (start, node -> GPU indices): a run's GPUs do not change, so scontrol is asked
  // once per run. Cleared when it holds kMaxCachedJobs. Guarded by indices_mu_.
  std::mutex indices_mu_;
  std::map<std::string, std::pair<SimTime, std::map<std::string, std::vector<int>>>> indices_;
};

}  // namespace schedmate::service
