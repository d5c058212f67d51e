#include "tracker/line_classifier.h"

#include <gtest/gtest.h>

#include "tracker/metric_extractor.h"

namespace schedmate::tracker {
namespace {

class ClassifierTest : public ::testing::Test {
 protected:
  LineKind Classify(std::string_view text) {
    parser_.Parse(text, ps_);
    extractor_.Extract(ps_, v_);
    return classifier_.Classify(ps_, v_);
  }
  LineParser parser_;
  ParsedSegment ps_;
  ExtractedValues v_;
  BuiltinMetricExtractor extractor_;
  BuiltinLineClassifier classifier_;
};

TEST_F(ClassifierTest, ClassesOfTypicalLines) {
  struct Case {
    const char* line;
    LineClass cls;
  };
  const Case cases[] = {
      {"Traceback (most recent call last):", LineClass::kError},
      {"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.1 GiB total)",
       LineClass::kError},
      {"torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1275, timeout",
       LineClass::kError},
      {"/opt/lib/python3.10/site-packages/x.py:12: FutureWarning: `foo` is deprecated",
       LineClass::kWarning},
      {"[WARNING] the learning rate scheduler was stepped before the optimizer",
       LineClass::kWarning},
      {"INFO loading checkpoint shards from /models/llama", LineClass::kInfo},
      {"iter 120 | loss 2.31 | time 0.45s | lr 3.0e-4", LineClass::kProgress},
      {"Epoch 3:  45%|####5     | 450/1000 [01:23<01:40,  5.41it/s]", LineClass::kProgress},
      {"}", LineClass::kOther},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    EXPECT_EQ(LineClassName(Classify(c.line).cls), LineClassName(c.cls));
  }
}

TEST_F(ClassifierTest, RecordRolesForTheTracker) {
  EXPECT_TRUE(Classify("epoch 3 step 120/1000 loss 0.53").anchor);
  EXPECT_TRUE(Classify("Epoch 12/15").epoch_header);
  EXPECT_TRUE(Classify("[step=1010/15000,epoch=0]").step_header);
  EXPECT_TRUE(Classify("Timer: 0.6698").metric_only);
  EXPECT_TRUE(Classify("[val] epoch:162 miou:0.78").eval);
  EXPECT_TRUE(Classify("{'eval_loss': 0.23, 'eval_runtime': 1.4, 'epoch': 3.0}").eval);
  EXPECT_TRUE(
      Classify("Validation DataLoader 0: 100%|##########| 25/25 [00:02<00:00, 11.2it/s]").eval);
  EXPECT_TRUE(
      Classify("{'train_runtime': 332.9, 'train_samples_per_second': 54.1, 'train_loss': 0.04, "
               "'epoch': 10.0}")
          .summary);
  LineKind ck = Classify("Saved checkpoint ckpt/best.pt (epoch 9 @ 4312 updates, score 3.8)");
  EXPECT_FALSE(ck.anchor);
  EXPECT_TRUE(ck.checkpoint);
  // A warning glued onto a progress print stays progress.
  EXPECT_TRUE(
      Classify("iter 13990 || Loss: 0.0290 || /x/aug.py:238: VisibleDeprecationWarning: ragged")
          .anchor);
}

TEST_F(ClassifierTest, PrototypesGeneraliseToUnseenWording) {
  auto s = classifier_.PrototypeScores("Exception in thread worker-3: connection reset by peer");
  EXPECT_GT(s[static_cast<size_t>(LineClass::kError)], s[static_cast<size_t>(LineClass::kInfo)]);
  auto w = classifier_.PrototypeScores("DeprecationWarning: the old api will be removed soon");
  EXPECT_GT(w[static_cast<size_t>(LineClass::kWarning)],
            w[static_cast<size_t>(LineClass::kProgress)]);
}

TEST_F(ClassifierTest, TemplatesAreClusteredIntoFamilies) {
  LineKind a = Classify("iter 10 loss 0.5 on dataset alpha");
  LineKind b = Classify("iter 20 loss 0.4 on dataset beta");
  EXPECT_GE(a.family, 0);
  EXPECT_EQ(a.family, b.family);
}

}  // namespace
}  // namespace schedmate::tracker
