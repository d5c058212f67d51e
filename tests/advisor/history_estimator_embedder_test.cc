// HistoryEstimator with an external text::TextEmbedder (the server embedder's seam).
#include <gtest/gtest.h>

#include <stdexcept>

#include "advisor/history_estimator.h"
#include "testing/test_util.h"

namespace schedmate::advisor {
namespace {

// Delegates to a HashingEmbedder with the estimator's own settings, counting texts, so results
// must equal the built-in path; can be switched to fail or throw.
class FakeEmbedder final : public text::TextEmbedder {
 public:
  enum class Mode { kOk, kError, kThrow, kWrongDimension };
  explicit FakeEmbedder(size_t dimension) : inner_({.dimension = dimension}) {}
  std::string Name() const override { return "fake"; }
  size_t Dimension() const override { return inner_.Dimension(); }
  Result<std::vector<text::Embedding>> Embed(std::span<const std::string> texts) const override {
    ++calls;
    texts_seen += texts.size();
    if (mode == Mode::kError) return Status(StatusCode::kUnavailable, "server down");
    if (mode == Mode::kThrow) throw std::runtime_error("boom");
    auto out = inner_.Embed(texts);
    if (out.ok() && mode == Mode::kWrongDimension) out->back().resize(3);
    return out;
  }
  Mode mode = Mode::kOk;
  mutable int calls = 0;
  mutable size_t texts_seen = 0;

 private:
  text::HashingEmbedder inner_;
};

JobRecord Job(const std::string& id, const std::string& user, int64_t gpus,
              const std::string& model, int32_t batch, int64_t runtime) {
  JobRecord j;
  j.id = id;
  j.user = user;
  j.gpus = GpuAmount::Whole(gpus);
  j.cpus = 8;
  j.model = model;
  j.dataset = model.empty() ? "" : "ImageNet";
  j.batch_size = batch;
  j.duration = Duration::Seconds(runtime);
  return j;
}

void FeedAll(HistoryEstimator& e) {
  e.Observe(Job("same", "alice", 4, "ResNet50", 256, 100), SimTime::FromSeconds(1));
  e.Observe(Job("b128", "bob", 4, "ResNet50", 128, 300), SimTime::FromSeconds(2));
  e.Observe(Job("bert", "carol", 2, "BERT", 0, 400), SimTime::FromSeconds(3));
}

const JobRecord kQueries[] = {
    Job("q1", "alice", 4, "ResNet50", 256, 0), Job("q2", "alice", 2, "ResNet50", 128, 0),
    Job("q3", "erin", 4, "ResNet50", 128, 0),  Job("q4", "carol", 1, "T5", 0, 0),
    Job("q5", "erin", 3, "T5", 0, 0),
};

TEST(HistoryEstimatorEmbedderTest, SameEmbeddingGivesSameTiersAndNumbers) {
  HistoryEstimatorOptions o;
  FakeEmbedder fake(o.embedding_dimension);
  HistoryEstimator builtin(o), external(o, &fake);
  FeedAll(builtin);
  FeedAll(external);
  bool saw_similar = false;
  for (const JobRecord& q : kQueries) {
    SCOPED_TRACE(q.id);
    DetailedEstimate a = builtin.EstimateDetailed(q, FingerprintOf(q));
    DetailedEstimate b = external.EstimateDetailed(q, FingerprintOf(q));
    EXPECT_EQ(a.tier, b.tier);
    EXPECT_EQ(a.estimate.duration, b.estimate.duration);
    EXPECT_EQ(a.estimate.explanation, b.estimate.explanation);
    saw_similar = saw_similar || b.tier == "similar" || b.tier == "peers";
  }
  EXPECT_TRUE(saw_similar);
  EXPECT_GT(fake.calls, 0);
  // Each distinct fingerprint is embedded once, plus one query text per uncached estimate.
  EXPECT_LE(fake.texts_seen, 3u + std::size(kQueries));
}

TEST(HistoryEstimatorEmbedderTest, FailingEmbedderFallsBackAndSaysSo) {
  HistoryEstimatorOptions o;
  for (FakeEmbedder::Mode mode : {FakeEmbedder::Mode::kError, FakeEmbedder::Mode::kThrow,
                                  FakeEmbedder::Mode::kWrongDimension}) {
    FakeEmbedder fake(o.embedding_dimension);
    fake.mode = mode;
    HistoryEstimator builtin(o), external(o, &fake);
    FeedAll(builtin);
    FeedAll(external);
    JobRecord q = kQueries[1];  // similar tier
    DetailedEstimate a = builtin.EstimateDetailed(q, FingerprintOf(q));
    DetailedEstimate b = external.EstimateDetailed(q, FingerprintOf(q));
    ASSERT_EQ(a.tier, "similar");
    EXPECT_EQ(b.tier, "similar");
    EXPECT_EQ(b.estimate.duration, a.estimate.duration);
    EXPECT_NE(b.estimate.explanation.find("external embedder failed"), std::string::npos)
        << b.estimate.explanation;
    // Once the embedder recovers, the explanation no longer carries the note.
    fake.mode = FakeEmbedder::Mode::kOk;
    DetailedEstimate c = external.EstimateDetailed(q, FingerprintOf(q));
    EXPECT_EQ(c.estimate.explanation, a.estimate.explanation);
  }
}

// The external vectors have their own threshold; a fallback to hashing keeps the hashing one.
TEST(HistoryEstimatorEmbedderTest, ExternalThresholdAppliesOnlyToExternalVectors) {
  HistoryEstimatorOptions strict;
  strict.external_min_similarity = 1.01;  // no external neighbour can pass
  FakeEmbedder fake(strict.embedding_dimension);
  HistoryEstimator builtin, external(strict, &fake);
  FeedAll(builtin);
  FeedAll(external);
  JobRecord q = kQueries[1];  // similar tier with the default threshold
  ASSERT_EQ(builtin.EstimateDetailed(q, FingerprintOf(q)).tier, "similar");
  EXPECT_NE(external.EstimateDetailed(q, FingerprintOf(q)).tier, "similar");
  // The embedder fails: the hashing index answers with min_similarity (0.8), so "similar" again.
  fake.mode = FakeEmbedder::Mode::kError;
  HistoryEstimator failing(strict, &fake);
  FeedAll(failing);
  EXPECT_EQ(failing.EstimateDetailed(q, FingerprintOf(q)).tier, "similar");
  // Lowering only the external threshold lets a weaker neighbour in: carol's T5 job finds her
  // BERT job "similar" with threshold 0, not with the default.
  fake.mode = FakeEmbedder::Mode::kOk;
  HistoryEstimatorOptions loose;
  loose.external_min_similarity = 0.0;
  HistoryEstimator open(loose, &fake);
  FeedAll(open);
  JobRecord t5 = kQueries[3];
  EXPECT_NE(builtin.EstimateDetailed(t5, FingerprintOf(t5)).tier, "similar");
  EXPECT_EQ(open.EstimateDetailed(t5, FingerprintOf(t5)).tier, "similar");
}

}  // namespace
}  // namespace schedmate::advisor
