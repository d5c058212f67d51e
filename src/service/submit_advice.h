#pragma once
// Submit-time advice: what job_submit.lua should do with a new job, from the advisor's
// prediction and the configured policy.
//   off   estimate only; the job is left unchanged
//   note  add "schedmate: est ..." to the job's Comment and tell the user (sbatch's stderr)
//   set   note, and set a time limit when the user gave none
//   cap   set, and also lower a user limit longer than the computed one
// The computed limit is ceil(margin x the prediction's high end), clamped to [min, max] minutes.
// set/cap act only when the prediction's confidence reaches min_confidence; otherwise they note.

#include <optional>
#include <string>

#include "service/ports.h"
#include "service/service_config.h"

namespace schedmate::service {

struct SubmitAdvice {
  Prediction prediction;
  std::optional<int64_t> set_time_limit_min;  // what to set, when the policy sets one
  int64_t suggested_limit_min = 0;            // the computed limit, whatever the policy
  std::string comment;                        // for the job's Comment ("" = leave it)
  std::string message;                        // for the user at submission ("" = none)
};

SubmitAdvice AdviseSubmission(const Prediction& prediction, std::optional<int64_t> user_limit_min,
                              const ServiceConfig& config);

}  // namespace schedmate::service
