#include "tracker/metric_tracker.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedmate::tracker {
namespace {

class TrackerTest : public ::testing::Test {
 protected:
  // Feeds `text` line by line and finishes; returns every record.
  std::vector<ProgressRecord> Run(const std::string& text) {
    MetricTracker t(classifier_, extractor_);
    std::vector<ProgressRecord> out;
    t.SetSink([&](const ProgressRecord& r) { out.push_back(r); });
    int64_t n = 1;
    ForEachPhysicalLine(text, [&](std::string_view l, uint64_t off) { t.AddLine(l, n++, off); });
    t.Finish();
    latest_ = t.Latest();
    stats_ = t.stats();
    return out;
  }
  BuiltinLineClassifier classifier_;
  BuiltinMetricExtractor extractor_;
  std::optional<ProgressRecord> latest_;
  TrackerStats stats_;
};

TEST_F(TrackerTest, CarriageReturnBarKeepsPhysicalLineNumber) {
  Run("start\n 10%|#  | 10/100 [00:01<00:09, 9.1it/s]\r 20%|## | 20/100 [00:02<00:08, "
      "9.2it/s]\nend\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 2);
  EXPECT_EQ(latest_->v.step, 20);
  EXPECT_NEAR(latest_->v.throughput->value, 9.2, 1e-9);
}

TEST_F(TrackerTest, EvalBarFollowedByEvalOutputIsNotTraining) {
  Run("100%|#####| 500/500 [01:00<00:00, 8.3it/s]\n"
      "100%|#####| 40/40 [00:01<00:00, 30.1it/s]\n"
      "{'eval_loss': 0.5, 'eval_runtime': 1.2, 'epoch': 2.0}\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 1);
  EXPECT_EQ(latest_->v.step, 500);
  EXPECT_GE(stats_.eval_segments, 1u);
}

TEST_F(TrackerTest, EvalPhaseHeaderHidesEvalLoops) {
  Run("step 100 loss 2.0 lr 0.1\n"
      "***** Running Evaluation *****\n"
      " 50%|##   | 5/10 [00:01<00:01, 5.0it/s]\n"
      "eval loss: 1.9\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 1);
}

TEST_F(TrackerTest, EpochHeaderGivesContext) {
  Run("Epoch 4/10\n 10/50 [==>.....] - ETA: 4s - loss: 0.7\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.epoch, 4);
  EXPECT_EQ(latest_->v.total_epochs, 10);
  EXPECT_TRUE(latest_->epoch_from_context);
}

TEST_F(TrackerTest, HeaderPlusMetricLinesWithoutCounters) {
  auto recs =
      Run("== epoch 7 ==\ntrain loss: 0.441\nvalidation accuracy: 81%\n== epoch 8 ==\ntrain loss: "
          "0.43\n");
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(latest_->line_no, 5);
  EXPECT_EQ(latest_->v.epoch, 8);
}

TEST_F(TrackerTest, SatelliteTimerFillsTheNearestRecord) {
  Run("Timer: 0.51\nepoch:1 || iter:10 || Loss:2.1\n  sub loss:1.0\nTimer: 0.62\nepoch:1 || "
      "iter:20 || Loss:2.0\n"
      "  sub loss:0.9\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 20);
  EXPECT_NEAR(*latest_->v.step_time_s, 0.62, 1e-9);
}

TEST_F(TrackerTest, IndentedContinuationCompletesAStepHeader) {
  Run("[step=10/100,epoch=0]\n    train/loss=2.5\n    throughput/tokens_per_second=1,234\nother "
      "text\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 1);
  EXPECT_DOUBLE_EQ(*latest_->v.loss, 2.5);
  EXPECT_DOUBLE_EQ(latest_->v.throughput->value, 1234);
}

TEST_F(TrackerTest, StepHeaderWithoutMetricsIsNotProgress) {
  Run("No Grad overflow for 100 iterations\nnothing else\n");
  EXPECT_FALSE(latest_.has_value());
}

TEST_F(TrackerTest, RestartStartsANewRunButEpochRollOverDoesNot) {
  auto recs =
      Run("step 5/10 loss 1\nstep 10/10 loss 0.9\nstep 2/10 loss 0.8\nstep 3/10 loss 0.7\n"
          "step 1/10 loss 1.5\n");
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs[2].run, 0) << "10/10 then 2/10 is the next loop";
  EXPECT_EQ(recs[4].run, 1) << "3 then 1 restarts";
  EXPECT_EQ(stats_.restarts, 1u);
}

TEST_F(TrackerTest, SummaryIsNotARecordButSetsEpoch) {
  Run("{'loss': 0.2, 'epoch': 2.9}\n"
      "{'train_runtime': 10.0, 'train_samples_per_second': 5.0, 'train_loss': 0.3, 'epoch': 3.0}\n"
      "100%|####| 300/300 [00:10<00:00, 30.0it/s]\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 3);
  EXPECT_DOUBLE_EQ(*latest_->v.epoch, 3.0);
  EXPECT_EQ(latest_->v.total_epochs, 3) << "derived from the fractional epoch at 100%";
}

TEST_F(TrackerTest, OnlyThePrimaryRankIsTracked) {
  Run("[rank0]: step 10 loss 2.0\n[rank1]: step 11 loss 2.1\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 10);
  EXPECT_EQ(latest_->rank, 0);
  EXPECT_EQ(stats_.other_rank_segments, 1u);
}

TEST_F(TrackerTest, KerasEvaluateAfterTheLastEpochIsNotTraining) {
  Run("Epoch 2/2\n100/100 [==========] - 3s 30ms/step - loss: 0.2\n20/20 [==========] - 0s "
      "5ms/step - loss: 0.25\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 2);
}

TEST_F(TrackerTest, FlushPendingEmitsWithoutLookahead) {
  MetricTracker t(classifier_, extractor_);
  int emitted = 0;
  t.SetSink([&](const ProgressRecord&) { ++emitted; });
  t.AddLine("step 1 loss 0.5", 1, 0);
  EXPECT_EQ(emitted, 0);  // waiting for look-ahead
  t.FlushPending();
  EXPECT_EQ(emitted, 1);
}

TEST_F(TrackerTest, RunTotalEpochsPrintedLaterCompleteTheLatest) {
  Run("epoch=0/global_step=10, CurrSamplesPerSec=50.0\n***** Evaluating, Epoch 1/1 *****\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.total_epochs, 1);
}

TEST(DeriveTotalEpochsTest, OnlyForFractionalEpochs) {
  ExtractedValues v;
  v.epoch = 1.5;
  v.epoch_fractional = true;
  v.step = 150;
  v.total_steps = 300;
  EXPECT_EQ(DeriveTotalEpochs(v), 3);
  v.epoch_fractional = false;
  EXPECT_FALSE(DeriveTotalEpochs(v).has_value());
}

}  // namespace
}  // namespace schedmate::tracker
