#include "tracker/metric_extractor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

namespace schedmate::tracker {
namespace {

struct Expect {
  const char* name;
  const char* line;
  std::optional<int64_t> step, total_steps;
  std::optional<double> epoch;
  std::optional<int64_t> total_epochs;
  std::optional<double> loss, lr, step_time, throughput;
  const char* unit;
  std::optional<double> eta;
};

TEST(BuiltinMetricExtractorTest, StylesWithExpectedValues) {
  const Expect cases[] = {
      {"hf dict",
       "{'loss': 0.0022, 'learning_rate': 5.6e-06, 'epoch': 2.16}",
       {},
       {},
       2.16,
       {},
       0.0022,
       5.6e-06,
       {},
       {},
       nullptr,
       {}},
      {"tqdm",
       "Epoch 12/200:  64%|######4   | 115/180 [01:56<01:05,  1.01s/it]",
       115,
       180,
       12,
       200,
       {},
       {},
       1.01,
       1.01,
       "s/it",
       65},
      {"lightning",
       "Epoch 1:  30%|###  | 30/100 [00:06<00:14,  4.97it/s, v_num=3, train_loss=0.655]",
       30,
       100,
       1,
       {},
       0.655,
       {},
       1 / 4.97,
       4.97,
       "it/s",
       14},
      {"keras",
       "181/350 [==============>...............] - ETA: 9s - loss: 0.0512 - accuracy: 0.9803",
       181,
       350,
       {},
       {},
       0.0512,
       {},
       {},
       {},
       nullptr,
       9},
      {"detectron2",
       "eta: 1:23:27  iter: 29619  total_loss: 0.2428  loss_cls: 0.1236  time: 0.6809  data_time: "
       "0.0728  "
       "lr: 0.0004",
       29619,
       {},
       {},
       {},
       0.2428,
       0.0004,
       0.6809,
       {},
       nullptr,
       5007},
      {"mmdet",
       "Epoch [1][50/500]\tlr: 1.000e-02, eta: 2:03:04, time: 0.512, data_time: 0.050, "
       "loss_cls: 0.31, loss_bbox: 0.2, loss: 0.67",
       50,
       500,
       1,
       {},
       0.67,
       0.01,
       0.512,
       {},
       nullptr,
       7384},
      {"deepspeed timer",
       "epoch=15/micro_step=460/global_step=7360, RunningAvgSamplesPerSec=171.74, "
       "CurrSamplesPerSec=171.46",
       7360,
       {},
       15,
       {},
       {},
       {},
       {},
       171.46,
       "samples/s",
       {}},
      {"fairseq json",
       "{\"epoch\": 10, \"update\": 9.601, \"loss\": \"3.922\", \"wps\": \"58162.7\", \"ups\": "
       "\"0.5\", "
       "\"num_updates\": \"4600\", \"lr\": \"7.1875e-05\", \"loss_scale\": \"16\"}",
       4600,
       {},
       10,
       {},
       3.922,
       7.1875e-05,
       2.0,
       58162.7,
       "tokens/s",
       {}},
      {"nanogpt",
       "step  1000/ 1000 | loss 2.6497 | avg50 2.3233 |  12.53 steps/s | eta   0.00m",
       1000,
       1000,
       {},
       {},
       2.6497,
       {},
       1 / 12.53,
       12.53,
       "steps/s",
       0},
      {"yolo-ish components",
       "box_loss=1.1, cls_loss=1.9, dfl_loss=1.4",
       {},
       {},
       {},
       {},
       {},
       {},
       {},
       {},
       nullptr,
       {}},
      {"train vs val",
       "INFO:Epoch 500: Train Loss=0.0010, Val Loss=0.0005",
       {},
       {},
       500,
       {},
       0.001,
       {},
       {},
       {},
       nullptr,
       {}},
  };
  LineParser parser;
  BuiltinMetricExtractor ex;
  ParsedSegment ps;
  ExtractedValues v;
  for (const Expect& c : cases) {
    SCOPED_TRACE(c.name);
    parser.Parse(c.line, ps);
    ex.Extract(ps, v);
    EXPECT_EQ(v.step, c.step);
    EXPECT_EQ(v.total_steps, c.total_steps);
    EXPECT_EQ(v.total_epochs, c.total_epochs);
    auto near = [](std::optional<double> got, std::optional<double> want, const char* what) {
      if (!want) {
        EXPECT_FALSE(got.has_value()) << what << " = " << got.value_or(0);
        return;
      }
      ASSERT_TRUE(got.has_value()) << what;
      EXPECT_NEAR(*got, *want, 1e-6 * std::max(1.0, std::fabs(*want))) << what;
    };
    near(v.epoch, c.epoch, "epoch");
    near(v.loss, c.loss, "loss");
    near(v.lr, c.lr, "lr");
    near(v.step_time_s, c.step_time, "step_time");
    near(v.eta_s, c.eta, "eta");
    if (c.throughput) {
      ASSERT_TRUE(v.throughput.has_value());
      EXPECT_NEAR(v.throughput->value, *c.throughput, 1e-6);
      EXPECT_EQ(v.throughput->unit, c.unit);
    } else {
      EXPECT_FALSE(v.throughput.has_value());
    }
  }
}

TEST(BuiltinMetricExtractorTest, ComponentLossesGoToTheMap) {
  LineParser parser;
  BuiltinMetricExtractor ex;
  ParsedSegment ps;
  ExtractedValues v;
  parser.Parse("Loss: 1.23, Semantic loss: 0.78, IC loss: 0.45", ps);
  ex.Extract(ps, v);
  EXPECT_DOUBLE_EQ(*v.loss, 1.23);
  EXPECT_EQ(v.losses.size(), 3u);
  EXPECT_DOUBLE_EQ(v.losses.at("IC loss"), 0.45);
}

// A percentage is progress only when it is one: bars and "(8%)" after a step fraction, not model
// FLOPs utilisation, memory or GPU shares.
TEST(BuiltinMetricExtractorTest, PercentIsProgressNotAResourceShare) {
  struct Case {
    const char* line;
    std::optional<double> percent;
  };
  const Case cases[] = {
      {"iter 390: loss 3.8100, time 123.45ms, mfu 30.12%", std::nullopt},
      {"step: 390  loss:  8.7100  memory: 30.12GiB(38.04%)  tps: 5,678  mfu: 40.12%", std::nullopt},
      {"step 12 loss 0.5 gpu_util 97% mem 81%", std::nullopt},
      {"Train: 3 [ 100/1251 (  8%)]  Loss: 6.123 (6.234)  Time: 0.456s", 8.0},
      {"Epoch 1:  30%|###  | 30/100 [00:06<00:14,  4.97it/s, train_loss=0.655]", 30.0},
      {"progress: 45% step 450 loss 0.3", 45.0},
  };
  LineParser parser;
  BuiltinMetricExtractor ex;
  ParsedSegment ps;
  ExtractedValues v;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    parser.Parse(c.line, ps);
    ex.Extract(ps, v);
    EXPECT_EQ(v.percent, c.percent);
    EXPECT_TRUE(v.step.has_value());
  }
}

}  // namespace
}  // namespace schedmate::tracker
