#pragma once
// JSON encoders for the tracker's records, signals and statistics (the shapes of
// `schedmate logs metrics --json`). Numbers that are not finite print as "nan", "inf" or "-inf";
// confidences are rounded to three decimals (what a reader compares).

#include <nlohmann/json.hpp>
#include <optional>

#include "tracker/embedding_filter.h"
#include "tracker/metric_tracker.h"
#include "tracker/record_confidence.h"
#include "tracker/signals.h"

namespace schedmate::tracker {

// null, a finite number, or "nan" / "inf" / "-inf".
nlohmann::json NumberOrNull(const std::optional<double>& v);
// A confidence rounded to three decimals.
double RoundedConfidence(double c);

// One record: {"found": true, "line_no", "line", "segment", "step", "total_steps", "epoch",
// "total_epochs", "loss", "losses", "lr", "step_time_s", "step_time_derived", "throughput":
// {"value", "unit"}, "eta_s", "eta", "percent", "format", "run", "rank", "timestamp_s",
// "confidence", "field_confidence": {"counter", "totals", "loss", "timing"}} with null where the
// log does not say.
nlohmann::json RecordToJson(const ProgressRecord& r);
// The record fields of a log without training progress: {"found": false} and null values.
nlohmann::json NoRecordJson();
// What a built-in record's confidence rests on: {"template_records", "monotone_share",
// "counter", "train_cue", "reader", "completed_from_elsewhere": [...]}.
nlohmann::json EvidenceToJson(const ConfidenceEvidence& e);
nlohmann::json SignalsToJson(const Signals& s);
// Line counts by class and the reader's counters.
nlohmann::json StatsToJson(const TrackerStats& st);
// The embeddings filter's counters ("filter_stats").
nlohmann::json FilterReportToJson(const FilterReport& r);
// One template of the filter's census with its label, if any ("filter_templates" entries).
nlohmann::json TemplateToJson(const TemplateStats& t, const TemplateLabel* label);

}  // namespace schedmate::tracker
