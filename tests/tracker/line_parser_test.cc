#include "tracker/line_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace schedmate::tracker {
namespace {

const Field* FindRole(const ParsedSegment& ps, Role role) {
  for (const Field& f : ps.fields) {
    if (f.role == role && !f.eval) return &f;
  }
  return nullptr;
}

TEST(LineParserTest, KeyValuePairsGetRoles) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("global_step=120 loss=0.532 lr=1e-4 samples_per_second=88.5", ps);
  ASSERT_NE(FindRole(ps, Role::kStep), nullptr);
  EXPECT_EQ(FindRole(ps, Role::kStep)->value, 120);
  EXPECT_DOUBLE_EQ(FindRole(ps, Role::kLoss)->value, 0.532);
  EXPECT_DOUBLE_EQ(FindRole(ps, Role::kLr)->value, 1e-4);
  const Field* tp = FindRole(ps, Role::kThroughput);
  ASSERT_NE(tp, nullptr);
  EXPECT_EQ(tp->noun, RateNoun::kSample);
}

TEST(LineParserTest, PaddedFractionAndPipes) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("step   975/ 1000 | loss 1.9271 |  12.53 steps/s | eta   0.03m", ps);
  const Field* step = FindRole(ps, Role::kStep);
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->kind, ValueKind::kFraction);
  EXPECT_EQ(step->value, 975);
  EXPECT_EQ(step->total, 1000);
  EXPECT_NEAR(FindRole(ps, Role::kThroughput)->value, 12.53, 1e-9);
  EXPECT_NEAR(FindRole(ps, Role::kEta)->value, 1.8, 1e-9);  // 0.03 min
  EXPECT_TRUE(ps.flags & kFlagPipes);
}

TEST(LineParserTest, TimestampsAndLocationsAreMasked) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("[11/17 11:39:23] d2.utils.events INFO:  eta: 1:23:27  iter: 29619  time: 0.68", ps);
  for (const Field& f : ps.fields) EXPECT_NE(f.kind, ValueKind::kFraction) << "11/17 is a date";
  EXPECT_GE(ps.timestamp_s, 0);
  EXPECT_NEAR(FindRole(ps, Role::kEta)->value, 5007, 1e-9);
  EXPECT_EQ(FindRole(ps, Role::kStep)->value, 29619);
  p.Parse(
      "[2023-04-18 03:20:25,144] [INFO] [timer.py:199:stop] "
      "epoch=15/micro_step=460/global_step=7360",
      ps);
  for (const Field& f : ps.fields) EXPECT_NE(f.value, 199) << "file:line is not a value";
  EXPECT_EQ(FindRole(ps, Role::kEpoch)->value, 15);
  // global_step outranks micro_step.
  const Field* best = nullptr;
  for (const Field& f : ps.fields) {
    if (f.role == Role::kStep && (!best || f.rank > best->rank)) best = &f;
  }
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->value, 7360);
  EXPECT_NEAR(ps.timestamp_s, 1681788025.144, 1e-3);
}

TEST(LineParserTest, UnitsAreNormalised) {
  struct Case {
    const char* name;
    const char* line;
    Role role;
    double value;
  };
  const Case cases[] = {
      {"tqdm s/it", "50/180 [01:20<01:41,  1.01s/it]", Role::kStepTime, 1.01},
      {"keras ms/step", "422/422 [=====] - 13s 29ms/step - loss: 0.78", Role::kStepTime, 0.029},
      {"tqdm remaining", "50/180 [01:20<01:41,  1.01s/it]", Role::kEta, 101},
      {"minutes", "ETA:0.5min", Role::kEta, 30},
      {"days", "eta: 1 day, 2:03:04, time: 0.5", Role::kEta, 86400 + 7384},
      {"megatron ms key", "elapsed time per iteration (ms): 1234.5 |", Role::kStepTime, 1.2345},
      {"thousands", "tokens_per_second=67,742", Role::kThroughput, 67742},
      {"sec word", "timer: 0.3103 sec.", Role::kStepTime, 0.3103},
  };
  LineParser p;
  ParsedSegment ps;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    p.Parse(c.line, ps);
    const Field* f = FindRole(ps, c.role);
    ASSERT_NE(f, nullptr);
    EXPECT_NEAR(f->value, c.value, 1e-9);
  }
}

TEST(LineParserTest, EvalAndNonLossKeys) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("Epoch [300/300] - Train Loss: 3.85, Valid Loss: 21.1, loss_scale: 16", ps);
  int train_losses = 0;
  for (const Field& f : ps.fields) {
    if (f.role == Role::kLoss && !f.eval) {
      ++train_losses;
      EXPECT_DOUBLE_EQ(f.value, 3.85);
    }
  }
  EXPECT_EQ(train_losses, 1);
  const Field* epoch = FindRole(ps, Role::kEpoch);
  ASSERT_NE(epoch, nullptr);
  EXPECT_EQ(epoch->total, 300);
}

TEST(LineParserTest, TqdmAndKerasBars) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("Epoch 12/200:  64%|######4   | 115/180 [01:56<01:05,  1.01s/it]", ps);
  EXPECT_TRUE(ps.flags & kFlagTqdmBar);
  const Field* step = FindRole(ps, Role::kStep);
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->bar_fraction);
  EXPECT_EQ(step->value, 115);
  EXPECT_EQ(FindRole(ps, Role::kEpoch)->value, 12);
  p.Parse("237/422 [===============>..............] - ETA: 7s - loss: 0.0398", ps);
  EXPECT_TRUE(ps.flags & kFlagKerasBar);
  EXPECT_EQ(FindRole(ps, Role::kStep)->value, 237);
}

TEST(LineParserTest, LearnedTemplateIsReusedByPosition) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("iter 10 loss 0.50 time 0.31", ps);
  const uint64_t skeleton = ps.skeleton;
  p.Parse("iter 20 loss 0.45 time 0.30", ps);
  EXPECT_EQ(ps.skeleton, skeleton);
  EXPECT_EQ(p.CacheHits(), 1u);
  EXPECT_EQ(FindRole(ps, Role::kStep)->value, 20);
  EXPECT_DOUBLE_EQ(FindRole(ps, Role::kLoss)->value, 0.45);
  p.Parse("step 30 | loss 0.40", ps);  // a new format is learned
  EXPECT_EQ(p.TemplateCount(), 2u);
}

TEST(LineParserTest, NanAndInfAreValues) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("iter 110 loss nan lr 1e-3", ps);
  const Field* loss = FindRole(ps, Role::kLoss);
  ASSERT_NE(loss, nullptr);
  EXPECT_TRUE(std::isnan(loss->value));
}

TEST(LineParserTest, KeyWordsSplitCamelAndSnake) {
  std::vector<std::string_view> words;
  std::string scratch;
  LineParser::KeyWords("RunningAvgSamplesPerSec", words, scratch);
  ASSERT_EQ(words.size(), 5u);
  EXPECT_EQ(words[0], "running");
  EXPECT_EQ(words[4], "sec");
  LineParser::KeyWords("train/CrossEntropyLoss", words, scratch);
  EXPECT_EQ(words.back(), "loss");
}

TEST(LineParserTest, ArbitraryBytesDoNotCrash) {
  LineParser p;
  ParsedSegment ps;
  std::string junk;
  for (int i = 0; i < 2000; ++i) junk.push_back(static_cast<char>((i * 7919) % 256));
  p.Parse(junk, ps);
  EXPECT_EQ(ps.text.size(), junk.size());  // the segment views the whole input
  // Truncated numbers, dates, times, ratios and bars: fields stay inside the text they came from.
  for (const char* s : {"1/", "2024-", "12:3", "1,23", "%|", "[====", "-"}) {
    p.Parse(s, ps);
    EXPECT_EQ(ps.text, std::string_view(s));
    for (const Field& f : ps.fields) {
      EXPECT_LE(f.key_begin, f.key_end) << s;
      EXPECT_LE(f.key_end, ps.text.size()) << s;
      EXPECT_LE(f.value_begin, f.value_end) << s;
      EXPECT_LE(f.value_end, ps.text.size()) << s;
      EXPECT_LE(f.unit_end, ps.text.size()) << s;
    }
  }
  // The parser still reads an ordinary line afterwards.
  p.Parse("step 7 loss 0.5", ps);
  const Field* loss = FindRole(ps, Role::kLoss);
  ASSERT_NE(loss, nullptr);
  EXPECT_DOUBLE_EQ(loss->value, 0.5);
}

// The number lexer, one shape at a time: the single field it reads and what it says.
TEST(LineParserTest, NumberShapes) {
  struct Case {
    const char* line;
    double value;
    ValueKind kind;
    bool integer;
    Unit unit;
    uint32_t value_begin, value_end;
  };
  constexpr Unit kNoUnit = Unit::kNone;
  const Case cases[] = {
      {"x=1e-3", 1e-3, ValueKind::kNumber, false, kNoUnit, 2, 6},
      {"x=2.5E+2", 250, ValueKind::kNumber, false, kNoUnit, 2, 8},
      {"x=.5", 0.5, ValueKind::kNumber, false, kNoUnit, 2, 4},
      {"x=-0.25", -0.25, ValueKind::kNumber, false, kNoUnit, 2, 7},
      {"x=+3", 3, ValueKind::kNumber, true, kNoUnit, 2, 4},
      {"x=7. y", 7, ValueKind::kNumber, false, kNoUnit, 2, 4},  // "7." mid-line
      {"x=1,234", 1234, ValueKind::kNumber, true, kNoUnit, 2, 7},
      {"x=1,234,567", 1234567, ValueKind::kNumber, true, kNoUnit, 2, 11},
      {"x=3.2k", 3200, ValueKind::kNumber, true, kNoUnit, 2, 5},
      {"x=50K", 50000, ValueKind::kNumber, true, kNoUnit, 2, 4},
      {"x=2M", 2e6, ValueKind::kNumber, true, kNoUnit, 2, 3},
      {"x=12%", 12, ValueKind::kPercent, true, kNoUnit, 2, 5},
      {"x=12 / 30", 12, ValueKind::kFraction, true, kNoUnit, 2, 9},
      {"x=7s", 7, ValueKind::kDuration, true, Unit::kSeconds, 2, 3},
      {"x=1.5min", 90, ValueKind::kDuration, false, Unit::kSeconds, 2, 5},
      {"x=29ms/step", 0.029, ValueKind::kNumber, true, Unit::kTimePerItem, 2, 4},
      {"x=12.5 steps/s", 12.5, ValueKind::kNumber, false, Unit::kRate, 2, 6},
      {"x=8 GB", 8, ValueKind::kNumber, true, kNoUnit, 2, 3},  // "GB" only attached
      {"x=8GB", 8, ValueKind::kNumber, true, Unit::kOther, 2, 3},
      {"eta: 12:34:56", 45296, ValueKind::kDuration, false, Unit::kSeconds, 5, 13},
      {"eta: 02:03.5", 123.5, ValueKind::kDuration, false, Unit::kSeconds, 5, 12},
  };
  LineParser p;
  ParsedSegment ps;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    p.Parse(c.line, ps);
    ASSERT_EQ(ps.fields.size(), 1u);
    const Field& f = ps.fields[0];
    EXPECT_NEAR(f.value, c.value, 1e-9 * std::max(1.0, std::abs(c.value)));
    EXPECT_EQ(f.kind, c.kind);
    EXPECT_EQ(f.integer, c.integer);
    EXPECT_EQ(f.unit, c.unit);
    EXPECT_EQ(f.value_begin, c.value_begin);
    EXPECT_EQ(f.value_end, c.value_end);
    EXPECT_EQ(f.key_end > f.key_begin, c.line[0] != '1') << "keyed by what precedes it";
  }
  p.Parse("x=12 / 30", ps);
  EXPECT_EQ(ps.fields[0].total, 30);
  p.Parse("x=50K", ps);
  EXPECT_TRUE(ps.fields[0].abbreviated);
  p.Parse("x=29ms/step", ps);
  EXPECT_EQ(ps.fields[0].noun, RateNoun::kStep);
  EXPECT_EQ(ps.fields[0].unit_begin, 4u);
  EXPECT_EQ(ps.fields[0].unit_end, 11u);
}

// Numbers that are not values: dates, clocks, month/day dates and "file.py:line" locations give
// a timestamp or nothing, and mark the template ('D', 'T', '#') instead of a field.
TEST(LineParserTest, DatesClocksAndLocationsAreNotFields) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("12:34:56 started", ps);
  EXPECT_TRUE(ps.fields.empty());
  EXPECT_DOUBLE_EQ(ps.timestamp_s, 45296);
  EXPECT_TRUE(ps.flags & kFlagHasTimestamp);
  p.Parse("2024-01-02T03:04:05 x", ps);
  EXPECT_TRUE(ps.fields.empty());
  EXPECT_DOUBLE_EQ(ps.timestamp_s, 1704164645);
  p.Parse("2024/01/02 03:04 x", ps);  // a date, then an h:mm clock
  EXPECT_TRUE(ps.fields.empty());
  EXPECT_DOUBLE_EQ(ps.timestamp_s, 1704164640);
  p.Parse("11/17 11:39:23 x", ps);  // month/day: no fraction
  EXPECT_TRUE(ps.fields.empty());
  EXPECT_DOUBLE_EQ(ps.timestamp_s, 11 * 3600 + 39 * 60 + 23);
  p.Parse("[trainer.py:245] loss 0.5", ps);
  ASSERT_EQ(ps.fields.size(), 1u);
  EXPECT_DOUBLE_EQ(ps.fields[0].value, 0.5);
  p.Parse("yolox.core.trainer:after_iter:246 - loss 0.5", ps);
  ASSERT_EQ(ps.fields.size(), 1u);
  EXPECT_DOUBLE_EQ(ps.fields[0].value, 0.5);
  p.Parse("step:245 loss 0.5", ps);  // a plain key, not a location
  ASSERT_EQ(ps.fields.size(), 2u);
  EXPECT_EQ(ps.fields[0].value, 245);
}

// Words: the key phrase is the last words before the value; a word right after an unkeyed value
// is its key; tqdm "1234it" is a counter; a run of box-drawing characters is a bar.
TEST(LineParserTest, WordsKeysAndBars) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("Train Loss: 3.5", ps);
  ASSERT_EQ(ps.fields.size(), 1u);
  EXPECT_EQ(ps.text.substr(ps.fields[0].key_begin, ps.fields[0].key_end - ps.fields[0].key_begin),
            "Train Loss");
  p.Parse("4312 updates, loss 0.5", ps);
  ASSERT_EQ(ps.fields.size(), 2u);
  EXPECT_TRUE(ps.fields[0].post_key);
  EXPECT_EQ(ps.fields[0].role, Role::kStep);
  p.Parse("Training: 1234it [01:23, 14.8it/s]", ps);
  ASSERT_FALSE(ps.fields.empty());
  EXPECT_TRUE(ps.fields[0].it_suffix);
  EXPECT_EQ(ps.fields[0].role, Role::kStep);
  p.Parse("938/938 \xE2\x94\x81\xE2\x94\x81\xE2\x94\x81\xE2\x94\x81 5s 4ms/step - loss: 0.3", ps);
  EXPECT_TRUE(ps.flags & kFlagTqdmBar);
  ASSERT_FALSE(ps.fields.empty());
  EXPECT_TRUE(ps.fields[0].bar_fraction);
  p.Parse("loss: -inf", ps);
  ASSERT_EQ(ps.fields.size(), 1u);
  EXPECT_EQ(ps.fields[0].value, -std::numeric_limits<double>::infinity());
  // tqdm without bar glyphs: the fraction before the "[elapsed<remaining" slot is the counter.
  p.Parse("100% 4/4 [00:00<00:00,  5.63it/s]", ps);
  EXPECT_TRUE(ps.flags & kFlagTqdmBar);
  const Field* step = FindRole(ps, Role::kStep);
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->bar_fraction);
  EXPECT_EQ(step->total, 4);
}

// Role analysis of keys, one rule group at a time.
TEST(LineParserTest, KeyRoles) {
  struct Case {
    const char* key;
    Role role;
    int rank;
  };
  const Case cases[] = {
      {"loss", Role::kLoss, 4},
      {"total_loss", Role::kLoss, 3},
      {"train_loss", Role::kLoss, 1},
      {"loss_cls", Role::kLoss, -1},
      {"avg_loss", Role::kLoss, -2},
      {"SmoothL1", Role::kLoss, 0},
      {"loss_scale", Role::kNone, 0},
      {"samples_per_second", Role::kThroughput, 0},
      {"Tokens/s/device", Role::kThroughput, 0},
      {"ups", Role::kThroughput, -1},
      {"elapsed time per iteration (ms)", Role::kStepTime, 1},
      {"lr", Role::kLr, 0},
      {"learning_rate", Role::kLr, 0},
      {"eta", Role::kEta, 0},
      {"time left", Role::kEta, 0},
      {"seconds", Role::kStepTime, 1},
      {"step_ms", Role::kStepTime, 3},
      {"batch_cost", Role::kStepTime, 2},
      {"data_cost", Role::kElapsed, 2},
      {"time", Role::kStepTime, 2},
      {"iter_time", Role::kStepTime, 3},
      {"Num Epochs", Role::kTotalEpochs, 0},
      {"max_steps", Role::kTotalSteps, 0},
      {"epoch", Role::kEpoch, 0},
      {"global_step", Role::kStep, 5},
      {"step", Role::kStep, 4},
      {"iter", Role::kStep, 3},
      {"num_updates", Role::kStep, 3},
      {"micro_step", Role::kStep, -2},
      {"accuracy", Role::kMetric, 0},
      {"gpu_name", Role::kNone, 0},
  };
  Field number;  // a plain number without a unit
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    const KeyRole r = LineParser::AnalyzeKey(c.key, number);
    EXPECT_EQ(r.role, c.role);
    EXPECT_EQ(r.rank, c.rank);
  }
  EXPECT_EQ(LineParser::AnalyzeKey("samples_per_second", number).noun, RateNoun::kSample);
  EXPECT_EQ(LineParser::AnalyzeKey("Tokens/s/device", number).noun, RateNoun::kToken);
  EXPECT_TRUE(LineParser::AnalyzeKey("step_ms", number).millis);
  EXPECT_FALSE(LineParser::AnalyzeKey("seconds", number).millis);
  EXPECT_TRUE(LineParser::AnalyzeKey("val_loss", number).eval);
  EXPECT_TRUE(LineParser::AnalyzeKey("bleu4", number).eval);
  EXPECT_FALSE(LineParser::AnalyzeKey("train_loss", number).eval);
  EXPECT_TRUE(LineParser::AnalyzeKey("avg_loss", number).avg);
  Field after;  // "3 epochs": the key is the word after the value
  after.post_key = true;
  EXPECT_EQ(LineParser::AnalyzeKey("epochs", after).role, Role::kEpoch);
  EXPECT_EQ(LineParser::AnalyzeKey("loss", after).role, Role::kNone);
}

// Roles the value's shape gives when the key gives none.
TEST(LineParserTest, ValueShapeRoles) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("Train: 3 [ 100/1251 (8%)]  Loss: 6.9", ps);
  ASSERT_NE(FindRole(ps, Role::kEpoch), nullptr);
  EXPECT_EQ(FindRole(ps, Role::kEpoch)->value, 3);
  ASSERT_NE(FindRole(ps, Role::kStep), nullptr);
  EXPECT_EQ(FindRole(ps, Role::kStep)->total, 1251);
  p.Parse("[10]\ttrain-logloss:0.51", ps);
  ASSERT_NE(FindRole(ps, Role::kStep), nullptr);
  EXPECT_EQ(FindRole(ps, Role::kStep)->value, 10);
  p.Parse("Epoch(train) [1][ 50/500] loss: 0.5", ps);
  ASSERT_NE(FindRole(ps, Role::kStep), nullptr);
  EXPECT_EQ(FindRole(ps, Role::kStep)->value, 50);
  p.Parse("Epoch:  10%|#    | 1/10 [00:10<01:30]", ps);
  EXPECT_EQ(FindRole(ps, Role::kStep), nullptr);
  ASSERT_NE(FindRole(ps, Role::kEpoch), nullptr);
  EXPECT_EQ(FindRole(ps, Role::kEpoch)->total, 10);
  ASSERT_NE(FindRole(ps, Role::kPercent), nullptr);
  p.Parse("mem 30.12GiB(38.04%)", ps);
  EXPECT_EQ(FindRole(ps, Role::kPercent), nullptr);
  p.Parse("loss at step 100: 0.52", ps);
  ASSERT_NE(FindRole(ps, Role::kStep), nullptr);
  EXPECT_EQ(FindRole(ps, Role::kStep)->value, 100);
  ASSERT_NE(FindRole(ps, Role::kLoss), nullptr);
  EXPECT_DOUBLE_EQ(FindRole(ps, Role::kLoss)->value, 0.52);
}

// Segment flags from the words outside value keys.
TEST(LineParserTest, SegmentWordFlags) {
  LineParser p;
  ParsedSegment ps;
  p.Parse("Traceback (most recent call last):", ps);
  EXPECT_TRUE(ps.flags & kFlagTraceback);
  p.Parse("  File \"train.py\", line 12, in main", ps);
  EXPECT_TRUE(ps.flags & kFlagTraceback);
  EXPECT_TRUE(ps.flags & kFlagIndented);
  p.Parse("Loading checkpoint shards:  50%|#####     | 1/2 [00:01<00:01]", ps);
  EXPECT_TRUE(ps.flags & kFlagSetupBar);
  p.Parse("Evaluating: step 5 val_loss 0.3", ps);
  EXPECT_TRUE(ps.flags & kFlagEvalTag);
  p.Parse("step 5 val_loss 0.3", ps);  // the eval word is inside a metric key
  EXPECT_FALSE(ps.flags & kFlagEvalTag);
  p.Parse("train_runtime 10 train_loss 0.3 train_samples 5", ps);
  EXPECT_TRUE(ps.flags & kFlagSummary);
  p.Parse("WARNING: x 1", ps);
  EXPECT_TRUE(ps.flags & kFlagWarning);
  EXPECT_FALSE(ps.flags & kFlagError);
}

}  // namespace
}  // namespace schedmate::tracker
