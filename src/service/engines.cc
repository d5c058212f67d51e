#include "service/engines.h"

#include "service/basic_engines.h"
#ifdef SCHEDMATE_HAVE_COMPONENTS
#include "service/component_adapters.h"
#endif
#if defined(SCHEDMATE_HAVE_COMPONENTS) && defined(SCHEDMATE_HAVE_LLM)
#include "llm/engine.h"
#include "llm/llm_setup.h"
#endif

namespace schedmate::service {

bool HaveComponentEngines() {
#ifdef SCHEDMATE_HAVE_COMPONENTS
  return true;
#else
  return false;
#endif
}

Result<Engines> MakeEngines(const std::string& choice, const ServiceConfig& config,
                            store::HistoryStore& history) {
  if (choice != "auto" && choice != "basic" && choice != "components") {
    return Status::InvalidArgument("engines: expected auto, basic or components, got '" + choice +
                                   "'");
  }
  bool components = choice == "components" || (choice == "auto" && HaveComponentEngines());
  Engines e;
  if (components) {
#ifdef SCHEDMATE_HAVE_COMPONENTS
    SM_ASSIGN_OR_RETURN(e.advisor, AdvisorJobAdvisor::Create(history));
    e.tracker = std::make_unique<TrackerLogTracker>(config.stall_after);
    std::shared_ptr<llm::LlmSetup> llm;
    std::string failure_engine = "failure-handler";
    if (config.llm_engine != "builtin") {
#ifdef SCHEDMATE_HAVE_LLM
      SM_ASSIGN_OR_RETURN(llm::EngineChoice llm_choice, llm::ParseEngineChoice(config.llm_engine));
      SM_ASSIGN_OR_RETURN(std::unique_ptr<llm::LlmSetup> setup,
                          llm::LoadLlmSetup(config.llm_config.empty()
                                                ? std::nullopt
                                                : std::optional<std::string>(config.llm_config)));
      llm::EngineDecision decision = llm::DecideEngine(llm_choice, setup.get());
      failure_engine += " " + decision.engine;
      if (decision.use_llm) llm = std::move(setup);
      if (!decision.notice.empty()) e.notice = decision.notice;
#else
      failure_engine += " builtin (llm unavailable: llm support not built)";
      e.notice =
          "schedmate: warning: llm.engine: this build has no llm component; failures are "
          "diagnosed by the built-in engine";
#endif
    }
    SM_ASSIGN_OR_RETURN(e.diagnoser, FailureHandlerDiagnoser::Create(
                                         config.backoff_base, config.backoff_cap, std::move(llm)));
    e.description = "advisor=history-estimator tracker=metric-tracker failure=" + failure_engine;
    return e;
#else
    return Status::Unimplemented("this build has no advisor/tracker/failure components");
#endif
  }
  SM_ASSIGN_OR_RETURN(e.advisor, BasicJobAdvisor::Create(&history));
  e.tracker = std::make_unique<BasicLogTracker>(BasicLogTrackerOptions{
      .stall_after = config.stall_after, .slowdown_ratio = config.slowdown_ratio});
  e.diagnoser = std::make_unique<BasicFailureDiagnoser>();
  e.description = "advisor=basic-history tracker=basic failure=basic-signatures";
  if (config.llm_engine != "builtin") {
    e.notice =
        "schedmate: warning: llm.engine applies to the components engines only; the basic "
        "engines have no LLM path";
  }
  return e;
}

}  // namespace schedmate::service
