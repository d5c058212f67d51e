#include "text/vector_index.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "text/hashing_embedder.h"

namespace schedmate::text {
namespace {

std::vector<float> RandomUnit(std::mt19937_64& rng, size_t d) {
  std::normal_distribution<float> n(0, 1);
  std::vector<float> v(d);
  double s = 0;
  for (float& x : v) {
    x = n(rng);
    s += x * x;
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(s));
  return v;
}

TEST(VectorIndexTest, ExactSearchOrdersBySimilarityThenId) {
  VectorIndex idx({.dimension = 2, .force_exact = true});
  ASSERT_TRUE(idx.Add(7, std::vector<float>{1, 0}).ok());
  ASSERT_TRUE(idx.Add(3, std::vector<float>{1, 0}).ok());
  ASSERT_TRUE(idx.Add(5, std::vector<float>{0, 1}).ok());
  auto r = idx.Search(std::vector<float>{1, 0}, 2);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].id, 3u);  // tie on similarity 1: lower id first
  EXPECT_EQ((*r)[1].id, 7u);
  EXPECT_FLOAT_EQ((*r)[0].similarity, 1.0f);
  auto all = idx.Search(std::vector<float>{0, 1}, 10);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, 5u);
}

TEST(VectorIndexTest, RejectsBadInput) {
  VectorIndex idx({.dimension = 3});
  EXPECT_EQ(idx.Add(1, std::vector<float>{1, 0}).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(idx.Add(1, std::vector<float>{1, 0, 0}).ok());
  EXPECT_EQ(idx.Add(1, std::vector<float>{1, 0, 0}).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(idx.Search(std::vector<float>{1}, 1).status().code(), StatusCode::kInvalidArgument);
  auto none = idx.Search(std::vector<float>{1, 0, 0}, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// The HNSW engine must agree with brute force on nearly all top-10 results.
TEST(VectorIndexTest, HnswAgreesWithExact) {
  const size_t d = 32, n = 3000, queries = 50, k = 10;
  std::mt19937_64 rng(42);
  VectorIndex exact({.dimension = d, .force_exact = true});
  VectorIndex approx({.dimension = d, .exact_threshold = 500});
  for (size_t i = 0; i < n; ++i) {
    auto v = RandomUnit(rng, d);
    ASSERT_TRUE(exact.Add(i, v).ok());
    ASSERT_TRUE(approx.Add(i, v).ok());
  }
  EXPECT_FALSE(exact.is_approximate());
  EXPECT_TRUE(approx.is_approximate());
  size_t hits = 0;
  for (size_t q = 0; q < queries; ++q) {
    auto v = RandomUnit(rng, d);
    auto a = exact.Search(v, k);
    auto b = approx.Search(v, k);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(b->size(), k);
    for (const auto& x : *a) {
      for (const auto& y : *b) hits += x.id == y.id;
    }
    // The best match itself must be found and similarities must be consistent.
    EXPECT_NEAR((*a)[0].similarity, (*b)[0].similarity, 0.05f);
  }
  EXPECT_GE(static_cast<double>(hits) / (queries * k), 0.9);
}

TEST(VectorIndexTest, FindsTextNeighbours) {
  HashingEmbedder e({.dimension = 128});
  VectorIndex idx({.dimension = 128});
  ASSERT_TRUE(idx.Add(1, e.EmbedOne("resnet50 imagenet 8 gpus")).ok());
  ASSERT_TRUE(idx.Add(2, e.EmbedOne("bert base squad finetune")).ok());
  ASSERT_TRUE(idx.Add(3, e.EmbedOne("llama 7b lora alpaca")).ok());
  auto r = idx.Search(e.EmbedOne("bert large squad"), 1);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].id, 2u);
}

}  // namespace
}  // namespace schedmate::text
