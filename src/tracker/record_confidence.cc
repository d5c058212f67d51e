#include "tracker/record_confidence.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "tracker/progress_record.h"

namespace schedmate::tracker {

double ConfidenceOf(const ConfidenceEvidence& e) {
  const double n = static_cast<double>(std::max<int64_t>(e.template_records, 1));
  const double support = 0.65 + 0.35 * n / (n + 3);
  const double m = std::isfinite(e.monotone_share) ? std::clamp(e.monotone_share, 0.0, 1.0) : 0.0;
  const double monotone = 0.6 + 0.4 * m;
  double counter = 1;
  if (e.counter == CounterSource::kContextEpoch) counter = 0.85;
  if (e.counter == CounterSource::kNone) counter = 0.6;
  double cue = 1;
  if (e.cue == TrainCue::kUnjudged) cue = 0.9;
  if (e.cue == TrainCue::kWeak) cue = 0.75;
  double reader = 1;
  if (e.reader == ValueReader::kKeyValue) reader = 0.95;
  if (e.reader == ValueReader::kPositional) reader = 0.92;
  if (e.reader == ValueReader::kGeneric) reader = 0.9;
  const double completions = std::pow(0.96, std::popcount(e.completed));
  return std::clamp(support * monotone * counter * cue * reader * completions, 0.0, 1.0);
}

FieldConfidence FieldConfidenceOf(const ConfidenceEvidence& e, const ExtractedValues& v) {
  const double base = ConfidenceOf(e);
  auto group = [&](bool present, uint8_t bits) -> std::optional<double> {
    if (!present) return std::nullopt;
    return (e.completed & bits) != 0 ? base * 0.85 : base;
  };
  FieldConfidence f;
  f.counter = group(v.step || v.epoch, kCompletedEpoch);
  f.totals = group(v.total_steps || v.total_epochs, kCompletedTotalSteps | kCompletedTotalEpochs);
  f.loss = group(v.loss || !v.losses.empty(), kCompletedLoss);
  f.timing = group(v.step_time_s || v.throughput || v.lr || v.eta_s, kCompletedTiming);
  return f;
}

}  // namespace schedmate::tracker
