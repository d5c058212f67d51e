// StoredVectorEmbedder: cache hits, batching, dimension checks and the circuit breaker.
#include "advisor/stored_vector_embedder.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "testing/test_util.h"

namespace schedmate::advisor {
namespace {

// Answers a vector of `dim` components whose first component is the text's length; records
// every batch.
class CountingEmbedder final : public text::TextEmbedder {
 public:
  std::string Name() const override { return "counting"; }
  size_t Dimension() const override { return dim; }
  Result<std::vector<text::Embedding>> Embed(std::span<const std::string> texts) const override {
    batches.emplace_back(texts.begin(), texts.end());
    if (fail) return Status(StatusCode::kUnavailable, "connection refused; detail");
    if (throws) throw std::runtime_error("boom");
    std::vector<text::Embedding> out;
    for (const std::string& t : texts) {
      text::Embedding v(dim, 0.f);
      v[0] = static_cast<float>(t.size());
      out.push_back(v);
    }
    if (short_answer) out.pop_back();
    return out;
  }
  size_t dim = 4;
  bool fail = false, throws = false, short_answer = false;
  mutable std::vector<std::vector<std::string>> batches;
};

TEST(StoredVectorEmbedderTest, ServesPreloadedVectorsAndSendsOnlyNewTextsOnce) {
  CountingEmbedder inner;
  StoredVectorEmbedder e(inner, {.batch_size = 2});
  ASSERT_OK(e.Preload("known", {9, 9, 9, 9}));
  EXPECT_EQ(e.Dimension(), 4u);
  const std::vector<std::string> texts = {"known", "a", "bb", "a", "ccc", "known"};
  auto got = e.Embed(texts);
  ASSERT_OK(got.status());
  ASSERT_EQ(got->size(), texts.size());
  EXPECT_EQ((*got)[0], (text::Embedding{9, 9, 9, 9}));
  EXPECT_EQ((*got)[1][0], 1.f);
  EXPECT_EQ((*got)[3], (*got)[1]);
  EXPECT_EQ((*got)[4][0], 3.f);
  // "a", "bb", "ccc" once each, two per batch, in first-seen order.
  ASSERT_EQ(inner.batches.size(), 2u);
  EXPECT_EQ(inner.batches[0], (std::vector<std::string>{"a", "bb"}));
  EXPECT_EQ(inner.batches[1], (std::vector<std::string>{"ccc"}));
  EXPECT_EQ(e.sent(), 3u);
  EXPECT_EQ(e.requests(), 2u);
  EXPECT_EQ(e.hits(), 2u);
  // Everything is known now.
  ASSERT_OK(e.Embed(texts).status());
  EXPECT_EQ(inner.batches.size(), 2u);
  ASSERT_NE(e.Find("bb"), nullptr);
  EXPECT_EQ(e.Find("zz"), nullptr);
}

TEST(StoredVectorEmbedderTest, DimensionMismatchIsDataLossAndNamesReindex) {
  CountingEmbedder inner;
  inner.dim = 6;
  StoredVectorEmbedder e(inner);
  ASSERT_OK(e.Preload("stored", {1, 0, 0, 0}));
  EXPECT_EQ(e.Preload("other", {1, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(e.Preload("empty", {}).code(), StatusCode::kInvalidArgument);
  auto got = e.Embed(std::vector<std::string>{"stored", "new"});
  ASSERT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find("dimension mismatch: expected 4 components"),
            std::string::npos);
  EXPECT_NE(got.status().message().find("history reindex"), std::string::npos);
  EXPECT_EQ(e.Find("new"), nullptr);  // nothing of the bad answer is kept
  // Known texts are still served.
  ASSERT_OK(e.Embed(std::vector<std::string>{"stored"}).status());
}

TEST(StoredVectorEmbedderTest, FirstFailureTripsTheBreaker) {
  CountingEmbedder inner;
  inner.fail = true;
  StoredVectorEmbedder e(inner);
  EXPECT_EQ(e.Embed(std::vector<std::string>{"x"}).status().code(), StatusCode::kUnavailable);
  inner.fail = false;  // the server came back: still not asked again in this run
  EXPECT_EQ(e.Embed(std::vector<std::string>{"y"}).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(inner.batches.size(), 1u);
  EXPECT_FALSE(e.failure().ok());
}

TEST(StoredVectorEmbedderTest, ThrowsAndShortAnswersBecomeErrors) {
  CountingEmbedder a;
  a.throws = true;
  StoredVectorEmbedder ea(a);
  auto t = ea.Embed(std::vector<std::string>{"x"});
  EXPECT_EQ(t.status().code(), StatusCode::kInternal);
  EXPECT_NE(t.status().message().find("boom"), std::string::npos);
  CountingEmbedder b;
  b.short_answer = true;
  StoredVectorEmbedder eb(b);
  auto s = eb.Embed(std::vector<std::string>{"x", "y"});
  EXPECT_EQ(s.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(s.status().message().find("1 vectors for 2 texts"), std::string::npos);
}

}  // namespace
}  // namespace schedmate::advisor
