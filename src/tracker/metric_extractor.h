#pragma once
// MetricExtractor: reads step, epoch, losses, learning rate, step time, throughput and ETA from
// one parsed segment. The built-in engine maps field roles (see line_parser.h) to values; an LLM
// engine can implement the same interface and read `segment.text` itself.

#include <string_view>

#include "tracker/line_parser.h"
#include "tracker/progress_record.h"

namespace schedmate::tracker {

class MetricExtractor {
 public:
  virtual ~MetricExtractor() = default;
  virtual std::string_view Name() const = 0;
  // Fills `out` (reset first) from `segment`. Values of evaluation-qualified keys ("val_loss")
  // are never reported as training values. Deterministic; no state between calls is required.
  virtual void Extract(const ParsedSegment& segment, ExtractedValues& out) = 0;
};

// Rationale: role analysis already happened per template in the parser, so extraction is a
// single pass choosing, per role, the field with the highest rank (ties: first printed), with
// unit normalisation to seconds and per-second rates. Throughput prefers work units
// (tokens > samples/images > steps/iterations) and instantaneous over running averages.
class BuiltinMetricExtractor final : public MetricExtractor {
 public:
  std::string_view Name() const override { return "builtin"; }
  void Extract(const ParsedSegment& segment, ExtractedValues& out) override;
};

// Canonical unit text for a rate noun ("tokens/s", ...).
std::string_view RateUnitName(RateNoun noun, bool time_per_item);

}  // namespace schedmate::tracker
