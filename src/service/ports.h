#pragma once
// The companion's ports: the three semantic engines the service loop needs, as small interfaces
// of its own so the loop can be tested with fakes (engines.h makes the real ones):
//   JobAdvisor        a new job (script + resources) -> duration prediction with explanation
//   LogTracker        a running job's output file   -> latest metrics, stall, slowdown
//   FailureDiagnoser  a failed job's log + record   -> infra | app, reason, evidence, plan
// Adapters in this folder connect them to advisor/, tracker/ and failure/ (see engines.h).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.h"
#include "core/result.h"
#include "core/sim_time.h"
#include "service/action.h"

namespace schedmate::service {

// What is known about a job when it is submitted.
struct JobContext {
  std::string job_id;
  std::string name;
  std::string user;
  std::string partition;
  int32_t gpus = 0;
  int32_t nodes = 0;
  std::optional<int64_t> time_limit_min;  // the user's limit, nullopt when none
  std::string script;                     // batch script text ("" when unavailable)
  std::string work_dir;
  SimTime submit;
  std::string fingerprint;  // the advisor's workload key from Predict ("" = none)
};

struct Prediction {
  Duration duration;        // point estimate
  Duration low, high;       // interval
  double confidence = 0;    // 0..1
  std::string explanation;  // for people
  std::string engine;       // which engine made it
  SimTime made_at;
  std::string fingerprint;  // workload key the advisor wants back in Observe ("" = none)
};

class JobAdvisor {
 public:
  virtual ~JobAdvisor() = default;
  // Not thread-safe: the service serialises calls.
  virtual Result<Prediction> Predict(const JobContext& job, SimTime now) = 0;
  // A job finished after running `actual` (learning hook; may be a no-op for stateless engines).
  virtual void Observe(const JobContext& job, Duration actual, JobState state) = 0;
};

// Latest view of a running job's log.
struct LogMetrics {
  SimTime at;
  std::optional<int64_t> step;
  std::optional<int64_t> total_steps;
  std::optional<double> loss;
  std::optional<double> step_time_s;  // seconds per step (recent)
  std::optional<double> progress;     // 0..1
  std::optional<Duration> eta;
  bool stalled = false;      // no progress for longer than the stall threshold
  bool slowdown = false;     // recent steps markedly slower than earlier ones
  std::string note;          // short human text ("stalled 5m", "slowdown x1.8")
  int64_t bytes_read = 0;    // log bytes consumed so far
  std::optional<int> ranks;  // processes the log says the job runs (service/log_ranks.h)
};

class LogTracker {
 public:
  virtual ~LogTracker() = default;
  // Reads what `path` gained since the last call for `key` and returns the latest metrics.
  // kNotFound while the file does not exist yet. Not thread-safe.
  virtual Result<LogMetrics> Observe(const std::string& key, const std::string& path,
                                     SimTime now) = 0;
  // Drops the state kept for `key` (the job ended or was requeued).
  virtual void Forget(const std::string& key) = 0;
  // Number of keys with state (for memory accounting and tests).
  virtual size_t Tracked() const = 0;
};

enum class FailureClass { kInfra, kApp, kUnknown };
std::string_view FailureClassName(FailureClass c);  // "infra", "app", "unknown"
// kInvalidArgument naming `name` when it is none of the names above.
Result<FailureClass> ParseFailureClass(std::string_view name);
inline std::ostream& operator<<(std::ostream& os, FailureClass c) {
  return os << FailureClassName(c);
}

// One step of a recovery plan, as data (failure::RecoveryAction in the service's terms); the
// service executes it within its policy (service_config.h `actions.*`). A diagnoser may leave
// `delay` unset: the service then applies its own backoff (actions.backoff_base_s doubling per
// retry, capped by actions.backoff_cap_s).
struct PlannedAction {
  // The recovery kinds of ActionKind (kDrainNode .. kNotifyAdmin); a diagnoser plans no others.
  using Kind = ActionKind;
  Kind kind = Kind::kNotifyUser;
  std::string node;    // kDrainNode
  std::string reason;  // why, for Slurm's Reason= and the action log
  std::string hint;    // kNotifyUser / kNotifyAdmin: the concrete next step ("" = none)
  // kRequeue:
  std::optional<Duration> delay;  // wait before the retry may start (nullopt: service's)
  int attempt = 0;                // 1-based retry number the diagnoser planned (0: unknown)
  std::vector<std::string> exclude_nodes;  // nodes the retry must avoid
  std::optional<std::string> checkpoint;   // where the retry should resume from (path as logged)
};

struct FailedJob {
  std::string job_id;
  std::string name;
  std::string state;  // FAILED, NODE_FAIL, TIMEOUT, OUT_OF_MEMORY, ...
  int32_t exit_code = 0;
  int32_t exit_signal = 0;
  std::vector<std::string> nodes;
  Duration ran;
  int32_t restarts = 0;      // requeues of this job so far (Slurm's count: any cause)
  int32_t retries_used = 0;  // requeues schedmate itself did for this job (its budget)
  int32_t retry_budget = 0;  // actions.retries_per_job: requeues schedmate may do in all
  std::string work_dir;      // the job's working directory ("" = unknown)
};

struct Diagnosis {
  FailureClass cls = FailureClass::kUnknown;
  std::string category;                   // e.g. "gpu_xid", "ecc", "python_exception", "oom"
  std::string reason;                     // one line for people
  int64_t evidence_line = 0;              // 1-based line in the log, 0 when none
  std::string evidence;                   // that line (trimmed, capped)
  std::string node;                       // the node blamed, "" when none
  std::optional<std::string> checkpoint;  // newest checkpoint the log says was saved
  std::vector<PlannedAction> plan;
  std::string engine;
};

class FailureDiagnoser {
 public:
  virtual ~FailureDiagnoser() = default;
  // `log` is the captured output (possibly only its tail). Not thread-safe.
  virtual Result<Diagnosis> Diagnose(const FailedJob& job, std::string_view log) = 0;
};

}  // namespace schedmate::service
