#pragma once
// How sure the built-in tracker is of one progress record: the evidence MetricTracker gathers
// while it assembles the record, and the formula that turns it into a confidence in [0, 1].
//
// Evidence (all of it is something the parser or the record assembly already knew):
//   n   template_records   records of the same line template (family) so far, this one included
//   m   monotone_share     share of consecutive counter-carrying records whose counter did not go
//                          back (a restart counts as going back; a per-epoch counter rolling over
//                          after reaching its total does not), decayed so that about the last 32
//                          pairs count; 1 when there were no pairs yet
//   c   counter            the line printed its own step/epoch counter (kOwn), only an epoch from
//                          a header above it gives one (kContextEpoch), or none at all (kNone:
//                          loss-only lines repeated in a log without any counter)
//   a   train/eval cue     kWeak: the train-vs-eval decision overrode a contrary cue (a training
//                          format inside an evaluation phase, a bar redraw followed by eval
//                          output, an eval word on the line itself, a step header that ends the
//                          log); kUnjudged: a bar with nothing after it to tell train from eval
//   r   reader             what read the values: a self-describing structure (JSON/dict, tqdm or
//                          Keras bar), key=value pairs (also tables and '|' columns), a positional
//                          format of config/tracker_formats.yaml, or the generic "key: value"
//                          reader
//   k   completions        value groups completed from other lines (bits of kCompleted*): an
//                          epoch from context, a loss or timing from neighbouring lines, a total
//                          from a configured total, a run summary or derived from HF epochs
//
// Formula (a product of factors, each in (0, 1], so the result is in (0, 1]):
//   confidence = S(n) * M(m) * C(c) * A(a) * R(r) * K(k)
//   S(n) = 0.65 + 0.35 * n / (n + 3)          1 record 0.74, 5 records 0.87, 100 records 0.99
//   M(m) = 0.6 + 0.4 * m
//   C    = 1 (own), 0.85 (epoch from context), 0.6 (none)
//   A    = 1 (clear), 0.9 (unjudged), 0.75 (weak)
//   R    = 1 (structure), 0.95 (key=value), 0.92 (positional), 0.9 (generic key: value)
//   K(k) = 0.96 ^ popcount(k)
// Per field group (counter, totals, loss, timing) the record's confidence is multiplied by 0.85
// when that group was completed from another line, and is absent when the record has no value in
// that group. Deterministic; no state.

#include <cstdint>
#include <optional>

namespace schedmate::tracker {

struct ExtractedValues;

enum class CounterSource : uint8_t { kOwn, kContextEpoch, kNone };
enum class TrainCue : uint8_t { kClear, kUnjudged, kWeak };
enum class ValueReader : uint8_t { kStructure, kKeyValue, kPositional, kGeneric };

// Value groups completed from other lines than the record's own.
enum CompletedFrom : uint8_t {
  kCompletedEpoch = 1u << 0,        // epoch from a header or a summary
  kCompletedLoss = 1u << 1,         // loss from a neighbouring or continuation line
  kCompletedTiming = 1u << 2,       // step time, throughput, lr or ETA from another line
  kCompletedTotalSteps = 1u << 3,   // total steps from a configured total
  kCompletedTotalEpochs = 1u << 4,  // total epochs from a header, summary or HF epoch fraction
};

struct ConfidenceEvidence {
  int64_t template_records = 1;
  double monotone_share = 1;
  CounterSource counter = CounterSource::kOwn;
  TrainCue cue = TrainCue::kClear;
  ValueReader reader = ValueReader::kStructure;
  uint8_t completed = 0;  // CompletedFrom bits
};

// The record's confidence in [0, 1] (formula above).
double ConfidenceOf(const ConfidenceEvidence& e);

// Confidence per field group; nullopt where the record has no value of the group.
struct FieldConfidence {
  std::optional<double> counter;  // step, epoch
  std::optional<double> totals;   // total steps, total epochs
  std::optional<double> loss;     // loss, losses
  std::optional<double> timing;   // step time, throughput, lr, ETA
};
FieldConfidence FieldConfidenceOf(const ConfidenceEvidence& e, const ExtractedValues& v);

}  // namespace schedmate::tracker
