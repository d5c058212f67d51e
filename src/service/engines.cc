#include "service/engines.h"

#include "llm/engine.h"
#include "llm/llm_setup.h"
#include "service/component_adapters.h"

namespace schedmate::service {

Result<Engines> MakeEngines(const ServiceConfig& config, store::HistoryStore& history,
                            bool with_advisor) {
  Engines e;
  if (with_advisor) {
    SM_ASSIGN_OR_RETURN(e.advisor, AdvisorJobAdvisor::Create(history));
  }
  e.tracker = std::make_unique<TrackerLogTracker>(config.stall_after, config.slowdown_ratio);
  std::shared_ptr<llm::LlmSetup> llm;
  std::string failure_engine = "failure-handler";
  if (config.llm_engine != "builtin") {
    SM_ASSIGN_OR_RETURN(llm::EngineChoice llm_choice, llm::ParseEngineChoice(config.llm_engine));
    SM_ASSIGN_OR_RETURN(std::unique_ptr<llm::LlmSetup> setup,
                        llm::LoadLlmSetup(config.llm_config.empty()
                                              ? std::nullopt
                                              : std::optional<std::string>(config.llm_config)));
    llm::EngineDecision decision = llm::DecideEngine(llm_choice, setup.get());
    failure_engine += " " + decision.engine;
    if (decision.use_llm) llm = std::move(setup);
    if (!decision.notice.empty()) e.notice = decision.notice;
  }
  e.llm = llm;
  SM_ASSIGN_OR_RETURN(e.diagnoser, FailureHandlerDiagnoser::Create(
                                       config.backoff_base, config.backoff_cap, std::move(llm)));
  e.description = "advisor=history-estimator tracker=metric-tracker failure=" + failure_engine;
  return e;
}

}  // namespace schedmate::service
