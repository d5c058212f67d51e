#pragma once
// ProgressRecord: one training-progress observation extracted from a log (the values of one
// progress line, completed from its multi-line record and the job's context).

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "tracker/record_confidence.h"

namespace schedmate::tracker {

struct Throughput {
  double value = 0;
  std::string unit;  // as printed where possible: "it/s", "s/it", "samples/s", "tokens/s", ...
  friend bool operator==(const Throughput&, const Throughput&) = default;
};

// Values read from one segment by a MetricExtractor (no context applied).
struct ExtractedValues {
  std::optional<int64_t> step;
  std::optional<int64_t> total_steps;
  std::optional<double> epoch;
  bool epoch_fractional = false;  // printed with a decimal point (HF-style 2.37)
  std::optional<int64_t> total_epochs;
  std::optional<double> loss;
  std::map<std::string, double> losses;  // every training loss by key (primary included)
  std::optional<double> lr;
  std::optional<double> step_time_s;
  bool step_time_derived = false;  // computed from an it/s or steps/s rate
  std::optional<Throughput> throughput;
  std::optional<double> eta_s;
  std::string eta_text;
  std::optional<double> percent;
  bool step_from_bar = false;
  bool has_metric = false;  // at least one training metric (loss, lr, time, rate, known metric)
  bool has_strong_metric = false;  // loss, step time or throughput
};

struct ProgressRecord {
  int64_t line_no = 0;  // 1-based physical line
  uint64_t offset = 0;  // byte offset of that physical line in the file
  std::string line;     // the physical line (sanitised, capped)
  std::string segment;  // the state the values come from (last '\r' segment for bars)
  ExtractedValues v;    // values after context (epoch header, satellites, run totals)
  bool epoch_from_context = false;
  double timestamp_s = -1;  // from the line, or wall clock in follow mode; -1 unknown
  int run = 0;              // increments when the counters restart
  int rank = -1;            // rank prefix of the line ("[rank0]:"), -1 when none
  int template_id = -1;
  std::string format;  // "tqdm-bar", "keras-bar", "json", "key=value", "key: value", ...
  // What the built-in tracker knew about this record, and its confidence in it
  // (ConfidenceOf(evidence), tracker/record_confidence.h), set when the record is emitted.
  ConfidenceEvidence evidence;
  double confidence = 0;
};

}  // namespace schedmate::tracker
