#include "service/engines.h"

#include "service/basic_engines.h"
#ifdef SCHEDMATE_HAVE_COMPONENTS
#include "service/component_adapters.h"
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
    SM_ASSIGN_OR_RETURN(e.diagnoser,
                        FailureHandlerDiagnoser::Create(config.backoff_base, config.backoff_cap));
    e.description = "advisor=history-estimator tracker=metric-tracker failure=failure-handler";
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
  return e;
}

}  // namespace schedmate::service
