// The advised job (advised_job.h) and the estimate's JSON (advisor_json.h): resources from the
// metadata within range, the work of the fingerprint, which fields an LLM answer may replace.

#include "advisor/advised_job.h"

#include <gtest/gtest.h>

#include "advisor/advisor_json.h"

namespace schedmate::advisor {
namespace {

JobMetadata Meta() {
  JobMetadata m;
  m.entry = "jobs/train.sh";
  m.values = {{"num_gpus", 8}, {"num_nodes", 2}, {"model", "resnet50"}, {"dataset", "imagenet"}};
  m.sources = {{"num_gpus", "train.sh:3"},
               {"num_nodes", "train.sh:2"},
               {"model", "train.py:10"},
               {"dataset", "train.py:11"}};
  m.confidence = {{"num_gpus", 0.95}, {"num_nodes", 0.9}, {"model", 0.5}, {"dataset", 0.85}};
  return m;
}

TEST(AdvisedJobTest, ResourcesFromTheMetadataWithinRange) {
  JobMetadata m = Meta();
  JobRecord j = JobFromMetadata(m, "alice");
  EXPECT_EQ(j.id, "advise:jobs/train.sh");
  EXPECT_EQ(j.name, "train.sh");
  EXPECT_EQ(j.user, "alice");
  EXPECT_EQ(j.gpus, GpuAmount::Whole(8));
  EXPECT_EQ(j.nodes, 2);
  m.values["num_gpus"] = 2'000'000;  // more than any cluster: not a request to plan with
  m.values["num_nodes"] = 1e30;
  JobRecord big = JobFromMetadata(m, "alice");
  EXPECT_EQ(big.gpus, JobRecord{}.gpus);
  EXPECT_EQ(big.nodes, JobRecord{}.nodes);
}

TEST(AdvisedJobTest, FingerprintWorkNeedsStepsBatchAndGpus) {
  const JobMetadata m = Meta();
  JobRecord j = JobFromMetadata(m, "alice");
  j.iterations = 1000;
  j.batch_size = 64;
  JobFingerprint fp = FingerprintOfAdvisedJob(m, j);
  EXPECT_DOUBLE_EQ(fp.work, 1000.0 * 64 / 8);
  EXPECT_EQ(fp.workload, FingerprintOf(JobRecord{}, m.FingerprintText()).workload);
  j.batch_size = 0;
  EXPECT_DOUBLE_EQ(FingerprintOfAdvisedJob(m, j).work, 0);
}

TEST(AdvisedJobTest, AutoShowsOnlyTheUnsureFieldsAndKeepsTheSureOnes) {
  const MetadataMerge merge(Meta(), 0.8);
  EXPECT_TRUE(merge.Shown().Has("num_gpus"));
  EXPECT_FALSE(merge.Shown().Has("model"));  // 0.5 < 0.8: the LLM's to answer
  JobMetadata answer;
  answer.values = {{"num_gpus", 4}, {"model", "vit_b16"}, {"framework", "pytorch"}};
  answer.sources = {{"num_gpus", "llm"}, {"model", "llm"}, {"framework", "llm"}};
  const JobMetadata m = merge.Merge(answer);
  EXPECT_EQ(m.values.at("num_gpus"), 8);  // sure: the built-in value stays
  EXPECT_EQ(m.sources.at("num_gpus"), "train.sh:3");
  EXPECT_EQ(m.values.at("model"), "vit_b16");
  EXPECT_EQ(m.values.at("dataset"), "imagenet");  // sure as well
  EXPECT_EQ(m.values.at("framework"), "pytorch");
  // Confidences stay the built-in engine's, for the fields it answered.
  EXPECT_EQ(m.confidence.count("model"), 0u);
  EXPECT_EQ(m.confidence.count("framework"), 0u);
  EXPECT_DOUBLE_EQ(m.confidence.at("num_gpus"), 0.95);
}

TEST(AdvisedJobTest, UnsureFieldKeepsTheBuiltinValueWhenTheLlmGivesNone) {
  const MetadataMerge merge(Meta(), 0.8);
  const JobMetadata m = merge.Merge(JobMetadata{});
  EXPECT_EQ(m.values.at("model"), "resnet50");
  EXPECT_EQ(m.sources.at("model"), "train.py:10");
  EXPECT_DOUBLE_EQ(m.confidence.at("model"), 0.5);
}

TEST(AdvisedJobTest, WithoutAThresholdTheLlmAnswersEveryField) {
  const MetadataMerge merge(Meta(), std::nullopt);
  EXPECT_TRUE(merge.Shown().Has("model"));
  JobMetadata answer = Meta();
  answer.values["num_gpus"] = 4;
  answer.sources["num_gpus"] = "llm";
  const JobMetadata m = merge.Merge(answer);
  EXPECT_EQ(m.values.at("num_gpus"), 4);
  EXPECT_EQ(m.confidence.count("num_gpus"), 0u);
}

TEST(AdvisorJsonTest, EstimateWithItsEvidence) {
  DetailedEstimate d;
  d.estimate.duration = Duration::FromSecondsF(3600);
  d.estimate.low = Duration::FromSecondsF(1800);
  d.estimate.high = Duration::FromSecondsF(7200);
  d.estimate.confidence = 0.6;
  d.estimate.explanation = "2 similar jobs";
  d.tier = "workload";
  d.neighbours = {{"j1", "alice", 3000, 3300, 0.9, 100}, {"j2", "bob", 4000, 4000, 1, 50}};
  const nlohmann::json j = EstimateToJson(d, 12);
  EXPECT_DOUBLE_EQ(j["duration_s"].get<double>(), 3600);
  EXPECT_DOUBLE_EQ(j["low_s"].get<double>(), 1800);
  EXPECT_DOUBLE_EQ(j["high_s"].get<double>(), 7200);
  EXPECT_EQ(j["tier"], "workload");
  EXPECT_EQ(j["history_jobs"], 12);
  ASSERT_EQ(j["neighbours"].size(), 2u);
  EXPECT_EQ(j["neighbours"][0]["job_id"], "j1");
  EXPECT_DOUBLE_EQ(j["neighbours"][0]["scaled_s"].get<double>(), 3300);
  EXPECT_EQ(j["neighbours"][1]["finish_s"], 50);
  const nlohmann::json stored = StoredEvidenceToJson(d.neighbours);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[1], nlohmann::json({{"job_id", "j2"}, {"duration_s", 4000.0}}));
}

}  // namespace
}  // namespace schedmate::advisor
