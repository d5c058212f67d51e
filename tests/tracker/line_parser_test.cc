#include "tracker/line_parser.h"

#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace schedmate::tracker
