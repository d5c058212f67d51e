#pragma once
// Adapters from the project's semantic components to the service's ports.
//
// AdvisorJobAdvisor: metadata from the batch script (and the job's submit directory, when it
//   exists) by BuiltinMetadataExtractor, a fingerprint of it, and HistoryEstimator's tiered
//   nearest-history estimate with its explanation. Seeded from the HistoryStore; learns online.
// TrackerLogTracker: per job, tails the log incrementally into a tracker::MetricTracker (lines
//   stamped with the wall clock, follow mode) and a SignalAnalyzer for progress, ETA, stall and
//   slowdown; the line classifier and extractor are shared by all jobs. A job is stalled after
//   5x its usual record interval and at least `stall_after` without progress; with too few
//   records to know its interval (one line, then silence), after `stall_after` alone.
// FailureHandlerDiagnoser: failure::FailureHandler over the built-in signatures (root cause by
//   bisection, infra/app classification, the checkpoint the log says was saved) and
//   PlanRecovery for the plan, run with the service's budget (FailedJob::retry_budget, counting
//   schedmate's own requeues) and backoff, so its requeue delay, attempt, exclusions, checkpoint
//   and its hold + operator notice after the budget reach the service unchanged. A NODE_FAIL run
//   with a silent log is infrastructure by Slurm's word. The checkpoint is the one the log says was
//   saved, else the newest checkpoint-looking file in the job's working directory (two levels,
//   at most 20,000 entries looked at). With an LLM (llm.engine: llm|auto in
//   the service configuration) the located window is classified by the model
//   (failure::DiagnoseWithLlm); any LLM failure gives the built-in diagnosis instead, and
//   Diagnosis::engine says which ran: "failure-handler", "failure-handler llm (MODEL)" or
//   "failure-handler builtin (llm unavailable: timeout after 20 s)".

#include <map>
#include <memory>
#include <string>

#include "service/ports.h"
#include "service/service_config.h"
#include "store/history_store.h"

namespace schedmate::advisor {
class HistoryEstimator;
class BuiltinMetadataExtractor;
}  // namespace schedmate::advisor
namespace schedmate::tracker {
class BuiltinLineClassifier;
class BuiltinMetricExtractor;
}  // namespace schedmate::tracker
namespace schedmate::failure {
class SignatureSet;
class FailureHandler;
}  // namespace schedmate::failure
namespace schedmate::llm {
class LlmSetup;
}  // namespace schedmate::llm

namespace schedmate::service {

class AdvisorJobAdvisor final : public JobAdvisor {
 public:
  static Result<std::unique_ptr<AdvisorJobAdvisor>> Create(store::HistoryStore& history);
  ~AdvisorJobAdvisor() override;
  Result<Prediction> Predict(const JobContext& job, SimTime now) override;
  void Observe(const JobContext& job, Duration actual, JobState state) override;

 private:
  AdvisorJobAdvisor();
  std::unique_ptr<advisor::HistoryEstimator> estimator_;
  std::unique_ptr<advisor::BuiltinMetadataExtractor> extractor_;
  // An empty private directory (0700, removed with the advisor): the root of a script whose
  // job directory is unknown, so the files it names are never read from the service's cwd.
  // If it cannot be made, "/nonexistent" stands in (nothing is found there either).
  std::string empty_root_ = "/nonexistent";
};

class TrackerLogTracker final : public LogTracker {
 public:
  // `slowdown_ratio`: recent step time above ratio x the job's own baseline is a slowdown.
  explicit TrackerLogTracker(Duration stall_after, double slowdown_ratio = 1.2,
                             size_t max_read_bytes = size_t{1} << 20);
  ~TrackerLogTracker() override;
  Result<LogMetrics> Observe(const std::string& key, const std::string& path, SimTime now) override;
  void Forget(const std::string& key) override;
  size_t Tracked() const override { return state_.size(); }

 private:
  struct State;
  Duration stall_after_;
  double slowdown_ratio_ = 1.2;
  size_t max_read_bytes_;
  std::unique_ptr<tracker::BuiltinLineClassifier> classifier_;
  std::unique_ptr<tracker::BuiltinMetricExtractor> extractor_;
  std::map<std::string, std::unique_ptr<State>> state_;
};

class FailureHandlerDiagnoser final : public FailureDiagnoser {
 public:
  // `backoff_base` doubles per retry up to `backoff_cap` (ServiceConfig actions.backoff_*).
  // `llm`: the LLM stack to classify with (null: built-in only; kept alive by the diagnoser).
  static Result<std::unique_ptr<FailureHandlerDiagnoser>> Create(
      Duration backoff_base = Duration::Seconds(60), Duration backoff_cap = Duration::Minutes(30),
      std::shared_ptr<llm::LlmSetup> llm = nullptr);
  ~FailureHandlerDiagnoser() override;
  Result<Diagnosis> Diagnose(const FailedJob& job, std::string_view log) override;

 private:
  FailureHandlerDiagnoser();
  std::unique_ptr<failure::SignatureSet> signatures_;
  std::unique_ptr<failure::FailureHandler> handler_;
  Duration backoff_base_, backoff_cap_;
  std::shared_ptr<llm::LlmSetup> llm_;
};

}  // namespace schedmate::service
