#pragma once
// The engines behind the service's ports, made once at start-up: advisor/ HistoryEstimator +
// BuiltinMetadataExtractor, tracker/ MetricTracker + SignalAnalyzer, failure/ FailureHandler +
// PlanRecovery, through the adapters of component_adapters.h. The same engines answer `advise`,
// `logs` and `diagnose`, so the service and the CLI classify the same log the same way.

#include <memory>
#include <mutex>
#include <string>

#include "core/result.h"
#include "service/ports.h"
#include "service/service_config.h"
#include "store/history_store.h"

namespace schedmate::llm {
class LlmSetup;
}  // namespace schedmate::llm

namespace schedmate::service {

struct Engines {
  std::unique_ptr<JobAdvisor> advisor;
  std::unique_ptr<LogTracker> tracker;
  std::unique_ptr<FailureDiagnoser> diagnoser;
  // The LLM llm.engine decided on (null: builtin); the failure diagnoser and why's rephrasing
  // (why_rephrase.h) use it.
  std::shared_ptr<llm::LlmSetup> llm;
  std::string
      description;     // "advisor=history-estimator tracker=metric-tracker failure=failure-handler"
  std::string notice;  // non-empty: a start-up warning (e.g. the LLM is configured but down)
};

// `history` seeds the advisor (finished jobs); it must outlive the engines only during the call.
// config.llm_engine (llm|auto) gives the failure diagnoser an LLM per llm/engine.h's rule: "auto"
// probes once and uses it only when healthy; "llm" uses it and falls back per failure. An
// unreadable llm.config file is an error; a missing or dead LLM is a notice, never an error.
// `with_advisor` false: no advisor (the clusters after the first share the first one's: serve).
Result<Engines> MakeEngines(const ServiceConfig& config, store::HistoryStore& history,
                            bool with_advisor = true);

// One advisor shared by several companions (slurm.clusters: one per cluster, each on its own
// thread): calls are serialised here, so the advisor learns from every cluster's jobs.
class SynchronizedAdvisor final : public JobAdvisor {
 public:
  explicit SynchronizedAdvisor(JobAdvisor& inner) : inner_(inner) {}
  Result<Prediction> Predict(const JobContext& job, SimTime now) override {
    std::lock_guard lock(mu_);
    return inner_.Predict(job, now);
  }
  void Observe(const JobContext& job, Duration actual, JobState state) override {
    std::lock_guard lock(mu_);
    inner_.Observe(job, actual, state);
  }

 private:
  JobAdvisor& inner_;
  std::mutex mu_;
};

}  // namespace schedmate::service
