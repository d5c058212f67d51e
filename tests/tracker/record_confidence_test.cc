// The built-in tracker's confidence in a record: the formula (tracker/record_confidence.h) and
// the evidence MetricTracker gathers for it.
#include "tracker/record_confidence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tracker/metric_tracker.h"

namespace schedmate::tracker {
namespace {

std::optional<ProgressRecord> Latest(const std::string& text) {
  BuiltinLineClassifier classifier;
  BuiltinMetricExtractor extractor;
  MetricTracker t(classifier, extractor);
  int64_t n = 1;
  ForEachPhysicalLine(text, [&](std::string_view l, uint64_t off) { t.AddLine(l, n++, off); });
  t.Finish();
  return t.Latest();
}

std::string RegularLog(int steps) {
  std::string log = "INFO starting run\n";
  for (int i = 1; i <= steps; ++i) {
    log += "epoch 1 step " + std::to_string(i) + "/" + std::to_string(steps) +
           " loss=" + std::to_string(3.0 - 0.001 * i) + " lr=0.0003 step_time=0.41\n";
  }
  return log;
}

TEST(RecordConfidenceTest, LongRegularLogScoresHigherThanShortAmbiguousOne) {
  const auto regular = Latest(RegularLog(300));
  // A few loss lines and nothing that counts: the tracker reads them as progress, unsure.
  const auto ambiguous = Latest(
      "loading data\nloss: 0.93, accuracy: 0.61\nsaving\nloss: 0.88, accuracy: 0.64\n"
      "loss: 0.85, accuracy: 0.66\n");
  ASSERT_TRUE(regular);
  ASSERT_TRUE(ambiguous);
  EXPECT_EQ(regular->evidence.counter, CounterSource::kOwn);
  EXPECT_EQ(regular->evidence.template_records, 300);
  EXPECT_EQ(ambiguous->evidence.counter, CounterSource::kNone);
  EXPECT_GT(regular->confidence, ambiguous->confidence);
  EXPECT_GE(regular->confidence, 0.8);  // --engine auto's default threshold: no LLM needed
  EXPECT_LT(ambiguous->confidence, 0.8);
  for (double c : {regular->confidence, ambiguous->confidence}) {
    EXPECT_GE(c, 0.0);
    EXPECT_LE(c, 1.0);
  }
}

TEST(RecordConfidenceTest, MoreRecordsOfTheSameTemplateRaiseIt) {
  const auto few = Latest(RegularLog(2));
  const auto many = Latest(RegularLog(200));
  ASSERT_TRUE(few);
  ASSERT_TRUE(many);
  EXPECT_LT(few->confidence, many->confidence);
}

TEST(RecordConfidenceTest, Deterministic) {
  const std::string log =
      RegularLog(40) + "loss: 0.4\n" + "***** Running Evaluation *****\n" + RegularLog(3);
  const auto a = Latest(log);
  const auto b = Latest(log);
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->confidence, b->confidence);  // bit for bit
  EXPECT_EQ(a->evidence.template_records, b->evidence.template_records);
  EXPECT_EQ(a->evidence.monotone_share, b->evidence.monotone_share);
  EXPECT_EQ(a->evidence.completed, b->evidence.completed);
}

TEST(RecordConfidenceTest, CountersGoingBackLowerTheMonotoneShare) {
  std::string jumpy;
  for (int i = 1; i <= 30; ++i) {
    const int step = (i % 2 == 0) ? 100 + i : 500 - i;  // two interleaved counters
    jumpy +=
        "step " + std::to_string(step) + " loss=" + std::to_string(2.0 - 0.01 * i) + " lr=0.001\n";
  }
  const auto steady = Latest(RegularLog(30));
  const auto back = Latest(jumpy);
  ASSERT_TRUE(steady);
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(steady->evidence.monotone_share, 1.0);
  EXPECT_LT(back->evidence.monotone_share, 0.7);
  EXPECT_LT(back->confidence, steady->confidence);
}

TEST(RecordConfidenceTest, ValuesCompletedFromElsewhereAreRecorded) {
  // The total comes from a configured total printed once; the epoch from the header above.
  const auto r = Latest(
      "  Total optimization steps = 900\nEpoch 2/3\nstep 10 loss=1.5 lr=0.001\n"
      "step 20 loss=1.4 lr=0.001\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->v.total_steps, 900);
  EXPECT_TRUE(r->evidence.completed & kCompletedTotalSteps);
  EXPECT_TRUE(r->evidence.completed & kCompletedEpoch);
  EXPECT_TRUE(r->evidence.completed & kCompletedTotalEpochs);
  const FieldConfidence f = FieldConfidenceOf(r->evidence, r->v);
  ASSERT_TRUE(f.totals && f.loss && f.counter);
  EXPECT_LT(*f.totals, *f.loss);  // the line printed its loss, not its total
}

TEST(RecordConfidenceTest, TrainingFormatInsideAnEvalPhaseIsAWeakCue) {
  const auto r = Latest(RegularLog(20) + "***** Running Evaluation *****\n" +
                        "epoch 1 step 21/20 loss=2.9 lr=0.0003 step_time=0.41\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->line_no, 23);
  EXPECT_EQ(r->evidence.cue, TrainCue::kWeak);
}

TEST(RecordConfidenceTest, EachWeakerPieceOfEvidenceLowersTheFormula) {
  ConfidenceEvidence strong;
  strong.template_records = 50;
  struct Case {
    const char* name;
    void (*weaken)(ConfidenceEvidence&);
  };
  const Case cases[] = {
      {"one record of its template", [](ConfidenceEvidence& e) { e.template_records = 1; }},
      {"counter went back", [](ConfidenceEvidence& e) { e.monotone_share = 0.5; }},
      {"epoch only from context",
       [](ConfidenceEvidence& e) { e.counter = CounterSource::kContextEpoch; }},
      {"no counter", [](ConfidenceEvidence& e) { e.counter = CounterSource::kNone; }},
      {"unjudged bar", [](ConfidenceEvidence& e) { e.cue = TrainCue::kUnjudged; }},
      {"weak train cue", [](ConfidenceEvidence& e) { e.cue = TrainCue::kWeak; }},
      {"key=value reader", [](ConfidenceEvidence& e) { e.reader = ValueReader::kKeyValue; }},
      {"positional format", [](ConfidenceEvidence& e) { e.reader = ValueReader::kPositional; }},
      {"generic reader", [](ConfidenceEvidence& e) { e.reader = ValueReader::kGeneric; }},
      {"total from a summary", [](ConfidenceEvidence& e) { e.completed = kCompletedTotalEpochs; }},
  };
  const double top = ConfidenceOf(strong);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ConfidenceEvidence e = strong;
    c.weaken(e);
    EXPECT_LT(ConfidenceOf(e), top);
  }
}

TEST(RecordConfidenceTest, FormulaStaysInTheUnitInterval) {
  ConfidenceEvidence worst;
  worst.template_records = -5;
  worst.monotone_share = std::numeric_limits<double>::quiet_NaN();
  worst.counter = CounterSource::kNone;
  worst.cue = TrainCue::kWeak;
  worst.reader = ValueReader::kGeneric;
  worst.completed = 0x1F;
  ConfidenceEvidence best;
  best.template_records = std::numeric_limits<int64_t>::max();
  best.monotone_share = 7;
  for (const ConfidenceEvidence& e : {worst, best, ConfidenceEvidence{}}) {
    const double c = ConfidenceOf(e);
    EXPECT_TRUE(std::isfinite(c));
    EXPECT_GT(c, 0.0);
    EXPECT_LE(c, 1.0);
  }
}

TEST(RecordConfidenceTest, FieldGroupsWithoutValuesHaveNone) {
  ExtractedValues v;
  v.step = 5;
  v.loss = 0.3;
  const FieldConfidence f = FieldConfidenceOf(ConfidenceEvidence{}, v);
  EXPECT_TRUE(f.counter.has_value());
  EXPECT_TRUE(f.loss.has_value());
  EXPECT_FALSE(f.totals.has_value());
  EXPECT_FALSE(f.timing.has_value());
}

}  // namespace
}  // namespace schedmate::tracker
