#include "service/submit_advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace schedmate::service {

SubmitAdvice AdviseSubmission(const Prediction& prediction, std::optional<int64_t> user_limit_min,
                              const ServiceConfig& config) {
  SubmitAdvice a;
  a.prediction = prediction;
  Duration high = std::max(prediction.high, prediction.duration);
  double minutes = std::ceil(config.limit_margin * high.seconds_f() / 60.0);
  a.suggested_limit_min =
      std::clamp(static_cast<int64_t>(minutes), config.min_limit_min, config.max_limit_min);
  if (config.submit_policy == SubmitPolicy::kOff) return a;

  a.comment = fmt::format("schedmate: est {} (conf {:.2f})", FormatDuration(prediction.duration),
                          prediction.confidence);
  // What was done comes before the explanation: Slurm may cut a long message short.
  std::string what = fmt::format("schedmate: estimated run time {} [{} .. {}]",
                                 FormatDuration(prediction.duration),
                                 FormatDuration(prediction.low), FormatDuration(prediction.high));
  bool confident = prediction.confidence >= config.min_confidence;
  if (confident && config.submit_policy != SubmitPolicy::kNote) {
    if (!user_limit_min) {
      a.set_time_limit_min = a.suggested_limit_min;
      what += fmt::format("; time limit set to {} min", a.suggested_limit_min);
    } else if (config.submit_policy == SubmitPolicy::kCap &&
               *user_limit_min > a.suggested_limit_min) {
      a.set_time_limit_min = a.suggested_limit_min;
      what += fmt::format("; time limit capped from {} to {} min", *user_limit_min,
                          a.suggested_limit_min);
    }
  }
  what += ": " + prediction.explanation;
  if (a.set_time_limit_min) a.comment += fmt::format(", limit {}m", *a.set_time_limit_min);
  a.message = std::move(what);
  return a;
}

}  // namespace schedmate::service
