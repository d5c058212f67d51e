// The tracker's JSON encoders (tracker_json.h): record fields with null where the log does not
// say, non-finite numbers as strings, rounded confidences, evidence names and the filter's
// template entries.

#include "tracker/tracker_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace schedmate::tracker {
namespace {

TEST(TrackerJsonTest, NumbersThatAreNotFiniteBecomeStrings) {
  EXPECT_TRUE(NumberOrNull(std::nullopt).is_null());
  EXPECT_EQ(NumberOrNull(std::nan("")), "nan");
  EXPECT_EQ(NumberOrNull(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(NumberOrNull(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_DOUBLE_EQ(NumberOrNull(2.5).get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(RoundedConfidence(0.12345), 0.123);
  EXPECT_DOUBLE_EQ(RoundedConfidence(0.9996), 1.0);
}

TEST(TrackerJsonTest, RecordFieldsAndNullsWhereTheLogDoesNotSay) {
  ProgressRecord r;
  r.line_no = 42;
  r.line = "step 10/100 loss 0.5";
  r.segment = r.line;
  r.format = "key: value";
  r.v.step = 10;
  r.v.total_steps = 100;
  r.v.loss = 0.5;
  r.v.losses = {{"loss", 0.5}, {"aux", std::nan("")}};
  r.v.throughput = Throughput{3.5, "it/s"};
  r.confidence = 0.87654;
  const nlohmann::json j = RecordToJson(r);
  EXPECT_EQ(j["found"], true);
  EXPECT_EQ(j["line_no"], 42);
  EXPECT_EQ(j["step"], 10);
  EXPECT_EQ(j["total_steps"], 100);
  EXPECT_TRUE(j["epoch"].is_null());
  EXPECT_TRUE(j["lr"].is_null());
  EXPECT_TRUE(j["eta"].is_null());
  EXPECT_TRUE(j["rank"].is_null());
  EXPECT_TRUE(j["timestamp_s"].is_null());
  EXPECT_EQ(j["losses"]["aux"], "nan");
  EXPECT_DOUBLE_EQ(j["throughput"]["value"].get<double>(), 3.5);
  EXPECT_EQ(j["throughput"]["unit"], "it/s");
  EXPECT_DOUBLE_EQ(j["confidence"].get<double>(), 0.877);
  EXPECT_TRUE(j["field_confidence"]["counter"].is_number());
  EXPECT_TRUE(j["field_confidence"]["totals"].is_number());
  EXPECT_TRUE(j["field_confidence"]["loss"].is_number());
  EXPECT_FALSE(j["field_confidence"]["timing"].is_null());  // throughput is timing

  r.v.losses.clear();
  r.rank = 0;
  r.v.eta_s = 90;
  r.v.eta_text = "01:30";
  const nlohmann::json k = RecordToJson(r);
  EXPECT_TRUE(k["losses"].is_null());
  EXPECT_EQ(k["rank"], 0);
  EXPECT_EQ(k["eta"], "01:30");
}

TEST(TrackerJsonTest, NoRecordIsNotFoundWithNullValues) {
  const nlohmann::json j = NoRecordJson();
  EXPECT_EQ(j["found"], false);
  for (const char* key : {"line_no", "step", "epoch", "loss", "throughput", "eta_s", "format"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j[key].is_null()) << key;
  }
}

TEST(TrackerJsonTest, EvidenceNamesItsSourcesAndCompletedGroups) {
  ConfidenceEvidence e;
  e.template_records = 7;
  e.monotone_share = 0.66666;
  e.counter = CounterSource::kContextEpoch;
  e.cue = TrainCue::kWeak;
  e.reader = ValueReader::kPositional;
  e.completed = kCompletedLoss | kCompletedTotalEpochs;
  const nlohmann::json j = EvidenceToJson(e);
  EXPECT_EQ(j["template_records"], 7);
  EXPECT_DOUBLE_EQ(j["monotone_share"].get<double>(), 0.667);
  EXPECT_EQ(j["counter"], "epoch from context");
  EXPECT_EQ(j["train_cue"], "weak");
  EXPECT_EQ(j["reader"], "positional");
  EXPECT_EQ(j["completed_from_elsewhere"], nlohmann::json({"loss", "total_epochs"}));
}

TEST(TrackerJsonTest, StatsCountEveryLineClass) {
  TrackerStats st;
  st.records = 3;
  st.by_class[0] = 5;
  const nlohmann::json j = StatsToJson(st);
  EXPECT_EQ(j["records"], 3);
  EXPECT_EQ(j["classes"].size(), static_cast<size_t>(kLineClassCount));
  EXPECT_EQ(j["classes"][std::string(LineClassName(static_cast<LineClass>(0)))], 5);
}

TEST(TrackerJsonTest, TemplateEntryWithAndWithoutALabel) {
  TemplateStats t;
  t.family = 4;
  t.shape = "step # loss #";
  t.lines = 12;
  const nlohmann::json unlabelled = TemplateToJson(t, nullptr);
  EXPECT_EQ(unlabelled["template"], 4);
  EXPECT_EQ(unlabelled["lines"], 12);
  EXPECT_TRUE(unlabelled["label"].is_null());
  EXPECT_FALSE(unlabelled.contains("by"));
  TemplateLabel label;
  label.progress = true;
  label.decided_by_embeddings = false;
  label.nearest = "builtin";
  const nlohmann::json labelled = TemplateToJson(t, &label);
  EXPECT_EQ(labelled["label"], "progress");
  EXPECT_EQ(labelled["by"], "builtin (unsure)");
  EXPECT_EQ(labelled["nearest"], "builtin");
}

}  // namespace
}  // namespace schedmate::tracker
