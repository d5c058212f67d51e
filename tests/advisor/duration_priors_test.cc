#include "advisor/duration_priors.h"

#include <gtest/gtest.h>

#include "advisor/history_estimator.h"
#include "advisor/job_metadata.h"
#include "testing/job_builder.h"

namespace schedmate::advisor {
namespace {

using testing::JobBuilder;

const DurationPriors& P() { return DurationPriors::Builtin(); }

TEST(DurationPriorsTest, BuiltinFileParses) {
  const DurationPriors& p = P();
  EXPECT_EQ(p.reference_gpu, "v100");
  EXPECT_EQ(p.reference_samples_per_s, 1200);
  ASSERT_TRUE(p.gpus.count("a100"));
  EXPECT_GT(p.gpus.at("a100").speed, 1);
  EXPECT_FALSE(p.families.empty());
  EXPECT_FALSE(p.datasets.empty());
}

// ResNet-50 on ImageNet for 90 epochs on 8 V100s in mixed precision: the measured 1200 img/s per
// GPU with 0.87 scaling (the source table's own 8-GPU rate is 8322 img/s: ~3.8 h of compute).
TEST(DurationPriorsTest, EpochsTimesDatasetOverMeasuredRate) {
  JobSemantics s;
  s.model = "resnet50";
  s.dataset = "imagenet";
  s.epochs = 90;
  s.precision = "amp";
  auto e = EstimateFromSemantics(P(), s, 8);
  ASSERT_TRUE(e.has_value());
  const double expected = 120 + 90.0 * 1281167 / (1200 * 8 * 0.87);
  EXPECT_NEAR(e->seconds, expected, 1);
  EXPECT_NE(e->explanation.find("assumed v100"), std::string::npos);
  // fp32 is 1 / 0.31 slower; an A100 2.06x faster; one GPU 8 x 0.87 slower.
  s.precision = "fp32";
  EXPECT_NEAR(EstimateFromSemantics(P(), s, 8)->seconds - 120, (expected - 120) / 0.31, 1);
  s.precision = "bf16";
  s.gpu_type = "a100";
  EXPECT_NEAR(EstimateFromSemantics(P(), s, 8)->seconds - 120, (expected - 120) / 2.06, 1);
  EXPECT_NEAR(EstimateFromSemantics(P(), s, 1)->seconds - 120, (expected - 120) / 2.06 * 6.96, 1);
  // The advisor derives ResNet-50's parameter count from its name: a vision family stays a
  // vision estimate (images/s), not 6 x params x tokens.
  s.params = 25.6e6;
  s.model_family = "resnet";
  EXPECT_NEAR(EstimateFromSemantics(P(), s, 1)->seconds - 120, (expected - 120) / 2.06 * 6.96, 1);
}

// A 7B transformer: 6 x params x tokens at 35% of the GPU's peak.
TEST(DurationPriorsTest, StepsTimesBatchForTransformers) {
  JobSemantics s;
  s.model_family = "llama";
  s.max_steps = 1000;
  s.global_batch = 64;
  s.sequence_length = 2048;
  s.params = 7e9;
  s.precision = "bf16";
  s.gpu_type = "a100";
  auto e = EstimateFromSemantics(P(), s, 8);
  ASSERT_TRUE(e.has_value());
  const double flops = 6 * 7e9 * 1000.0 * 64 * 2048;
  EXPECT_NEAR(e->seconds, 120 + flops / (312e12 * 0.35 * 8 * 0.87), 1);
  // Without a stated size: the family default (7e9) and sequence length, said so.
  s.params = 0;
  s.sequence_length = 0;
  e = EstimateFromSemantics(P(), s, 8);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->explanation.find("llama default"), std::string::npos);
  EXPECT_NE(e->explanation.find("tokens per sample (assumed)"), std::string::npos);
  // A stated parameter count is enough without a known family.
  JobSemantics unknown = s;
  unknown.model_family = "my-net";
  EXPECT_FALSE(EstimateFromSemantics(P(), unknown, 8).has_value());
  unknown.params = 1e9;
  EXPECT_TRUE(EstimateFromSemantics(P(), unknown, 8).has_value());
}

TEST(DurationPriorsTest, NothingToComputeFromGivesNothing) {
  JobSemantics s;
  s.model = "resnet50";
  s.dataset = "imagenet";
  EXPECT_FALSE(EstimateFromSemantics(P(), s, 1).has_value());  // no steps, no epochs
  s.epochs = 3;
  s.dataset = "my-private-set";
  EXPECT_FALSE(EstimateFromSemantics(P(), s, 1).has_value());  // epochs of an unknown size
  s.dataset = "CIFAR-100";
  auto e = EstimateFromSemantics(P(), s, 1);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->explanation.find("50000 samples (cifar100)"), std::string::npos);
  // 32-px images: the rate is capped at max_samples_per_s.
  s.image_size = 32;
  EXPECT_NEAR(EstimateFromSemantics(P(), s, 1)->seconds, 120 + 3 * 50000.0 / 20000, 1);
}

TEST(DurationPriorsTest, MalformedFilesNameFileAndLine) {
  auto r = DurationPriors::Parse("version: 1\nbogus: 3\n", "p.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("p.yaml:2"), std::string::npos);
  r = DurationPriors::Parse("version: 1\nmfu: 1.5\n", "p.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("p.yaml:2"), std::string::npos);
  r = DurationPriors::Parse("families:\n  - {name: x, kind: vision, batch: 8}\n", "p.yaml");
  ASSERT_FALSE(r.ok());  // gflops missing
  EXPECT_NE(r.status().message().find("p.yaml:"), std::string::npos);
  r = DurationPriors::Parse("version: 1\n", "p.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("is missing"), std::string::npos);
  r = DurationPriors::Parse("version: [1\n", "p.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("p.yaml:"), std::string::npos);
}

TEST(DurationPriorsTest, ParamCounts) {
  EXPECT_DOUBLE_EQ(ParseParamCount("7B"), 7e9);
  EXPECT_DOUBLE_EQ(ParseParamCount("~340M"), 340e6);
  EXPECT_DOUBLE_EQ(ParseParamCount("125m (derived)"), 125e6);
  EXPECT_DOUBLE_EQ(ParseParamCount("1.5b"), 1.5e9);
  EXPECT_DOUBLE_EQ(ParseParamCount("7e9"), 7e9);
  EXPECT_DOUBLE_EQ(ParseParamCount("dynamic"), 0);
  EXPECT_DOUBLE_EQ(ParseParamCount("-3B"), 0);
  EXPECT_DOUBLE_EQ(ParseParamCount("1e30"), 0);
}

TEST(DurationPriorsTest, FingerprintCarriesTheSemantics) {
  JobRecord j =
      JobBuilder().Gpus(8).Model("ResNet50").Dataset("ImageNet").Batch(2048).Steps(5000).Build();
  JobFingerprint fp = FingerprintOf(j, "model_family=resnet precision=fp16 gpu_type=a100 epochs=x");
  EXPECT_EQ(fp.semantics.max_steps, 5000);
  EXPECT_EQ(fp.semantics.global_batch, 2048);
  EXPECT_EQ(fp.semantics.model_family, "resnet");
  EXPECT_EQ(fp.semantics.gpu_type, "a100");
  EXPECT_EQ(fp.semantics.precision, "fp16");
  EXPECT_EQ(fp.semantics.epochs, 0);  // "x" is no number
  JobMetadata m;
  m.values["model"] = "bert-base-uncased";
  m.values["model_family"] = "bert";
  m.values["epochs"] = 3;
  m.values["dataset"] = "squad";
  m.values["params"] = "~110M";
  m.values["sequence_length"] = 384;
  JobFingerprint mf = FingerprintOf(JobBuilder().Gpus(1).Build(), m);
  EXPECT_EQ(mf.workload, m.FingerprintText());
  EXPECT_EQ(mf.semantics.epochs, 3);
  EXPECT_DOUBLE_EQ(mf.semantics.params, 110e6);
  EXPECT_EQ(mf.semantics.sequence_length, 384);
  EXPECT_EQ(mf.semantics.dataset, "squad");
}

// The estimator: with no finished job like it, the description gives the estimate (tier
// "semantic"), capped by the time limit; other users' jobs of the same size do not override it;
// the user's own history does.
TEST(DurationPriorsTest, EstimatorColdStartFromSemantics) {
  HistoryEstimator e;
  e.Observe(JobBuilder().Id("other").User("bob").Gpus(8).Runtime(50).Build(),
            SimTime::FromSeconds(50));
  JobRecord q =
      JobBuilder().Id("q").User("alice").Gpus(8).Model("ResNet50").Dataset("ImageNet").Build();
  JobFingerprint fp = FingerprintOf(q, "epochs=90 precision=amp");
  DetailedEstimate d = e.EstimateDetailed(q, fp);
  EXPECT_EQ(d.tier, "semantic");
  EXPECT_NEAR(d.estimate.duration.seconds_f(), 120 + 90.0 * 1281167 / (1200 * 8 * 0.87), 1);
  EXPECT_DOUBLE_EQ(d.estimate.confidence, 0.1);
  EXPECT_LT(d.p10_s, d.p50_s);
  EXPECT_GT(d.p90_s, d.p50_s);
  EXPECT_NE(d.estimate.explanation.find("90 epochs"), std::string::npos);
  // Without the description: anyone's 8-GPU job (tier class).
  EXPECT_EQ(e.EstimateDetailed(q, FingerprintOf(q)).tier, "class");
  // Capped by the time limit.
  JobRecord limited = q;
  limited.time_limit = Duration::Hours(2);
  d = e.EstimateDetailed(limited, FingerprintOf(limited, "epochs=90 precision=amp"));
  EXPECT_EQ(d.tier, "semantic");
  EXPECT_EQ(d.estimate.duration, Duration::Hours(2));
  EXPECT_NE(d.estimate.explanation.find("capped"), std::string::npos);
  // Switched off: the limit rule.
  HistoryEstimator off({.semantic_cold_start = false});
  EXPECT_EQ(off.EstimateDetailed(limited, FingerprintOf(limited, "epochs=90")).tier, "cold-start");
  // The user's own history wins.
  e.Observe(JobBuilder().Id("a1").User("alice").Gpus(8).Runtime(700).Build(),
            SimTime::FromSeconds(800));
  EXPECT_EQ(e.EstimateDetailed(q, fp).tier, "resources");
}

}  // namespace
}  // namespace schedmate::advisor
