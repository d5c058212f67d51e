#include "tracker/tracker_json.h"

#include <cmath>
#include <string>
#include <utility>

namespace schedmate::tracker {

nlohmann::json NumberOrNull(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::isnan(*v)) return "nan";
  if (std::isinf(*v)) return *v > 0 ? "inf" : "-inf";
  return *v;
}
namespace {

template <typename T>
nlohmann::json Opt(const std::optional<T>& v) {
  if (!v) return nullptr;
  return *v;
}

}  // namespace

double RoundedConfidence(double c) { return std::round(c * 1000) / 1000; }

nlohmann::json RecordToJson(const ProgressRecord& r) {
  const auto& v = r.v;
  nlohmann::json j;
  j["found"] = true;
  j["line_no"] = r.line_no;
  j["line"] = r.line;
  j["segment"] = r.segment;
  j["step"] = Opt(v.step);
  j["total_steps"] = Opt(v.total_steps);
  j["epoch"] = NumberOrNull(v.epoch);
  j["total_epochs"] = Opt(v.total_epochs);
  j["loss"] = NumberOrNull(v.loss);
  if (v.losses.empty()) {
    j["losses"] = nullptr;
  } else {
    nlohmann::json l = nlohmann::json::object();
    for (const auto& [k, x] : v.losses) l[k] = NumberOrNull(x);
    j["losses"] = l;
  }
  j["lr"] = NumberOrNull(v.lr);
  j["step_time_s"] = NumberOrNull(v.step_time_s);
  j["step_time_derived"] = v.step_time_derived;
  if (v.throughput) {
    j["throughput"] = {{"value", v.throughput->value}, {"unit", v.throughput->unit}};
  } else {
    j["throughput"] = nullptr;
  }
  j["eta_s"] = NumberOrNull(v.eta_s);
  j["eta"] = v.eta_s ? nlohmann::json(v.eta_text) : nlohmann::json(nullptr);
  j["percent"] = NumberOrNull(v.percent);
  j["format"] = r.format;
  j["run"] = r.run;
  j["rank"] = r.rank >= 0 ? nlohmann::json(r.rank) : nlohmann::json(nullptr);
  j["timestamp_s"] = r.timestamp_s >= 0 ? nlohmann::json(r.timestamp_s) : nlohmann::json(nullptr);
  j["confidence"] = RoundedConfidence(r.confidence);
  const FieldConfidence f = FieldConfidenceOf(r.evidence, v);
  auto group = [](const std::optional<double>& c) {
    return c ? nlohmann::json(RoundedConfidence(*c)) : nlohmann::json(nullptr);
  };
  j["field_confidence"] = {{"counter", group(f.counter)},
                           {"totals", group(f.totals)},
                           {"loss", group(f.loss)},
                           {"timing", group(f.timing)}};
  return j;
}

// The evidence behind a built-in record's confidence (tracker/record_confidence.h).
nlohmann::json EvidenceToJson(const ConfidenceEvidence& e) {
  static constexpr const char* kCounter[] = {"own", "epoch from context", "none"};
  static constexpr const char* kCue[] = {"clear", "unjudged", "weak"};
  static constexpr const char* kReader[] = {"structure", "key=value", "positional", "key: value"};
  nlohmann::json completed = nlohmann::json::array();
  const std::pair<uint8_t, const char*> kGroups[] = {{kCompletedEpoch, "epoch"},
                                                     {kCompletedLoss, "loss"},
                                                     {kCompletedTiming, "timing"},
                                                     {kCompletedTotalSteps, "total_steps"},
                                                     {kCompletedTotalEpochs, "total_epochs"}};
  for (const auto& [bit, name] : kGroups) {
    if (e.completed & bit) completed.push_back(name);
  }
  return {{"template_records", e.template_records},
          {"monotone_share", RoundedConfidence(e.monotone_share)},
          {"counter", kCounter[static_cast<int>(e.counter)]},
          {"train_cue", kCue[static_cast<int>(e.cue)]},
          {"reader", kReader[static_cast<int>(e.reader)]},
          {"completed_from_elsewhere", completed}};
}

nlohmann::json SignalsToJson(const Signals& s) {
  return {{"progress", NumberOrNull(s.progress)},
          {"eta_s", NumberOrNull(s.eta_s)},
          {"eta_derived", s.eta_derived},
          {"baseline_step_time_s", NumberOrNull(s.baseline_step_time_s)},
          {"recent_step_time_s", NumberOrNull(s.recent_step_time_s)},
          {"throughput_trend", NumberOrNull(s.throughput_trend)},
          {"slowdown", s.slowdown},
          {"usual_interval_s", NumberOrNull(s.usual_interval_s)},
          {"since_last_progress_s", NumberOrNull(s.since_last_progress_s)},
          {"stalled", s.stalled},
          {"loss_nan", s.loss_nan},
          {"loss_exploding", s.loss_exploding},
          {"min_loss", NumberOrNull(s.min_loss)},
          {"records", s.records},
          {"restarts", s.restarts}};
}

nlohmann::json StatsToJson(const TrackerStats& st) {
  nlohmann::json classes = nlohmann::json::object();
  for (int c = 0; c < kLineClassCount; ++c) {
    classes[std::string(LineClassName(static_cast<LineClass>(c)))] = st.by_class[c];
  }
  return {{"lines", st.reader.lines},
          {"segments", st.segments},
          {"records", st.records},
          {"eval_segments", st.eval_segments},
          {"restarts", st.restarts},
          {"other_rank_segments", st.other_rank_segments},
          {"classes", classes},
          {"invalid_utf8_bytes", st.reader.invalid_utf8_bytes},
          {"control_bytes", st.reader.control_bytes},
          {"ansi_sequences", st.reader.ansi_sequences},
          {"binary_lines_skipped", st.reader.binary_lines_skipped},
          {"truncated_lines", st.reader.truncated_lines}};
}

nlohmann::json NoRecordJson() {
  return {{"found", false},          {"line_no", nullptr},     {"line", nullptr},
          {"step", nullptr},         {"total_steps", nullptr}, {"epoch", nullptr},
          {"total_epochs", nullptr}, {"loss", nullptr},        {"losses", nullptr},
          {"lr", nullptr},           {"step_time_s", nullptr}, {"throughput", nullptr},
          {"eta_s", nullptr},        {"format", nullptr}};
}

nlohmann::json FilterReportToJson(const FilterReport& r) {
  return {{"requests", r.requests},
          {"texts_embedded", r.texts_embedded},
          {"templates", r.templates},
          {"templates_embedded", r.templates_embedded},
          {"self_labels", r.self_labels},
          {"decided_by_embeddings", r.decided},
          {"labelled_progress", r.labelled_progress},
          {"labelled_other", r.labelled_other},
          {"unsure", r.unsure},
          {"dimension", r.dimension},
          {"vetoed_segments", r.vetoed_segments},
          {"promoted_segments", r.promoted_segments}};
}

nlohmann::json TemplateToJson(const TemplateStats& t, const TemplateLabel* label) {
  nlohmann::json e = {{"template", t.family},
                      {"shape", t.shape},
                      {"lines", t.lines},
                      {"builtin_progress_lines", t.progress_lines},
                      {"last_line", t.last_line}};
  if (label == nullptr) {
    e["label"] = nullptr;
    return e;
  }
  e["label"] = label->progress ? "progress" : "other";
  e["by"] = label->decided_by_embeddings ? "embeddings" : "builtin (unsure)";
  e["score_progress"] = label->score_progress;
  e["score_other"] = label->score_other;
  e["nearest"] = label->nearest;
  return e;
}

}  // namespace schedmate::tracker
