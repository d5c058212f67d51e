#include "tracker/metric_tracker.h"

#include <gtest/gtest.h>

#include <limits>
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

// Each indented line continues the record above it, so a long block is read whole (farther than
// the satellite window) and its epoch line is the record's epoch, not a new epoch header.
TEST_F(TrackerTest, IndentedBlockContinuesPastTheSatelliteWindow) {
  Run("[step=10/100]\n    a=1\n    b=2\n    c=3\n    d=4\n    e=5\n    f=6\n    g=7\n"
      "    train/loss=2.5\n    epoch=3\nother text\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 1);
  EXPECT_EQ(latest_->v.step, 10);
  ASSERT_TRUE(latest_->v.loss);
  EXPECT_DOUBLE_EQ(*latest_->v.loss, 2.5);
  EXPECT_EQ(latest_->v.epoch, 3);
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

TEST_F(TrackerTest, ConfiguredTotalStepsCompleteRecordsWithoutTheirOwn) {
  // HF Trainer prints its totals with thousands separators ({max_steps:,}) once, at the start.
  Run("  Num Epochs = 1,200\n  Total optimization steps = 24,000\n"
      "{'loss': 2.5, 'learning_rate': 5e-05, 'epoch': 0.5}\n"
      "{'loss': 2.25, 'learning_rate': 4.9e-05, 'epoch': 1.0}\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 4);
  EXPECT_EQ(latest_->v.total_steps, 24000);
  EXPECT_EQ(latest_->v.total_epochs, 1200);
}

TEST_F(TrackerTest, AbbreviatedCountsAreExpandedButNeverAnEpoch) {
  Run("train.py:300 step:12K smpl:384K ep:2K epch:8.25 loss:0.041 lr:1.0e-04 updt_s:0.312 "
      "data_s:0.020\n"
      "train.py:300 step:13K smpl:416K ep:2K epch:8.94 loss:0.039 lr:1.0e-04 updt_s:0.310 "
      "data_s:0.019\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 13000);
  ASSERT_TRUE(latest_->v.epoch);
  EXPECT_NEAR(*latest_->v.epoch, 8.94, 1e-9);
  ASSERT_TRUE(latest_->v.step_time_s);
  EXPECT_NEAR(*latest_->v.step_time_s, 0.310, 1e-9);
}

TEST_F(TrackerTest, ALineWhoseOnlyLossIsAnEvalLossIsEvaluation) {
  Run("step:99/100 train_time:9900ms step_avg:100.00ms\n"
      "step:100/100 train_time:10000ms step_avg:100.00ms\n"
      "step:100/100 val_loss:3.5012 train_time:10050ms step_avg:100.50ms\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 2);
  // The per-step average wins over the cumulative training time.
  ASSERT_TRUE(latest_->v.step_time_s);
  EXPECT_NEAR(*latest_->v.step_time_s, 0.1, 1e-9);
}

TEST_F(TrackerTest, ABarThatStartsAgainEndsTheEarlierLoop) {
  // Keras: the last epoch's bar, then model.evaluate()'s own 1/1 bar, then the test result.
  Run("Epoch 5/5\n1/1 [==============================] - 0s 10ms/step - loss: 1.5\n"
      "1/1 [==============================] - 0s 20ms/step - loss: 1.5 - val_loss: 2.5\n"
      "1/1 [==============================] - 0s 9ms/step - loss: 3.1\n"
      "Test loss: 3.1\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 3);
  EXPECT_EQ(latest_->v.epoch, 5);
}

TEST_F(TrackerTest, AnEpochHeaderWithOnlyALearningRateOpensTheEpoch) {
  Run("Epoch 1/2 (lr=0.01000)\n  Batch 0/30, Loss: 0.5000\n  Batch 20/30, Loss: 0.3000\n"
      "  Test Loss: 0.3000, ACC: 0.9100\n"
      "Epoch 2/2 (lr=0.01000)\n  Batch 0/30, Loss: 0.2000\n  Batch 10/30, Loss: 0.1000\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 7);
  EXPECT_EQ(latest_->v.epoch, 2);
  EXPECT_EQ(latest_->v.step, 10);
  EXPECT_EQ(latest_->run, 0);  // batch 0 after batch 20 in a new epoch is no restart
}

TEST_F(TrackerTest, RepeatedLossLinesWithoutAnyCounterAreProgress) {
  Run("model loaded\nloss:0.81, accuracy:0.61, recall:0.52\nloss:0.64, accuracy:0.70, "
      "recall:0.60\nloss:0.52, accuracy:0.77, recall:0.68\ndone\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 4);
  EXPECT_NEAR(*latest_->v.loss, 0.52, 1e-9);
  // One such line alone is not enough.
  Run("model loaded\nloss:0.81, accuracy:0.61\ndone\n");
  EXPECT_FALSE(latest_);
}

TEST_F(TrackerTest, TabSeparatedTableUnderAHeaderIsRead) {
  Run("train_loss\ttrain_err\tval_err\n9.50\t14.1\t13.9\n9.12\t13.8\t13.6\n"
      "8.97\t13.5\t13.4\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 4);
  EXPECT_NEAR(*latest_->v.loss, 8.97, 1e-9);
}

// Lines below follow the frameworks' own format strings (caffe solver.cpp, MaxText train.py,
// PaddleDetection's trainer); the values are made up.
TEST_F(TrackerTest, CaffeTestingPhaseIsNotTraining) {
  Run("I0501 10:00:08.1 1 solver.cpp:218] Iteration 4500 (11.3 iter/s, 8.85s/100 iters), "
      "loss = 0.0712\n"
      "I0501 10:00:08.1 1 solver.cpp:237]     Train net output #0: loss = 0.0712 (* 1 = 0.0712 "
      "loss)\n"
      "I0501 10:00:08.1 1 sgd_solver.cpp:105] Iteration 4500, lr = 0.00691\n"
      "I0501 10:00:10.0 1 solver.cpp:330] Iteration 5000, Testing net (#0)\n"
      "I0501 10:00:11.0 1 solver.cpp:397]     Test net output #0: accuracy = 0.9891\n"
      "I0501 10:00:11.0 1 solver.cpp:397]     Test net output #1: loss = 0.0321 (* 1 = 0.0321 "
      "loss)\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 4500);
  ASSERT_TRUE(latest_->v.loss);
  EXPECT_NEAR(*latest_->v.loss, 0.0712, 1e-9);
}

TEST_F(TrackerTest, MaxTextSecondsAndPerDeviceTokenRate) {
  Run("completed step: 99, seconds: 0.513, TFLOP/s/device: 123.4, Tokens/s/device: 4567.8, "
      "total_weights: 65536, loss: 7.223\n"
      "completed step: 100, seconds: 0.512, TFLOP/s/device: 123.5, Tokens/s/device: 4568.8, "
      "total_weights: 65536, loss: 7.123\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 100);
  ASSERT_TRUE(latest_->v.step_time_s);
  EXPECT_NEAR(*latest_->v.step_time_s, 0.512, 1e-9);
  ASSERT_TRUE(latest_->v.throughput);
  EXPECT_NEAR(latest_->v.throughput->value, 4568.8, 1e-9);
}

TEST_F(TrackerTest, PaddleBatchCostIsTheStepTime) {
  Run("[05/01 10:00:00] ppdet.engine INFO: Epoch: [3] [ 100/1000] learning_rate: 0.001000 loss: "
      "1.234 eta: 1:23:45 batch_cost: 0.5123 data_cost: 0.0012 ips: 15.61 images/s\n");
  ASSERT_TRUE(latest_);
  ASSERT_TRUE(latest_->v.step_time_s);
  EXPECT_NEAR(*latest_->v.step_time_s, 0.5123, 1e-9);
}

TEST_F(TrackerTest, LearningRateFinderBarIsNotTraining) {
  Run("Finding best initial lr: 100%|##########| 100/100 [00:10<00:00,  9.52it/s]\n"
      "Epoch 0:  40%|####      | 40/100 [00:05<00:07,  8.01it/s, loss=0.612, v_num=0]\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 2);
  Run("Finding best initial lr: 100%|##########| 100/100 [00:10<00:00,  9.52it/s]\n");
  EXPECT_FALSE(latest_);
}

TEST_F(TrackerTest, TqdmStateWithoutBarGlyphsHasItsCounter) {
  // Ultralytics' table rows end in tqdm's right part without the bar ("100% 4/4 [00:00<...]").
  Run("      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
      "       7/10      2.31G     0.9123      1.234      1.111         12        640: 100% 8/8 "
      "[00:02<00:00,  3.41it/s]\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 8);
  EXPECT_EQ(latest_->v.total_steps, 8);
  EXPECT_EQ(latest_->v.epoch, 7);
}

TEST_F(TrackerTest, LoguruLocationIsNotACounter) {
  Run("2024-01-02 10:00:00.123 | INFO     | pkg.core.trainer:after_iter:246 - epoch: 5/10, iter: "
      "30/50, iter_time: 0.090s, total_loss: 1.5, lr: 1.0e-03\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 30);
  EXPECT_EQ(latest_->v.total_steps, 50);
}

TEST_F(TrackerTest, CounterLineWithMetricsEndsAnEvaluationPhase) {
  Run("***** Evaluating perplexity, Epoch 1/2 *****\n'step':100, 'ppl': 24.1, 'seq_len': 1024\n"
      "micro_step=102, RunningAvgSamplesPerSec=12.1, CurrSamplesPerSec=9.2\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 3);
}

TEST_F(TrackerTest, OldDeepSpeedTimerLineIsEpochAndMicroStep) {
  // deepspeed/utils/timer.py before 0.8: "{epoch_count}/{micro_step_count}, RunningAvg...".
  Run("[2024-01-02 10:00:00,000] [INFO] [timer.py:198:stop] 0/1048, "
      "RunningAvgSamplesPerSec=12.06, CurrSamplesPerSec=9.22, MemAllocated=2.0GB, "
      "MaxMemAllocated=8.42GB\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.step, 1048);
  EXPECT_FALSE(latest_->v.total_steps);
  ASSERT_TRUE(latest_->v.throughput);
  EXPECT_NEAR(latest_->v.throughput->value, 9.22, 1e-9);
}

TEST_F(TrackerTest, EpochDurationLineAfterStepProgressIsNotTheNewest) {
  Run("step=5200, samples_per_sec=38.2, loss=0.5\nstep=5400, samples_per_sec=38.3, loss=0.4\n"
      "13 epoch at time 480.65s | reserved_length 197\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 2);
  Run("INFO:root:Epoch[3] Batch [100]\tSpeed: 512.34 samples/sec\tTrain-SmoothL1=0.81\n"
      "INFO:root:Epoch[3] Time cost=120.123\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 1);
  // MXNet's Speedometer names the loss function without the word "loss".
  ASSERT_TRUE(latest_->v.loss);
  EXPECT_NEAR(*latest_->v.loss, 0.81, 1e-9);
}

TEST_F(TrackerTest, StepHeaderThatEndsTheLogIsTheNewestStep) {
  Run("current step: 10th step\nbatch loss:0.52\ncurrent step: 11th step\nbatch loss:0.51\n"
      "current step: 12th step\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 5);
  EXPECT_EQ(latest_->v.step, 12);
  EXPECT_FALSE(latest_->v.loss);  // step 11's loss is not step 12's
}

TEST_F(TrackerTest, MmcvRunnerPrintsTheTotalEpochs) {
  Run("2024-01-02 10:00:00,000 - mmdet - INFO - workflow: [('train', 1)], max: 24 epochs\n"
      "2024-01-02 10:01:00,000 - mmdet - INFO - Epoch [1][50/500]\tlr: 2.000e-02, eta: 1:00:00, "
      "time: 0.250, data_time: 0.010, loss: 1.2\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->v.total_epochs, 24);
}

TEST_F(TrackerTest, DatasetSizesOfTrainAndValAreNoEvaluationPhase) {
  Run("Train samples: 3120, Val samples: 390\nEpoch 1/2 (lr=0.01)\n  Batch 0/30, Loss: 0.61\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 3);
  EXPECT_EQ(latest_->v.epoch, 1);
}

TEST_F(TrackerTest, TrainingBarRedrawnAfterTheEvalLoopStaysTraining) {
  // HF Trainer: the training bar completes, the final evaluation loop runs (its own bar), tqdm
  // redraws the training bar, then the eval results and the run summary follow.
  Run("100%|##########| 300/300 [10:00<00:00,  2.00s/it]\n"
      " 95%|#########5| 19/20 [00:02<00:00,  9.10it/s]\n"
      "100%|##########| 20/20 [00:02<00:00,  9.20it/s]\n"
      "100%|##########| 300/300 [10:01<00:00,  2.00s/it]\n"
      "{'eval_loss': 0.71, 'eval_runtime': 2.2, 'epoch': 3.0}\n"
      "{'train_runtime': 601.0, 'train_steps_per_second': 0.5, 'train_loss': 0.73, 'epoch': "
      "3.0}\n");
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 4);
  EXPECT_EQ(latest_->v.step, 300);
  // The run summary after it gives the epoch the run ended in, and so the total.
  EXPECT_EQ(latest_->v.epoch, 3);
  EXPECT_EQ(latest_->v.total_epochs, 3);
}

TEST_F(TrackerTest, TqdmRateThatTurnsIntoSecondsPerItemIsReadAsSuch) {
  // tqdm prints it/s while an iteration takes under a second and s/it after: same template
  // otherwise, so the unit must be part of it.
  Run(" 50%|#####     | 50/100 [00:10<00:10,  5.00it/s]\n"
      " 60%|######    | 60/100 [00:30<00:40,  1.50s/it]\n");
  ASSERT_TRUE(latest_);
  ASSERT_TRUE(latest_->v.step_time_s);
  EXPECT_NEAR(*latest_->v.step_time_s, 1.5, 1e-9);
  EXPECT_FALSE(latest_->v.step_time_derived);
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

// A log can print "epoch nan" or an overflowing epoch; neither gives a total.
TEST(DeriveTotalEpochsTest, NonFiniteEpochGivesNoTotal) {
  ExtractedValues v;
  v.epoch_fractional = true;
  v.step = 150;
  v.total_steps = 300;
  for (double e :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 1e300}) {
    v.epoch = e;
    EXPECT_FALSE(DeriveTotalEpochs(v).has_value()) << e;
  }
}

// Many bar lines of one loop wait for their look-ahead together; a bar whose counter starts
// again on a new line ends them all as training (the new loop, followed by eval output, is not).
TEST_F(TrackerTest, BarCounterStartingAgainConfirmsManyWaitingLines) {
  std::string log;
  for (int i = 1; i <= 400; ++i) {
    log += std::to_string(i) +
           "/1000 [==>......] - ETA: 9s - loss: " + std::to_string(2.0 - 0.001 * i) + "\n";
  }
  log += "1/1000 [>.........] - ETA: 30s - loss: 0.9\n";
  log += "{'eval_loss': 0.5, 'eval_runtime': 1.2, 'epoch': 1.0}\n";
  const auto records = Run(log);
  ASSERT_TRUE(latest_);
  EXPECT_EQ(latest_->line_no, 400);
  EXPECT_EQ(latest_->v.step, 400);
  EXPECT_EQ(records.size(), 400u);
}

}  // namespace
}  // namespace schedmate::tracker
